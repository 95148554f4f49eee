// The scheduler's own demo programs: small concurrent programs written against the ports, each
// with a planted bug of a classic kind, and a fixed twin that must never fail. The test suite
// checks that sweeps find every planted bug, that the printed line replays it, and that the
// fixed twins survive; tools/run sweeps them until the runtime's scenarios exist.
#ifndef RESTORESIM_SIM_DEMOS_DEMOS_H_
#define RESTORESIM_SIM_DEMOS_DEMOS_H_

#include "absl/status/status.h"
#include "sim/program.h"

namespace restoresim::sim {

absl::Status RegisterDemoPrograms(ProgramRegistry& registry);

// Per-file registration, called by RegisterDemoPrograms.
absl::Status RegisterLostUpdate(ProgramRegistry& registry);
absl::Status RegisterAbbaDeadlock(ProgramRegistry& registry);
absl::Status RegisterMissedNotification(ProgramRegistry& registry);
absl::Status RegisterOrderViolations(ProgramRegistry& registry);

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_DEMOS_DEMOS_H_
