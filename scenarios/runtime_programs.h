// The runtime as simulator programs, so `restoresim explore` sweeps the real restore-thread
// runtime: scenario.restore_then_process and scenario.rebalance_storm (here), the named
// scenario catalogue (catalogue_*.cc, each scenario registering itself: scenario_dsl.h; listed
// with what each must hold in docs/SCENARIOS.md) and the planted-bug programs bug.*
// (catalogue_bugs.cc).
#ifndef RESTORESIM_SCENARIOS_RUNTIME_PROGRAMS_H_
#define RESTORESIM_SCENARIOS_RUNTIME_PROGRAMS_H_

#include "absl/status/status.h"
#include "sim/program.h"

namespace restoresim::scenarios {

// Adds every scenario of the catalogue, then the bug programs (which run those scenarios).
absl::Status RegisterRuntimePrograms(sim::ProgramRegistry& registry);
// The bug programs (catalogue_bugs.cc): every base scenario must be in `registry` already.
absl::Status RegisterBugScenarios(sim::ProgramRegistry& registry);

}  // namespace restoresim::scenarios

#endif  // RESTORESIM_SCENARIOS_RUNTIME_PROGRAMS_H_
