// The failure model (docs/DESIGN.md, "Kafka fidelity"): tasks that fail in the restore thread —
// a store that keeps failing, a changelog whose leader never comes back (task.timeout.ms) — and
// what the stream-uncaught-exception handler makes of the thread that fails with them.
//
// No input is produced until the failures are over: a thread that fails closes its tasks dirty,
// and processed, uncommitted input would then be counted twice by design under at-least-once
// (as with a lost member: docs/SCENARIOS.md), which the exact-count checks would take for a bug.
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

// Waits (virtual time, up to `bound_ns`) until `done`; returns whether it happened.
bool WaitFor(RuntimeWorld& w, TimeNs bound_ns, const std::function<bool()>& done) {
  const TimeNs deadline = w.clock.NowNs() + bound_ns;
  while (!done()) {
    if (w.clock.NowNs() >= deadline) return false;
    w.clock.SleepFor(10 * kMillisecond);
  }
  return true;
}

void ExpectState(RunEnv& env, Runtime& runtime, RuntimeState want, std::string_view when) {
  if (runtime.state() != want) {
    FailInvariant(env, "liveness", "runtime",
                  fmt::format("{} {}, not {}", when, RuntimeStateName(runtime.state()),
                              RuntimeStateName(want)));
  }
}

// The first runtime failed (ERROR): it closes at once and is gone (its restore threads'
// readers with it), and a new one over the same state directory, with the fault gone,
// converges with exact counts.
void RestartAndFinish(RunEnv& env, RuntimeWorld& w, std::unique_ptr<Runtime> failed,
                      const RuntimeConfig& config, int32_t partitions, const Baselines& baselines,
                      int input_records) {
  // (Its threads are DEAD already: Close joins them, promptly.)
  ShutdownWithin(env, w, "runtime", kShutdownTimeoutNs,
                 [&](TimeNs timeout_ns) { return failed->Close(timeout_ns); });
  ExpectState(env, *failed, RuntimeState::kError, "after Close of a failed runtime:");
  failed.reset();
  w.oracle.CheckFinal();
  Runtime again(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  RS_CHECK(again.Start().ok());
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
  FinishRuntime(env, w, again, config, partitions, baselines);
}

// scenario.store_keeps_failing
//   A Runtime (1-2 threads) restores 1-3 changelogs; every batch restored into one drawn task's
//   store fails with a non-retryable error. The handler is the default (SHUTDOWN_CLIENT) or,
//   drawn, SHUTDOWN_APPLICATION.
//   Must hold: the task fails instead of retrying forever — its thread fails, closes it dirty,
//   and the client goes PENDING_ERROR then ERROR within a bound; nothing processes once it is
//   PENDING_ERROR (stopped_processing); the failed task is owned by one place and closed
//   (failed_tasks); every oracle invariant; a new runtime with a working store converges with
//   exact counts.
//   Coverage: "cover/restoration failed: task-scoped store error", "cover/client shut down
//   after a thread failed".
void StoreKeepsFailing(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int32_t threads = draw.Int<int32_t>("threads", 1, 2);
  const int records = draw.Int("records", 1, 60);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const int32_t failing = draw.Int<int32_t>(0, partitions - 1);
  draw.Note(fmt::format("failing=0_{}", failing));
  const bool application = draw.Pick("handler", {"default", "SHUTDOWN_APPLICATION"}) == 1;
  const int input_records = draw.Int("input_records", 0, 19);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) w.WriteChangelog(q, records);
  const Baselines baselines = BaselinesNow(w, partitions);
  const RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  auto owned = std::make_unique<Runtime>(
      config, w.broker, w.clock, w.fs,
      testing::FailingStoreOpener(w.LogStoreOpener(), testing::StoresOfTask(failing)));
  Runtime& runtime = *owned;
  if (application) {
    RS_CHECK(runtime
                 .SetUncaughtExceptionHandler([](const absl::Status&) {
                   return StreamThreadExceptionResponse::kShutdownApplication;
                 })
                 .ok());
  }
  RS_CHECK(runtime.Start().ok());
  if (!WaitFor(w, 30 * kSecond, [&] { return runtime.state() == RuntimeState::kError; })) {
    FailInvariant(env, "liveness", "runtime",
                  fmt::format("a store that keeps failing left the runtime {} for 30 s",
                              RuntimeStateName(runtime.state())));
  }
  for (size_t i = 0; i < runtime.thread_count(); ++i) {
    if (runtime.thread(i).state() != StreamThreadState::kDead) {
      FailInvariant(env, "liveness", runtime.thread(i).name(),
                    fmt::format("{} while its client is ERROR",
                                StreamThreadStateName(runtime.thread(i).state())));
    }
  }
  RestartAndFinish(env, w, std::move(owned), config, partitions, baselines, input_records);
}
RESTORESIM_SCENARIO({.name = "scenario.store_keeps_failing",
                     .description = "a store that fails every restored batch: its task fails, "
                                    "the client goes to ERROR",
                     .steps_hint = 8'000,
                     .body = StoreKeepsFailing});

