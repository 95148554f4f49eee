// The skeleton every subcommand's Run* body follows (issue 20): parse (CLI11, into the
// command's options) -> validate (into a plan; a refusal is "restoresim NAME: reason" on
// standard error and exit 2) -> open outputs (checked before any work; "-" reserves standard
// output for the data) -> run (polling the interrupt flag) -> report -> exit code (130 when
// interrupted, else 0, 1 findings, 3 not reproduced; commands.h). A command supplies only its
// policy: how to validate, what to run, how to report.
//
// Thread-safety: a CommandRun belongs to the main thread of one command; the interrupt flag it
// hands out may be polled from any thread.
#ifndef RESTORESIM_TOOLS_RESTORESIM_COMMAND_RUN_H_
#define RESTORESIM_TOOLS_RESTORESIM_COMMAND_RUN_H_

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace restoresim::tools {

class CommandRun {
 public:
  // `name` as the user typed the command: "explore", "bench sim".
  explicit CommandRun(std::string_view name) : prefix_("restoresim " + std::string(name)) {}

  // "restoresim NAME: MESSAGE" on standard error; returns kExitUsage.
  int Usage(std::string_view message) const;
  // The same line for a status (its message only).
  int Usage(const absl::Status& status) const { return Usage(std::string(status.message())); }
  // "restoresim NAME: MESSAGE" on standard error, no exit implied (a note, an interruption).
  void Say(std::string_view message) const;

  // An output the command will write: refused before any work starts (CheckOutputPath); "-"
  // sends the command's own printing to standard error from now on. "" (none) is accepted.
  absl::Status OpenOutput(const std::string& path) const;

  // Installs the SIGINT/SIGTERM handlers (once) and returns the flag the work polls.
  const std::atomic<bool>& Stop();
  // Whether a signal raised the flag.
  bool StopRequested() const { return stop_ != nullptr && stop_->load(); }

  // The exit code of a finished (or interrupted) run: 130, else 1 on findings, else 0.
  static int ExitCode(bool interrupted, bool findings);

 private:
  std::string prefix_;
  const std::atomic<bool>* stop_ = nullptr;
};

// The skeleton itself: `validate` turns the options into a plan or refuses them (exit 2);
// `run` runs the plan and reports, returning the exit code. Both see the same CommandRun.
template <typename Options, typename Plan>
struct CommandSteps {
  std::function<absl::StatusOr<Plan>(const Options&, CommandRun&)> validate;
  std::function<int(const Options&, Plan&, CommandRun&)> run;
};

template <typename Options, typename Plan>
int RunCommand(std::string_view name, const CommandSteps<Options, Plan>& steps,
               const Options& options) {
  CommandRun command(name);
  absl::StatusOr<Plan> plan = steps.validate(options, command);
  if (!plan.ok()) return command.Usage(plan.status());
  return steps.run(options, *plan, command);
}

}  // namespace restoresim::tools

#endif  // RESTORESIM_TOOLS_RESTORESIM_COMMAND_RUN_H_
