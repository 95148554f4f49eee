// The restoresim command line: one function per subcommand, each registering its options on a
// CLI11 app and returning the process exit code when run.
//
// Exit codes (all subcommands; docs/USING.md, "Exit codes"): 0 success; 1 the runs found
// something unexpected (a failure of a correct program, a planted bug failing by no expected
// invariant, a failure that did not reproduce or could not be saved); 2 bad usage or input; 3
// a replay did not reproduce its repro file; 130 interrupted. A planted bug that no run failed
// on within the seeds given is said ("not found within N seeds") and is not a failure: a short
// sweep may miss a bug that needs more seeds (`restoresim zoo` and catalogue_test require
// finding each within a bound).
#ifndef RESTORESIM_TOOLS_RESTORESIM_COMMANDS_H_
#define RESTORESIM_TOOLS_RESTORESIM_COMMANDS_H_

#include <functional>

#include <CLI/CLI.hpp>

#include "sim/program.h"

namespace restoresim::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNotReproduced = 3;

// Every program the CLI knows: the scheduler's demos now, the runtime's scenarios later.
const sim::ProgramRegistry& Programs();

using Command = std::function<int()>;

Command AddExploreCommand(CLI::App& app);
Command AddMergeCommand(CLI::App& app);
Command AddReplayCommand(CLI::App& app);
Command AddScenariosCommand(CLI::App& app);
Command AddShrinkCommand(CLI::App& app);
Command AddBenchCommand(CLI::App& app);
Command AddConfigCommand(CLI::App& app);
Command AddZooCommand(CLI::App& app);
Command AddCheckCommand(CLI::App& app);
Command AddSoakCommand(CLI::App& app);
Command AddSoakInstanceCommand(CLI::App& app);

}  // namespace restoresim::tools

#endif  // RESTORESIM_TOOLS_RESTORESIM_COMMANDS_H_
