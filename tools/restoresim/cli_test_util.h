// For the tests that drive the restoresim binary: runs a shell command and collects its output
// and exit code.
#ifndef RESTORESIM_TOOLS_RESTORESIM_CLI_TEST_UTIL_H_
#define RESTORESIM_TOOLS_RESTORESIM_CLI_TEST_UTIL_H_

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace restoresim::tools::testing {

struct CliResult {
  int exit_code = -1;  // -1: not started, or ended by a signal
  std::string out;     // what the command wrote to its standard output
};

// Runs `command` with /bin/sh (redirect stderr in it to see it in `out`).
inline CliResult RunShell(const std::string& command) {
  CliResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace restoresim::tools::testing

#endif  // RESTORESIM_TOOLS_RESTORESIM_CLI_TEST_UTIL_H_
