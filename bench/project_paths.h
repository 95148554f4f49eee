// Where the benchmark finds the project's scripts (tools/kafka/broker, tools/kafka/peer) and
// its build tree (where those scripts cache jars): the source and build roots meson compiled in,
// unless RESTORESIM_SOURCE_ROOT / RESTORESIM_BUILD_ROOT say otherwise.
#ifndef RESTORESIM_BENCH_PROJECT_PATHS_H_
#define RESTORESIM_BENCH_PROJECT_PATHS_H_

#include <string>

namespace restoresim::bench {

std::string SourceRoot();
std::string BuildRoot();
// Runs `command` with /bin/sh, returning its exit status and what it printed on stdout (its
// stderr goes to `stderr_path`, or is inherited when empty).
int RunCommand(const std::string& command, const std::string& stderr_path, std::string* out);
// Quoted for /bin/sh.
std::string ShellQuote(const std::string& s);

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_PROJECT_PATHS_H_
