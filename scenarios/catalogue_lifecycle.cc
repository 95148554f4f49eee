// The runtime's lifecycle around restoration: a task with nothing to restore runs while
// another restores (per-task readiness), and shutdowns in the middle of restoration or of a
// rebalance return within their timeout and leave nothing open; a restart then picks up from
// the checkpoints they wrote.
#include <fmt/format.h>

#include <memory>

#include "core/runtime/runtime.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

// Whether task `id` is RUNNING on one of `members`.
bool Running(const std::vector<Member>& members, TaskId id) {
  for (const Member& m : members) {
    if (m.thread->task_manager().running().contains(id)) return true;
  }
  return false;
}

// One close that may time out (the oracle's client_close judges it): marks what it returned.
void CloseOnce(Runtime& runtime, TimeNs timeout_ns) {
  const absl::Status s = runtime.Close(timeout_ns);
  if (absl::IsDeadlineExceeded(s)) {
    TraceMark("scenario", fmt::format("close timed out, client {}",
                                      RuntimeStateName(runtime.state())));
  } else {
    TraceMark("scenario", fmt::format("close returned {}", absl::StatusCodeToString(s.code())));
  }
}

// scenario.no_restore_task_with_restoring_task
//   One Runtime, one stream thread polling every 5 ms, two tasks assigned together: 0_0 with
//   an empty changelog (nothing to restore) and 0_1 with a long one restored in small batches
//   (at least 60 restore polls). Both have input, and 0_0's keeps arriving (a record every 2 ms)
//   until 0_1 runs: the stream thread processes while the other task restores.
//   Must hold: 0_0 is RUNNING before 0_1 finished restoring (a restored task does not wait for
//   the others: per-task readiness, the point of a separate restore thread); the restore
//   thread's events are handled within two stream loops even while input flows
//   (liveness_bounds); then both run with counts equal to the reference model.
void NoRestoreTaskWithRestoringTask(RunEnv& env) {
  Draws draw(env);
  const int long_records = draw.Int("long_records", 300, 599);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 5);
  const int input_records = draw.Int("input_records", 1, 20);
  draw.NoteParams();
  constexpr int32_t kPartitions = 2;
  RuntimeWorld w(/*faults=*/false, kPartitions);
  w.WriteChangelog(1, long_records);
  for (int32_t q = 0; q < kPartitions; ++q) ProduceInput(w, env.random, q, input_records);
  const Baselines baselines = BaselinesNow(w, kPartitions);
  RuntimeConfig config = CatalogueRuntimeConfig(1, restore_batch);
  config.poll_ms = 5;
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  RS_CHECK(runtime.Start().ok());
  const std::vector<Member> members = MembersOf(runtime, config);
  const TimeNs deadline = w.clock.NowNs() + kConvergeNsMax;
  bool short_ran = false;
  constexpr int kFedRecordsMax = 1000;
  for (int fed = 0; !Running(members, TaskId{0, 1}); ++fed) {
    short_ran = short_ran || Running(members, TaskId{0, 0});
    if (w.clock.NowNs() >= deadline) break;  // AwaitConverged reports it below
    if (fed < kFedRecordsMax && fed % 2 == 0) ProduceInput(w, env.random, 0, 1);
    w.clock.SleepFor(1 * kMillisecond);
  }
  if (!short_ran) {
    FailInvariant(env, "liveness", "0_0",
                  fmt::format("not RUNNING before 0_1 finished restoring {} records: a task "
                              "with nothing to restore waited for another's restoration",
                              long_records));
  }
  FinishRuntime(env, w, runtime, config, kPartitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.no_restore_task_with_restoring_task",
                     .description = "a task with nothing to restore runs while another, assigned "
                                    "with it, still restores",
                     .steps_hint = 8'000,
                     .body = NoRestoreTaskWithRestoringTask});

