// The restoresim command line: one function per subcommand, each registering its options on a
// CLI11 app and returning the process exit code when run.
//
// Exit codes (all subcommands): 0 success; 1 the runs found something unexpected (a failure
// of a correct program, or a planted bug not found); 2 bad usage or input; 3 a replay did not
// reproduce its repro file.
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

}  // namespace restoresim::tools

#endif  // RESTORESIM_TOOLS_RESTORESIM_COMMANDS_H_
