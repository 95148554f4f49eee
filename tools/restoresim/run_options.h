// Options that decide a run, shared by explore and replay so that a printed replay line always
// parses back into the same RunConfig.
#ifndef RESTORESIM_TOOLS_RESTORESIM_RUN_OPTIONS_H_
#define RESTORESIM_TOOLS_RESTORESIM_RUN_OPTIONS_H_

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "absl/status/statusor.h"
#include "sim/runner.h"

namespace restoresim::tools {

struct RunOptions {
  std::string strategy = "pct:3";
  uint64_t steps_max = 0;
  uint32_t spurious_per_mille = sim::RunConfig{}.spurious_wakeup_per_mille;

  void AddTo(CLI::App& cmd);
  // Validates and converts; the seed is left for the caller.
  absl::StatusOr<sim::RunConfig> ToRunConfig() const;
};

}  // namespace restoresim::tools

#endif  // RESTORESIM_TOOLS_RESTORESIM_RUN_OPTIONS_H_
