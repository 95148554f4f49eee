#include "bench/project_paths.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <cstdlib>

namespace restoresim::bench {
namespace {

std::string FromEnvOr(const char* name, const char* compiled) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : compiled;
}

}  // namespace

std::string SourceRoot() { return FromEnvOr("RESTORESIM_SOURCE_ROOT", RESTORESIM_SOURCE_ROOT); }
std::string BuildRoot() { return FromEnvOr("RESTORESIM_BUILD_ROOT", RESTORESIM_BUILD_ROOT); }

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

int RunCommand(const std::string& command, const std::string& stderr_path, std::string* out,
               int64_t* max_rss_bytes) {
  if (max_rss_bytes != nullptr) *max_rss_bytes = -1;
  const std::string full =
      stderr_path.empty() ? command : command + " 2>>" + ShellQuote(stderr_path);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {  // the child: stdout into the pipe, then the shell
    dup2(fds[1], STDOUT_FILENO);
    execl("/bin/sh", "sh", "-c", full.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  char buffer[4096];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof(buffer))) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (out != nullptr) out->append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) return -1;
  }
  // The shell's and every descendant it waited for (the JVM it ran): the largest of them.
  if (max_rss_bytes != nullptr) *max_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  return WIFEXITED(status) ? WEXITSTATUS(status)
                           : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace restoresim::bench
