#include "bench/project_paths.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/util/check.h"

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

namespace {

// The process group of the command RunCommand waits for (0: none), for KillRunningCommand.
std::atomic<pid_t> g_running_group{0};
static_assert(std::atomic<pid_t>::is_always_lock_free, "read by a signal handler");
std::atomic<const std::atomic<bool>*> g_command_stop{nullptr};

// SIGTERM to the command's whole group (the shell, the script, the JVM it started); SIGKILL to
// what is left after kKillAfter polls of its pipe.
constexpr int kPollMs = 100;
constexpr int kKillAfter = 50;

void ReadUntilClosed(int fd, pid_t group, std::string* out) {
  const std::atomic<bool>* stop = g_command_stop.load();
  int polls_since_stop = -1;  // -1: not asked to stop
  char buffer[4096];
  for (;;) {
    if (stop != nullptr && stop->load() && polls_since_stop < 0) {
      kill(-group, SIGTERM);
      polls_since_stop = 0;
    }
    if (polls_since_stop >= 0 && ++polls_since_stop == kKillAfter) kill(-group, SIGKILL);
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    const int ready = poll(&p, 1, kPollMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    if (ready == 0) continue;
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out != nullptr) out->append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

void SetCommandStop(const std::atomic<bool>* stop) { g_command_stop.store(stop); }

void KillRunningCommand() {
  const pid_t group = g_running_group.load();
  if (group > 0) kill(-group, SIGTERM);
}

// The command's peak RSS as restoresim-rss-wrap wrote it to `path` (-1: none written, e.g. the
// command was killed with its wrapper).
int64_t ReadRssFigure(const std::string& path) {
  std::ifstream in(path);
  int64_t bytes = -1;
  if (!(in >> bytes) || bytes < 0) bytes = -1;
  std::remove(path.c_str());
  return bytes;
}

int RunCommand(const std::string& command, const std::string& stderr_path, std::string* out,
               int64_t* max_rss_bytes) {
  if (max_rss_bytes != nullptr) *max_rss_bytes = -1;
  const std::string full =
      stderr_path.empty() ? command : command + " 2>>" + ShellQuote(stderr_path);
  // Measured through the wrapper (rss_wrap.cc: wait4's own figure would be at least this
  // process's peak). Without the wrapper built, no figure rather than a wrong one.
  const std::string wrapper = BuildRoot() + "/bench/restoresim-rss-wrap";
  std::string rss_path;
  if (max_rss_bytes != nullptr && access(wrapper.c_str(), X_OK) == 0) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "restoresim-rss-XXXXXX").string();
    const int fd = mkstemp(pattern.data());
    if (fd >= 0) {
      close(fd);
      rss_path = pattern;
    }
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    if (!rss_path.empty()) std::remove(rss_path.c_str());
    return -1;
  }
  if (pid == 0) {  // the child: a process group of its own, stdout into the pipe, the shell
    setpgid(0, 0);
    dup2(fds[1], STDOUT_FILENO);
    if (!rss_path.empty()) {
      execl(wrapper.c_str(), "restoresim-rss-wrap", rss_path.c_str(), "--", "/bin/sh", "-c",
            full.c_str(), static_cast<char*>(nullptr));
    } else {
      execl("/bin/sh", "sh", "-c", full.c_str(), static_cast<char*>(nullptr));
    }
    _exit(127);
  }
  setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before a kill
  RS_CHECK(g_running_group.exchange(pid) == 0, "RunCommand is not reentrant");
  close(fds[1]);
  ReadUntilClosed(fds[0], pid, out);
  close(fds[0]);
  int status = 0;
  bool waited = true;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      waited = false;
      break;
    }
  }
  RS_CHECK(g_running_group.exchange(0) == pid, "RunCommand's group changed under it");
  const int64_t rss = rss_path.empty() ? -1 : ReadRssFigure(rss_path);
  if (!waited) return -1;
  // The shell's and every descendant it waited for (the JVM it ran): the largest of them.
  if (max_rss_bytes != nullptr) *max_rss_bytes = rss;
  return WIFEXITED(status) ? WEXITSTATUS(status)
                           : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace restoresim::bench
