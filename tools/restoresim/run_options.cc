#include "tools/restoresim/run_options.h"

#include <fmt/format.h>

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
  sim::RunConfig config;
  config.strategy = *spec;
  config.steps_max = steps_max;
  config.spurious_wakeup_per_mille = spurious_per_mille;
  return config;
}

}  // namespace restoresim::tools
