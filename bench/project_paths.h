// Where the benchmark finds the project's scripts (tools/kafka/broker, tools/kafka/peer) and
// its build tree (where those scripts cache jars): the source and build roots meson compiled in,
// unless RESTORESIM_SOURCE_ROOT / RESTORESIM_BUILD_ROOT say otherwise.
#ifndef RESTORESIM_BENCH_PROJECT_PATHS_H_
#define RESTORESIM_BENCH_PROJECT_PATHS_H_

#include <atomic>
#include <cstdint>
#include <string>

namespace restoresim::bench {

std::string SourceRoot();
std::string BuildRoot();
// Runs `command` with /bin/sh, returning its exit status and what it printed on stdout (its
// stderr goes to `stderr_path`, or is inherited when empty). `max_rss_bytes`, when given,
// receives the peak resident set of the largest of the shell and the descendants it waited for
// (measured by <build>/bench/restoresim-rss-wrap, bench/rss_wrap.cc; -1 when the command could
// not run, was killed with the wrapper, or the wrapper is not built). The command runs in a
// process group of its own: once the flag given to SetCommandStop is set, the whole group gets
// SIGTERM (and SIGKILL about 5 s later), so an interrupted benchmark leaves no JVM behind;
// RunCommand then returns the command's status (128 + the signal). One command at a time (not
// reentrant).
int RunCommand(const std::string& command, const std::string& stderr_path, std::string* out,
               int64_t* max_rss_bytes = nullptr);
// The flag RunCommand polls (every 100 ms) while a command runs; null: none.
void SetCommandStop(const std::atomic<bool>* stop);
// SIGTERM to the process group of the command RunCommand is running, if any. Async-signal-safe:
// for a signal handler that is about to _exit (bench/local_broker.cc).
void KillRunningCommand();
// Quoted for /bin/sh.
std::string ShellQuote(const std::string& s);

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_PROJECT_PATHS_H_
