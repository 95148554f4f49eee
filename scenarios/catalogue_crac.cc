// Checkpoint/restore (CRaC-style) stories: a Runtime with checkpoints on (runtime.h,
// EnableCheckpointRestore) is frozen by the fake notifier (crac_notifier.h) at a moment the
// seed chooses — while it restores, during a rebalance, during its shutdown, around a revive,
// twice in a row, with a resource failing the checkpoint half-way — while virtual time jumps
// and the broker moves on. Every story runs with the oracle on; checkpoint_restore checks the
// freeze itself (no connection open, no broker call, no thread progress while frozen; no
// shared identity; end offsets re-read), the other invariants what comes after it.
#include <fmt/format.h>

#include <memory>

#include "core/runtime/runtime.h"
#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/catalogue_crac.h"
#include "scenarios/crac_notifier.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {

using sim::RunEnv;
using testing::RuntimeWorld;

RuntimeConfig CracConfig(int32_t threads, int32_t restore_batch, const std::string& state_dir) {
  RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  config.state_dir = state_dir;
  return config;
}

void EnableCrac(RunEnv& env, Runtime& runtime, std::string instance) {
  // Instance "b" numbers its incarnations apart from "a" (one oracle sees both).
  const uint64_t first = instance == "b" ? 1'000'000 : 0;
  RS_CHECK(runtime
               .EnableCheckpointRestore({.instance = std::move(instance),
                                         .random = &env.random,
                                         .first_incarnation = first})
               .ok());
}

void FinishRuntimes(RunEnv& env, RuntimeWorld& w, const std::vector<Runtime*>& runtimes,
                    const std::vector<RuntimeConfig>& configs, int32_t partitions,
                    const Baselines& baselines) {
  std::vector<Member> members;
  for (size_t i = 0; i < runtimes.size(); ++i) {
    for (const Member& m : MembersOf(*runtimes[i], configs[i])) members.push_back(m);
  }
  AwaitConverged(env, w, members, partitions);
  CheckRunningStores(env, w, members);
  for (Runtime* r : runtimes) {
    ShutdownWithin(env, w, "runtime " + r->instance(), kShutdownTimeoutNs,
                   [&](TimeNs timeout_ns) { return r->Close(timeout_ns); });
  }
  w.oracle.CheckFinal();
  CheckChangelogs(env, w, partitions, baselines);
}

namespace {

struct Workload {
  int32_t partitions = 1;
  int32_t threads = 1;
  int records = 0;  // changelog records per partition
  int32_t restore_batch = 2;
  int input_records = 0;

  static Workload From(Draws& draw) {
    return {.partitions = draw.Int<int32_t>("partitions", 1, 3),
            .threads = draw.Int<int32_t>("threads", 1, 2),
            .records = draw.Int("records", 20, 219),
            .restore_batch = draw.Int<int32_t>("restore_batch", 2, 10),
            .input_records = draw.Int("input_records", 0, 19)};
  }
  Baselines Prepare(RunEnv& env, RuntimeWorld& w) const {
    for (int32_t q = 0; q < partitions; ++q) {
      w.WriteChangelog(q, records);
      ProduceInput(w, env.random, q, input_records);
    }
    return BaselinesNow(w, partitions);
  }
};

// One runtime, `cycles` notifications (each maybe none), then the tail.
void OneRuntimeWithNotifier(RunEnv& env, int cycles, TimeNs delay_ms_max,
                            const std::string& story) {
  Draws draw(env);
  const Workload l = Workload::From(draw);
  std::vector<FreezePlan> plans;
  for (int i = 0; i < cycles; ++i) {
    plans.push_back(FreezePlan::Draw(env, delay_ms_max, true));
    draw.Note("| " + plans.back().ToString());
  }
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, l.partitions);
  const Baselines baselines = l.Prepare(env, w);
  const RuntimeConfig config = CracConfig(l.threads, l.restore_batch, "/state");
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  EnableCrac(env, runtime, "");
  RS_CHECK(runtime.Start().ok());
  Notifier notifier(w, runtime, l.partitions, plans);
  const NotifierReport report = notifier.Join();
  if (report.frozen >= 2) TraceMark("cover", "frozen twice in a row");
  if (report.frozen >= 1) TraceMark("cover", fmt::format("frozen: {}", story));
  FinishRuntime(env, w, runtime, config, l.partitions, baselines);
}

