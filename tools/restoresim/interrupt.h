// SIGINT and SIGTERM during a long command (a sweep, a zoo): the first of them raises a flag the
// work polls between runs, instead of killing the process, so that the command can stop within
// a run, report what it found so far, save its repro files and exit with kExitInterrupted. The
// handler only stores to lock-free atomics (async-signal-safe); a second signal does the same.
#ifndef RESTORESIM_TOOLS_RESTORESIM_INTERRUPT_H_
#define RESTORESIM_TOOLS_RESTORESIM_INTERRUPT_H_

#include <atomic>
#include <string>

namespace restoresim::tools {

inline constexpr int kExitInterrupted = 130;  // 128 + SIGINT, what shells report for Ctrl-C

// Installs the handlers (idempotent) and returns the flag they raise.
const std::atomic<bool>& InstallInterruptHandlers();
// "SIGINT" or "SIGTERM": the first signal that raised the flag ("" while none has).
std::string InterruptSignalName();

}  // namespace restoresim::tools

#endif  // RESTORESIM_TOOLS_RESTORESIM_INTERRUPT_H_
