// The runtime as simulator programs, so `restoresim explore` sweeps the real restore-thread
// runtime (first named scenarios; the full catalogue and the invariant oracle come with the
// scenarios issue):
//
//   scenario.restore_then_process  1-2 stream threads restore seed-sized changelogs under swarm
//                                  broker faults, then process seed-sized input; every count
//                                  must equal the reference model.
//   scenario.rebalance_storm       two stream threads through a seed-drawn sequence of clean
//                                  rebalances (recycle both ways, revoke and re-assign, moves);
//                                  every count must equal the reference model.
#ifndef RESTORESIM_SCENARIOS_RUNTIME_PROGRAMS_H_
#define RESTORESIM_SCENARIOS_RUNTIME_PROGRAMS_H_

#include "absl/status/status.h"
#include "sim/program.h"

namespace restoresim::scenarios {

absl::Status RegisterRuntimePrograms(sim::ProgramRegistry& registry);

}  // namespace restoresim::scenarios

#endif  // RESTORESIM_SCENARIOS_RUNTIME_PROGRAMS_H_
