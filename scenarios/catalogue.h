// The named scenario catalogue (docs/SCENARIOS.md): programs "scenario.<name>" that run the
// real runtime (a Runtime, or a Fleet of StreamThreads) against the fake broker inside a
// RuntimeWorld, so the invariant oracle checks every event, and that end with the liveness and
// final-state checks of scenario_checks.h after a fault-free tail. Each scenario states in a
// header comment what happens and what must hold, and draws its parameters and events from the
// seed with env.Choose (0 = smallest, fewest, none, earliest), so the shrinker can minimise
// them; data contents come from env.random. The "bug.*" programs run a scenario with
// a mutation of the runtime installed (core/runtime/mutation.h; the table is
// catalogue_bugs.cc), which a sweep must find through the named invariants.
//
// One registration function per file, called by RegisterRuntimePrograms.
#ifndef RESTORESIM_SCENARIOS_CATALOGUE_H_
#define RESTORESIM_SCENARIOS_CATALOGUE_H_

#include <vector>

#include "absl/status/status.h"
#include "sim/program.h"

namespace restoresim::scenarios {

absl::Status RegisterRecycleScenarios(sim::ProgramRegistry& registry);    // catalogue_recycle
absl::Status RegisterReviveScenarios(sim::ProgramRegistry& registry);     // catalogue_revive
absl::Status RegisterRebalanceScenarios(sim::ProgramRegistry& registry);  // catalogue_rebalance
absl::Status RegisterLifecycleScenarios(sim::ProgramRegistry& registry);  // catalogue_lifecycle
absl::Status RegisterCrashScenarios(sim::ProgramRegistry& registry);      // catalogue_crash
absl::Status RegisterFaultScenarios(sim::ProgramRegistry& registry);      // catalogue_faults
absl::Status RegisterFailureScenarios(sim::ProgramRegistry& registry);  // catalogue_failures*
absl::Status RegisterSwarmScenario(sim::ProgramRegistry& registry);       // catalogue_swarm
absl::Status RegisterCorruptionScenarios(sim::ProgramRegistry& registry);  // catalogue_corruption
absl::Status RegisterWindowScenarios(sim::ProgramRegistry& registry);     // catalogue_windows
absl::Status RegisterCracScenarios(sim::ProgramRegistry& registry);       // catalogue_crac
absl::Status RegisterCracCloneScenarios(sim::ProgramRegistry& registry);  // catalogue_crac_clones
absl::Status RegisterBugScenarios(sim::ProgramRegistry& registry);        // catalogue_bugs
absl::Status RegisterAssignorScenarios(sim::ProgramRegistry& registry);   // catalogue_assignor
absl::Status RegisterPauseScenarios(sim::ProgramRegistry& registry);      // catalogue_pause

// Registers each program in turn, stopping at the first error.
absl::Status AddAll(sim::ProgramRegistry& registry, std::vector<sim::Program> programs);

}  // namespace restoresim::scenarios

#endif  // RESTORESIM_SCENARIOS_CATALOGUE_H_