// scenario.checkpoint_while_restoring
//   One Runtime (1-2 stream threads) restores long changelogs in small batches; the notifier
//   checkpoints it at a drawn moment of its restoration (0: no notification), the instance is
//   frozen for seconds to days while input is appended, changelog ends move on and retention
//   truncates below its checkpoints, then it is restored.
//   Must hold: every oracle invariant — at the freeze no connection open, no broker call and
//   no thread progress until the restore (checkpoint_restore), checkpoints never ahead of the
//   flushed data (checkpoint), a position below the truncated log start takes the corruption
//   path (store_contents and checkpoint would see a gap); after the restore every task runs
//   within the tail's bound with counts equal to the reference model.
void CheckpointWhileRestoring(RunEnv& env) {
  OneRuntimeWithNotifier(env, 1, 60, "while restoring");
}
RESTORESIM_SCENARIO({.name = "scenario.checkpoint_while_restoring",
                     .description = "a restoring runtime frozen for seconds to days while the "
                                    "broker moves on",
                     .steps_hint = 5'000,
                     .body = CheckpointWhileRestoring});

// scenario.checkpoint_twice_in_a_row
//   As above, with two notifications, the second at most 5 ms after the first restore.
//   Must hold: the same, across both cycles (each restore takes a fresh identity).
void CheckpointTwiceInARow(RunEnv& env) {
  Draws draw(env);
  const Workload l = Workload::From(draw);
  FreezePlan first = FreezePlan::Draw(env, 60, true);
  FreezePlan second = FreezePlan::Draw(env, 5, true);
  draw.Note("| " + first.ToString() + " | " + second.ToString());
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, l.partitions);
  const Baselines baselines = l.Prepare(env, w);
  const RuntimeConfig config = CracConfig(l.threads, l.restore_batch, "/state");
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  EnableCrac(env, runtime, "");
  RS_CHECK(runtime.Start().ok());
  // Both notified: the second cycle is the point of the story.
  first.delay_ns = std::max(first.delay_ns, kMillisecond);
  second.delay_ns = std::max(second.delay_ns, kMillisecond);
  Notifier notifier(w, runtime, l.partitions, {first, second});
  if (notifier.Join().frozen >= 2) TraceMark("cover", "frozen twice in a row");
  FinishRuntime(env, w, runtime, config, l.partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.checkpoint_twice_in_a_row",
                     .description = "two checkpoint/restore cycles, the second right after the "
                                    "first restore",
                     .steps_hint = 5'000,
                     .body = CheckpointTwiceInARow});

// scenario.checkpoint_during_shutdown
//   A Runtime restores; the notifier checkpoints it at a drawn moment while the program closes
//   it at another (either may come first).
//   Must hold: a checkpoint of an instance that is no longer RUNNING is abandoned (every
//   resource notified, then restored at once) and a Close during a cycle waits for its end;
//   Close returns within its timeout, nothing is left open; a restart over the same state
//   directory converges with counts equal to the reference model.
void CheckpointDuringShutdown(RunEnv& env) {
  Draws draw(env);
  const Workload l = Workload::From(draw);
  FreezePlan plan = FreezePlan::Draw(env, 40, true);
  plan.delay_ns = std::max(plan.delay_ns, kMillisecond);
  draw.Note("| " + plan.ToString() + " |");
  const TimeNs close_after_ns = draw.Ms("close_after_ms", 0, 39);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, l.partitions);
  const Baselines baselines = l.Prepare(env, w);
  const RuntimeConfig config = CracConfig(l.threads, l.restore_batch, "/state");
  {
    Runtime first(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
    EnableCrac(env, first, "");
    RS_CHECK(first.Start().ok());
    Notifier notifier(w, first, l.partitions, {plan});
    w.clock.SleepFor(close_after_ns);
    // A freeze of days may come first: the close's own timeout starts when it can run.
    ShutdownWithin(env, w, "runtime", kShutdownTimeoutNs + plan.frozen_ns,
                   [&](TimeNs t) { return first.Close(t); });
    const NotifierReport report = notifier.Join();
    if (report.abandoned > 0) TraceMark("cover", "checkpoint during shutdown abandoned");
    if (report.frozen > 0) TraceMark("cover", "frozen: before shutdown");
    w.oracle.CheckFinal();
  }
  Runtime again(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  RS_CHECK(again.Start().ok());
  FinishRuntime(env, w, again, config, l.partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.checkpoint_during_shutdown",
                     .description = "a checkpoint notification races the runtime's Close",
                     .steps_hint = 5'000,
                     .body = CheckpointDuringShutdown});

// scenario.checkpoint_around_revive
//   While a Runtime restores, retention truncates its changelogs (harmlessly) below their
//   positions: corruption, close dirty, wipe, revive. The notifier checkpoints it at a drawn
//   moment around that (before, during or after the revive), maybe truncating again while
//   frozen.
//   Must hold: every oracle invariant; a revived task's stores and checkpoint across the
//   freeze are the fold of its changelog; the tail converges to the reference model.
void CheckpointAroundRevive(RunEnv& env) {
  Draws draw(env);
  const Workload l = Workload::From(draw);
  FreezePlan plan = FreezePlan::Draw(env, 60, true);
  draw.Note("| " + plan.ToString() + " |");
  const TimeNs truncate_after_ns = draw.Ms("truncate_after_ms", 0, 29);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, l.partitions);
  const Baselines baselines = l.Prepare(env, w);
  const RuntimeConfig config = CracConfig(l.threads, l.restore_batch, "/state");
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  EnableCrac(env, runtime, "");
  RS_CHECK(runtime.Start().ok());
  Notifier notifier(w, runtime, l.partitions, {plan});
  w.clock.SleepFor(truncate_after_ns);
  if (!runtime.frozen()) {  // the frozen case truncates through the plan
    for (int32_t q = 0; q < l.partitions; ++q) {
      TruncateHarmlessly(w, q, HarmlessTruncationMax(w, q));
    }
  }
  if (notifier.Join().frozen > 0) TraceMark("cover", "frozen: around a revive");
  FinishRuntime(env, w, runtime, config, l.partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.checkpoint_around_revive",
                     .description = "a checkpoint around a corruption (truncation) and the revive "
                                    "it causes",
                     .steps_hint = 5'000,
                     .body = CheckpointAroundRevive});

