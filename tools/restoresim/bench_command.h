// `restoresim bench sim` and `restoresim bench restore`: the two benchmarks, each a subcommand
// of `bench` with its own options (bench_command.cc dispatches and refuses the rest).
#ifndef RESTORESIM_TOOLS_RESTORESIM_BENCH_COMMAND_H_
#define RESTORESIM_TOOLS_RESTORESIM_BENCH_COMMAND_H_

#include <CLI/CLI.hpp>

#include "tools/restoresim/commands.h"

namespace restoresim::tools {

struct BenchSubcommand {
  CLI::App* app = nullptr;  // owned by `bench`
  Command run;
};

// Each registers its subcommand on `bench`.
BenchSubcommand AddBenchSimCommand(CLI::App& bench);
BenchSubcommand AddBenchRestoreCommand(CLI::App& bench);

}  // namespace restoresim::tools

#endif  // RESTORESIM_TOOLS_RESTORESIM_BENCH_COMMAND_H_
