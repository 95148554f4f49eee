// The failure model, part 2: REPLACE_THREAD — a thread that fails is replaced and the new one
// takes its tasks over — while the failures last, and while the group rebalances. (Part 1,
// catalogue_failures.cc, has the header comment's rule on input.)
#include <fmt/format.h>

#include <memory>

#include "core/runtime/runtime.h"
#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/failing_store.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

StreamsUncaughtExceptionHandler ReplaceThread() {
  return [](const absl::Status&) { return StreamThreadExceptionResponse::kReplaceThread; };
}

// While it replaces threads the client never goes PENDING_ERROR or ERROR; once no failure is
// being handled (`settled`), every failure was answered by a replacement.
void CheckReplacing(RunEnv& env, Runtime& runtime, std::string_view when, bool settled) {
  const RuntimeState s = runtime.state();
  if (s == RuntimeState::kPendingError || s == RuntimeState::kError) {
    FailInvariant(env, "liveness", "runtime",
                  fmt::format("{} under REPLACE_THREAD {}", RuntimeStateName(s), when));
  }
  if (settled && runtime.threads_replaced() != runtime.threads_failed()) {
    FailInvariant(env, "liveness", "runtime",
                  fmt::format("{} threads failed, {} replaced, {}", runtime.threads_failed(),
                              runtime.threads_replaced(), when));
  }
}

// The tail's convergence checks look at the threads alive when they begin: first let a
// failure still being handled be answered (the client RUNNING: every live thread RUNNING, a
// replacement among them), up to a bound; past it the tail's own liveness check reports.
// (Kafka's RUNNING passes over a thread shutting down while another runs: wait for every
// thread to be RUNNING or DEAD, and every failure replaced.)
bool Settled(Runtime& runtime) {
  if (runtime.state() != RuntimeState::kRunning) return false;
  if (runtime.threads_failed() != runtime.threads_replaced()) return false;
  for (size_t i = 0; i < runtime.thread_count(); ++i) {
    const StreamThreadState s = runtime.thread(i).state();
    if (s != StreamThreadState::kRunning && s != StreamThreadState::kDead) return false;
  }
  return true;
}

// And the group settled: a lost member goes on processing until it sees the loss (a zombie,
// docs/SCENARIOS.md), so input must wait for that too.
void AwaitRunning(RuntimeWorld& w, Runtime& runtime) {
  const TimeNs deadline = w.clock.NowNs() + kConvergeNsMax;
  while (!(Settled(runtime) && w.broker.PeekGroupSettled("app")) && w.clock.NowNs() < deadline) {
    w.clock.SleepFor(10 * kMillisecond);
  }
}

// scenario.replaced_thread_takes_over
//   A Runtime (1-2 threads) with the handler answering REPLACE_THREAD restores 1-3 changelogs;
//   for a drawn phase (0-1 s) every batch restored into one drawn task's store fails with a
//   non-retryable error, so the thread that holds the task fails, closes its tasks dirty and
//   is replaced by a new thread (a fresh index), which joins the group and takes tasks over —
//   maybe the failing one again, failing again. Then the store works again.
//   Must hold: every failure is answered by a replacement and the client never goes
//   PENDING_ERROR or ERROR; the failed tasks are owned by one place and closed
//   (failed_tasks); replaced threads are DEAD and hold nothing; after the heal the live
//   threads run every task and the client is RUNNING, with exact counts.
//   Coverage: "cover/stream thread replaced after a failure".
void ReplacedThreadTakesOver(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int32_t threads = draw.Int<int32_t>("threads", 1, 2);
  const int records = draw.Int("records", 1, 60);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const int32_t failing = draw.Int<int32_t>(0, partitions - 1);
  draw.Note(fmt::format("failing=0_{}", failing));
  const TimeNs fault_phase_ns = draw.Ms("fault_phase_ms", 0, 1000, 100);
  const int input_records = draw.Int("input_records", 0, 19);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) w.WriteChangelog(q, records);
  const Baselines baselines = BaselinesNow(w, partitions);
  const RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  auto broken = std::make_shared<bool>(fault_phase_ns > 0);
  auto of_task = testing::StoresOfTask(failing);
  Runtime runtime(config, w.broker, w.clock, w.fs,
                  testing::FailingStoreOpener(w.LogStoreOpener(), [broken, of_task](
                                                                      const std::string& dir) {
                    return *broken && of_task(dir);
                  }));
  RS_CHECK(runtime.SetUncaughtExceptionHandler(ReplaceThread()).ok());
  RS_CHECK(runtime.Start().ok());
  w.clock.SleepFor(fault_phase_ns);
  CheckReplacing(env, runtime, "during the fault phase", /*settled=*/false);
  *broken = false;
  TraceMark("scenario", "store works again");
  AwaitRunning(w, runtime);  // before input: a failure still in flight closes dirty
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
  FinishRuntime(env, w, runtime, config, partitions, baselines);
  CheckReplacing(env, runtime, "at the end", /*settled=*/true);
}
RESTORESIM_SCENARIO({.name = "scenario.replaced_thread_takes_over",
                     .description = "REPLACE_THREAD: a thread failed by a store is replaced, "
                                    "the new one takes over",
                     .steps_hint = 10'000,
                     .steps_max = 3'000'000,
                     .body = ReplacedThreadTakesOver});

