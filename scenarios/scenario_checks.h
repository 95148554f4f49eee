// The checks every runtime scenario ends with, in the oracle's message format
// ("[invariant:NAME] step N, WHO: ..."), so a sweep, the shrinker and a reader treat a
// scenario's own verdict like the oracle's:
//
//   liveness     after a fault-free tail phase, within a virtual-time bound, every partition's
//                active task is RUNNING on exactly one stream thread that wants it there,
//                every wanted standby is held by its restore thread and its checkpoint on disk
//                has caught up with the changelog's end, and every input partition is
//                committed to its end; a shutdown returns within its timeout.
//   final_state  every running store equals the fold of its changelog; after shutdown every
//                changelog folds to the reference model of the input processed on top of the
//                partition's baseline (ReferenceCounts), and every standby's store, read back
//                from its state directory, equals the fold of its changelog up to its
//                checkpoint, lagging the changelog's end by at most a bound.
//
// Call them from the program's main simulated thread. Observing a stream thread's task manager
// from there is safe: one simulated thread runs at a time, and the calls used here (running,
// in_restore, wanted_*, RunningStoreContents) are scheduling-point free reads.
#ifndef RESTORESIM_SCENARIOS_SCENARIO_CHECKS_H_
#define RESTORESIM_SCENARIOS_SCENARIO_CHECKS_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "core/runtime/stream_thread.h"
#include "core/sync/clock.h"
#include "scenarios/runtime_world.h"
#include "sim/program.h"

namespace restoresim::scenarios {

// The most records a scenario reads back from one log to check it.
inline constexpr size_t kLogRecordsMax = 10'000'000;

// Fails the run with "[invariant:<invariant>] step <N>, <who>: <message>".
[[noreturn]] void FailInvariant(sim::RunEnv& env, std::string_view invariant, std::string_view who,
                                const std::string& message);

// What a partition's changelog must fold to at the end: the counts `initial` (the fold of the
// changelog before the application ran, or when a crashed instance stopped) with the input
// from offset `input_from` on processed on top (ReferenceCounts).
struct Baseline {
  std::map<std::string, std::string> initial;
  int64_t input_from = 0;
  // The same for the latest store, in worlds whose topology has it.
  std::map<std::string, std::string> initial_latest;
};
using Baselines = std::map<int32_t, Baseline>;

// The baseline of every partition now: its changelog's fold, input from offset 0.
Baselines BaselinesNow(testing::RuntimeWorld& w, int32_t partitions);

// A stream thread as the checks see it: the thread and its instance's state directory
// ("<state.dir>/<application.id>"), where its tasks' directories live.
struct Member {
  StreamThread* thread = nullptr;
  std::string state_dir;
};

struct ConvergeOptions {
  TimeNs timeout_ns = 60 * kSecond;  // virtual time
  TimeNs check_every_ns = 50 * kMillisecond;
  bool require_standbys = true;  // every wanted standby held and caught up (its checkpoint)
};

// Liveness: waits until every partition's active task runs (see above) and its input is
// committed to its end, failing "[invariant:liveness]" past the timeout. Returns the virtual
// time it took.
TimeNs AwaitConverged(sim::RunEnv& env, testing::RuntimeWorld& w,
                      const std::vector<Member>& members, int32_t partitions,
                      const ConvergeOptions& options = {});
// The same wait, for a scenario step that needs a quiet moment (faults may still be on):
// returns whether it converged within the timeout, and fails nothing.
bool Converges(testing::RuntimeWorld& w, const std::vector<Member>& members, int32_t partitions,
               const ConvergeOptions& options = {});

// Final state, before shutdown: every running store equals the fold of its changelog (from
// its log start).
void CheckRunningStores(sim::RunEnv& env, testing::RuntimeWorld& w,
                        const std::vector<Member>& members);

// The standby tasks each member wants now (record them before shutting down).
std::vector<std::pair<Member, int32_t>> WantedStandbys(const std::vector<Member>& members);

// Runs `shutdown` (a Close or Shutdown taking `timeout_ns`) and checks it returned OK within
// its timeout of virtual time ("[invariant:liveness]"). Once everything is shut down, call
// w.oracle.CheckFinal() (nothing open, every event drained, every listener start closed).
void ShutdownWithin(sim::RunEnv& env, testing::RuntimeWorld& w, std::string_view who,
                    TimeNs timeout_ns, const std::function<absl::Status(TimeNs)>& shutdown);

// Final state, after shutdown: every changelog folds to its baseline's reference counts.
void CheckChangelogs(sim::RunEnv& env, testing::RuntimeWorld& w, int32_t partitions,
                     const Baselines& baselines);

// Final state, after shutdown: each standby's store on disk equals the fold of its changelog
// up to its checkpoint, and the checkpoint lags the changelog's end by at most
// `lag_records_max`.
void CheckStandbys(sim::RunEnv& env, testing::RuntimeWorld& w,
                   const std::vector<std::pair<Member, int32_t>>& standbys,
                   int64_t lag_records_max);

}  // namespace restoresim::scenarios

#endif  // RESTORESIM_SCENARIOS_SCENARIO_CHECKS_H_