// A user's resource in the runtime's context that refuses the first checkpoint.
class RefusingResource final : public CheckpointResource {
 public:
  std::string ResourceName() const override { return "user resource"; }
  absl::Status BeforeCheckpoint(CheckpointContext&) override {
    if (refusals_left_ == 0) return absl::OkStatus();
    --refusals_left_;
    TraceMark("cover", "a resource failed the checkpoint");
    return absl::UnavailableError("refuses to be checkpointed now");
  }
  absl::Status AfterRestore(CheckpointContext&) override { return absl::OkStatus(); }

 private:
  int refusals_left_ = 1;
};

// scenario.checkpoint_fails_half_way
//   A user resource in the runtime's context refuses the first checkpoint: registered before
//   Start (drawn) it is notified last, after every thread held and the connections closed (a
//   failure half-way); registered after Start it is notified first. The notifier then tries
//   again, and that checkpoint freezes the instance.
//   Must hold: the failed checkpoint is abandoned — every resource notified, then restored at
//   once, the instance running again (no freeze, nothing lost); the second cycle as in
//   checkpoint_while_restoring; the tail converges to the reference model.
void CheckpointFailsHalfWay(RunEnv& env) {
  Draws draw(env);
  const Workload l = Workload::From(draw);
  FreezePlan failing = FreezePlan::Draw(env, 40, false);
  FreezePlan second = FreezePlan::Draw(env, 40, true);
  failing.delay_ns = std::max(failing.delay_ns, kMillisecond);
  second.delay_ns = std::max(second.delay_ns, kMillisecond);
  draw.Note("| " + failing.ToString() + " | " + second.ToString() + " |");
  // Notified last (half-way) is the quiet answer.
  const bool last = draw.Fixed("refuser_notified_last", !draw.Bool());
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, l.partitions);
  const Baselines baselines = l.Prepare(env, w);
  const RuntimeConfig config = CracConfig(l.threads, l.restore_batch, "/state");
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  EnableCrac(env, runtime, "");
  RefusingResource refuser;
  if (last) RS_CHECK(runtime.checkpoint_context().Register(&refuser).ok());
  RS_CHECK(runtime.Start().ok());
  if (!last) RS_CHECK(runtime.checkpoint_context().Register(&refuser).ok());
  Notifier notifier(w, runtime, l.partitions, {failing, second});
  const NotifierReport report = notifier.Join();
  if (report.abandoned != 1 || report.frozen != 1) {
    FailInvariant(env, "checkpoint_restore", "notifier",
                  fmt::format("{} abandoned and {} frozen, not 1 and 1", report.abandoned,
                              report.frozen));
  }
  FinishRuntime(env, w, runtime, config, l.partitions, baselines);
  runtime.checkpoint_context().Unregister(&refuser);
}
RESTORESIM_SCENARIO({.name = "scenario.checkpoint_fails_half_way",
                     .description = "a resource refuses the first checkpoint (abandoned), the "
                                    "second freezes",
                     .steps_hint = 5'000,
                     .body = CheckpointFailsHalfWay});

}  // namespace

}  // namespace restoresim::scenarios