// scenario.task_timeout_mid_rebalance
//   A Runtime with 2 threads, task.timeout.ms drawn (200-1000 ms) and REPLACE_THREAD restores
//   1-3 changelogs; one drawn changelog partition has no leader for longer than the timeout or
//   about as long (the timeout minus 100 ms to plus 1 s), so its task fails with a timeout,
//   maybe again on the thread that takes it over. Around the moment the timeout expires (drawn
//   within 100 ms of it) the group loses a drawn member, so the task may be revoked, its CLOSE
//   in flight, exactly while its restore thread fails it.
//   Must hold: a task that fails while its CLOSE is in flight is still owned by one place and
//   closed once (failed_tasks), and never resumes; every failure is replaced; once the leader
//   is back the client converges RUNNING with exact counts.
//   Coverage: "cover/task failed: task.timeout.ms expired", "scenario/lose".
void TaskTimeoutMidRebalance(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int records = draw.Int("records", 1, 60);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const int32_t leaderless = draw.Int<int32_t>("leaderless", 0, partitions - 1);
  const int64_t timeout_ms = draw.Ms("task_timeout_ms", 200, 1000, 100) / kMillisecond;
  const TimeNs leaderless_ns =
      draw.Ms("leaderless_ms", timeout_ms - 100, timeout_ms + 1000, 100);
  const TimeNs lose_at_ns = draw.Ms("lose_at_ms", timeout_ms - 100, timeout_ms + 100, 10);
  const uint64_t lose_member = draw.Int<uint64_t>("lose_member", 0, 1);
  const int input_records = draw.Int("input_records", 0, 19);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) w.WriteChangelog(q, records);
  const Baselines baselines = BaselinesNow(w, partitions);
  RuntimeConfig config = CatalogueRuntimeConfig(/*threads=*/2, restore_batch);
  config.task_timeout_ms = timeout_ms;
  const TopicPartition tp = testing::Changelog(leaderless);
  const TimeNs start_ns = w.clock.NowNs();
  w.broker.TakeLeaderAway(tp, start_ns + leaderless_ns);
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  RS_CHECK(runtime.SetUncaughtExceptionHandler(ReplaceThread()).ok());
  RS_CHECK(runtime.Start().ok());
  w.clock.SleepUntil(start_ns + lose_at_ns);
  const std::vector<std::string> members = w.broker.Members("app");
  if (!members.empty()) {
    TraceMark("scenario", "lose " + members[lose_member % members.size()]);
    (void)w.broker.LoseMember("app", members[lose_member % members.size()]);
  }
  w.clock.SleepUntil(std::max(w.clock.NowNs(), start_ns + leaderless_ns));
  CheckReplacing(env, runtime, "while the leader was away", /*settled=*/false);
  AwaitRunning(w, runtime);  // before input: a failure still in flight closes dirty
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
  FinishRuntime(env, w, runtime, config, partitions, baselines);
  CheckReplacing(env, runtime, "at the end", /*settled=*/true);
}
RESTORESIM_SCENARIO({.name = "scenario.task_timeout_mid_rebalance",
                     .description = "task.timeout.ms expires while the group rebalances; "
                                    "REPLACE_THREAD",
                     .steps_hint = 10'000,
                     .steps_max = 3'000'000,
                     .body = TaskTimeoutMidRebalance});

}  // namespace

}  // namespace restoresim::scenarios