// scenario.changelog_leader_never_comes_back
//   A Runtime (1-2 threads) with task.timeout.ms drawn (0, or 100-2000 ms) restores 1-3
//   changelogs; before it starts, the leader of one drawn changelog partition goes away for
//   good, so that task's end offsets can never be read (every read fails, retryably).
//   Must hold: the task fails with a timeout once task.timeout.ms ran out without progress (not
//   before, and not long after), its thread fails, and the default handler takes the client to
//   ERROR; every oracle invariant; once the leader is back, a new runtime converges with exact
//   counts.
//   Coverage: "cover/task failed: task.timeout.ms expired", "cover/task failed at once:
//   task.timeout.ms is 0".
void ChangelogLeaderNeverComesBack(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int32_t threads = draw.Int<int32_t>("threads", 1, 2);
  const int records = draw.Int("records", 1, 60);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const int32_t leaderless = draw.Int<int32_t>("leaderless", 0, partitions - 1);
  const int64_t timeout_ms = draw.Fixed(  // 0: task.timeout.ms off
      "task_timeout_ms", draw.OneIn(4) ? int64_t{0} : draw.Ms(100, 2000, 100) / kMillisecond);
  const int input_records = draw.Int("input_records", 0, 19);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) w.WriteChangelog(q, records);
  const Baselines baselines = BaselinesNow(w, partitions);
  RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  config.task_timeout_ms = timeout_ms;
  const TopicPartition tp = testing::Changelog(leaderless);
  w.broker.TakeLeaderAway(tp, fakes::FakeBroker::kLeaderNeverBack);
  auto owned = std::make_unique<Runtime>(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  Runtime& runtime = *owned;
  const TimeNs started_ns = w.clock.NowNs();
  RS_CHECK(runtime.Start().ok());
  // Bound: the timeout, plus a restore loop's poll and backoff, plus the client's shutdown.
  const TimeNs bound_ns = timeout_ms * kMillisecond + 10 * kSecond;
  if (!WaitFor(w, bound_ns, [&] { return runtime.state() == RuntimeState::kError; })) {
    FailInvariant(env, "liveness", "runtime",
                  fmt::format("{} ms after task.timeout.ms of {} ms the runtime is {}, not ERROR",
                              bound_ns / kMillisecond, timeout_ms,
                              RuntimeStateName(runtime.state())));
  }
  if (w.clock.NowNs() - started_ns < timeout_ms * kMillisecond) {
    FailInvariant(env, "liveness", "runtime",
                  fmt::format("failed after {} ms, before task.timeout.ms ({} ms) ran out",
                              (w.clock.NowNs() - started_ns) / kMillisecond, timeout_ms));
  }
  w.broker.TakeLeaderAway(tp, 0);  // back (for the new runtime)
  TraceMark("scenario", "leader back " + tp.ToString());
  RestartAndFinish(env, w, std::move(owned), config, partitions, baselines, input_records);
}
RESTORESIM_SCENARIO({.name = "scenario.changelog_leader_never_comes_back",
                     .description = "a changelog without a leader for good: task.timeout.ms "
                                    "expires, the task fails, the client goes to ERROR",
                     .steps_hint = 8'000,
                     .body = ChangelogLeaderNeverComesBack});

}  // namespace

}  // namespace restoresim::scenarios
