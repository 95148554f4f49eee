#include "bench/project_paths.h"

#include <sys/wait.h>

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

int RunCommand(const std::string& command, const std::string& stderr_path, std::string* out) {
  const std::string full =
      stderr_path.empty() ? command : command + " 2>>" + ShellQuote(stderr_path);
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    if (out != nullptr) out->append(buffer, n);
  }
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace restoresim::bench
