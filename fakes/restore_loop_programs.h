// Simulator programs that exercise the fake broker end to end, so sweeps, replays and timelines
// cover the transport and its faults before the runtime exists:
//
//   fake.restore_loop            a producer writes a changelog while a restorer, retrying
//                                retryable errors, reads it to its end offsets; the restored
//                                contents must equal the fold of the log. Faults are drawn per
//                                seed (swarm) as recorded schedule choices.
//   fake.restore_loop_no_retry   the same restorer giving up on the first retryable error and
//                                declaring itself restored: a planted bug that faults expose.
#ifndef RESTORESIM_FAKES_RESTORE_LOOP_PROGRAMS_H_
#define RESTORESIM_FAKES_RESTORE_LOOP_PROGRAMS_H_

#include "absl/status/status.h"
#include "sim/program.h"

namespace restoresim::fakes {

absl::Status RegisterRestoreLoopPrograms(sim::ProgramRegistry& registry);

}  // namespace restoresim::fakes

#endif  // RESTORESIM_FAKES_RESTORE_LOOP_PROGRAMS_H_