// scenario.shutdown_mid_restoration
//   A Runtime (1-2 stream threads) restores long changelogs in small batches and is closed at
//   a drawn moment of its restoration (0: right after it started), with a drawn timeout.
//   Then a new Runtime over the same state directory restarts from the checkpoints the close
//   wrote and processes the input.
//   Must hold: Close returns OK within its timeout of virtual time, the runtime is
//   NOT_RUNNING, nothing is left open (the oracle's end-of-run checks); the restart converges
//   with counts equal to the reference model.
void ShutdownMidRestoration(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int32_t threads = draw.Int<int32_t>("threads", 1, 2);
  const int records = draw.Int("records", 50, 249);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const int input_records = draw.Int("input_records", 0, 19);
  const TimeNs close_after_ns = draw.Ms("close_after_ms", 0, 29);
  const TimeNs timeout_ns = draw.Ms("close_timeout_ms", 500, 2000, 500);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, input_records);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  const RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  {
    Runtime first(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
    RS_CHECK(first.Start().ok());
    w.clock.SleepFor(close_after_ns);
    ShutdownWithin(env, w, "runtime", timeout_ns, [&](TimeNs t) { return first.Close(t); });
    w.oracle.CheckFinal();
    if (first.state() != RuntimeState::kNotRunning) {
      FailInvariant(
          env, "liveness", "runtime",
          fmt::format("state {} after Close, not NOT_RUNNING", RuntimeStateName(first.state())));
    }
  }
  Runtime again(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  RS_CHECK(again.Start().ok());
  FinishRuntime(env, w, again, config, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.shutdown_mid_restoration",
                     .description = "Close during restoration returns within its timeout; a "
                                    "restart resumes from the checkpoints",
                     .steps_hint = 5'000,
                     .body = ShutdownMidRestoration});

// scenario.shutdown_mid_rebalance
//   Instances a and b go through a drawn generation, then a second one (recycles and moves),
//   and shut down a drawn moment after it (0: before any member polled it), cleanly, with a
//   drawn timeout. A new fleet over the same state directories then gets a drawn generation
//   and processes the rest of the input.
//   Must hold: the shutdown returns OK within its timeout, nothing is left open; after the
//   restart every task runs with counts equal to the reference model.
void ShutdownMidRebalance(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 4);
  const int records = draw.Int("records", 0, 59);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 20);
  const int input_records = draw.Int("input_records", 0, 19);
  const bool standbys = draw.Bool("standbys");
  const TimeNs settle_ns = draw.Ms("settle_ms", 0, 180, 20);
  const TimeNs shutdown_after_ns = draw.Ms("shutdown_after_ms", 0, 9);
  const TimeNs timeout_ns = draw.Ms("shutdown_timeout_ms", 500, 2000, 500);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, input_records);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  uint64_t incarnations_used = 0;
  {
    Fleet fleet(w, {.restore_max_poll_records = restore_batch});
    fleet.Start();
    RS_CHECK(fleet.Rebalance(fleet.Draw(env, partitions, standbys)).ok());
    w.clock.SleepFor(settle_ns);
    for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
    RS_CHECK(fleet.Rebalance(fleet.Draw(env, partitions, standbys)).ok());
    w.clock.SleepFor(shutdown_after_ns);
    ShutdownWithin(env, w, "fleet", timeout_ns, [&](TimeNs t) { return fleet.Shutdown(t); });
    w.oracle.CheckFinal();
    incarnations_used = fleet.incarnations_issued();
  }
  Fleet restarted(
      w, {.first_incarnation = incarnations_used, .restore_max_poll_records = restore_batch});
  restarted.Start();
  RS_CHECK(restarted.Rebalance(restarted.Draw(env, partitions, standbys)).ok());
  FinishFleet(env, w, restarted, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.shutdown_mid_rebalance",
                     .description = "two instances shut down right after a generation; a "
                                    "restarted fleet converges",
                     .steps_hint = 4'000,
                     .body = ShutdownMidRebalance});

// scenario.close_times_out_then_closes_again
//   A Runtime (one stream thread) runs every task; the leader of partition 0's changelog goes
//   away for away_ms, input arrives, and the group revokes every task: the thread commits
//   inside its poll and retries while the leader is away. Then Close with a drawn timeout
//   shorter than the leader's absence, maybe a second short one (a double close), and a long
//   one; a new Runtime over the same state directory restarts and processes the input.
//   Must hold: client_close — every close returns by its timeout; one that times out leaves
//   the client PENDING_SHUTDOWN (Kafka's close(timeout) returning false), and one that returns
//   OK has every stream thread DEAD, so a close after one that timed out waits for the thread;
//   the last close leaves the client NOT_RUNNING; the restart converges with exact counts.
void CloseTimesOutThenClosesAgain(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 2);
  const int records = draw.Int("records", 0, 59);
  const int input_records = draw.Int("input_records", 1, 19);
  const TimeNs away_ns = draw.Ms("away_ms", 1500, 6000, 500);
  const TimeNs first_timeout_ns = draw.Ms("first_timeout_ms", 100, 1000, 100);
  const bool twice = draw.Bool("second_short_close");
  const TimeNs second_timeout_ns = draw.Ms("second_timeout_ms", 0, 500, 100);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) w.WriteChangelog(q, records);
  const Baselines baselines = BaselinesNow(w, partitions);
  const RuntimeConfig config = CatalogueRuntimeConfig(1, /*restore_max_poll_records=*/10);
  {
    Runtime first(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
    RS_CHECK(first.Start().ok());
    const std::vector<Member> members = MembersOf(first, config);
    AwaitConverged(env, w, members, partitions);
    w.broker.TakeLeaderAway(testing::Changelog(0), w.clock.NowNs() + away_ns);
    for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
    w.clock.SleepFor(500 * kMillisecond);  // processed; partition 0's changelog cannot flush
    const std::string member = w.broker.Members(config.application_id).at(0);
    RS_CHECK(w.broker.Rebalance(config.application_id, {{member, testing::Assign({}, {})}}).ok());
    w.clock.SleepFor(200 * kMillisecond);
    TraceMark("scenario", "close while a revocation's commit retries");
    CloseOnce(first, first_timeout_ns);
    if (twice) CloseOnce(first, second_timeout_ns);
    ShutdownWithin(env, w, "runtime", kShutdownTimeoutNs, [&](TimeNs t) { return first.Close(t); });
    w.oracle.CheckFinal();
    if (first.state() != RuntimeState::kNotRunning) {
      FailInvariant(env, "liveness", "runtime",
                    fmt::format("state {} after the last Close, not NOT_RUNNING",
                                RuntimeStateName(first.state())));
    }
  }
  Runtime again(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  RS_CHECK(again.Start().ok());
  FinishRuntime(env, w, again, config, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.close_times_out_then_closes_again",
                     .description = "a close times out while a revocation's commit retries, "
                                    "maybe a second one, then a close waits for the thread",
                     .steps_hint = 6'000,
                     .body = CloseTimesOutThenClosesAgain});

}  // namespace

}  // namespace restoresim::scenarios
