#include "tools/restoresim/run_options.h"

#include <fmt/format.h>

#include "sim/repro.h"

namespace restoresim::tools {

void RunOptions::AddTo(CLI::App& cmd) {
  cmd.add_option("--strategy", strategy,
                 "scheduling strategy: random | pos | pct:D | pct:D:K (depth D, step estimate K; "
                 "pos: partial order sampling)")
      ->capture_default_str();
  cmd.add_option("--steps-max", steps_max,
                 "scheduling decisions before a run fails as a livelock (0: scenario default)")
      ->capture_default_str();
  cmd.add_option("--spurious-per-mille", spurious_per_mille,
                 "chance in 1000 that a condition-variable wait wakes spuriously")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
}

absl::StatusOr<sim::RunConfig> RunOptions::ToRunConfig() const {
  absl::StatusOr<sim::StrategySpec> spec = sim::StrategySpec::Parse(strategy);
  if (!spec.ok()) return spec.status();
  // Refused before any run, not found out when the first failure's repro could not be saved,
  // after the sweep (issue 25).
  if (steps_max > sim::kReproRunStepsMax) {
    return absl::InvalidArgumentError(fmt::format(
        "--steps-max {} is above {}: a repro file holds at most {} choices and every step "
        "records one, so a failing run that long could not be saved",
        steps_max, sim::kReproRunStepsMax, sim::kReproChoicesMax));
  }
  sim::RunConfig config;
  config.strategy = *spec;
  config.steps_max = steps_max;
  config.spurious_wakeup_per_mille = spurious_per_mille;
  return config;
}

}  // namespace restoresim::tools
