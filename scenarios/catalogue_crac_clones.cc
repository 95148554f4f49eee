// Checkpoint/restore with more than one instance: a rebalance around the freeze, two clones
// restored from one image, and the differential (a freeze of an unchanged world changes
// nothing a user can see).
#include <fmt/format.h>

#include <memory>

#include "core/runtime/runtime.h"
#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/catalogue_crac.h"
#include "scenarios/crac_notifier.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

// scenario.checkpoint_during_rebalance
//   Instances a and b (one stream thread each, own state directories) of one application; a
//   starts and restores, b joins a drawn moment later (a rebalance), and a is checkpointed at
//   another drawn moment: its member leaves with its connections, so the group gives b
//   everything while a is frozen; at the restore a rejoins as a new member, reports its old
//   partitions lost, and the next generation gives some back.
//   Must hold: every oracle invariant (checkpoint_restore: no call of a's clients while frozen);
//   at the end every task runs on a or b with counts equal to the reference model.
void CheckpointDuringRebalance(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 2, 4);
  const int records = draw.Int("records", 20, 169);
  const int32_t batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const TimeNs b_after_ns = draw.Ms("b_after_ms", 0, 39);
  FreezePlan plan = FreezePlan::Draw(env, 80, true);
  // b runs on while a is frozen, at a loop per poll: a freeze of hours would be millions of
  // steps. 100 ms to 2 s is long enough for b to take everything and a to come back.
  plan.frozen_ns = draw.Ms(100, 2000, 100);
  draw.Note("| " + plan.ToString());
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, 10);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  const RuntimeConfig ca = CracConfig(1, batch, "/state-a");
  const RuntimeConfig cb = CracConfig(1, batch, "/state-b");
  Runtime a(ca, w.broker, w.clock, w.fs, w.LogStoreOpener());
  Runtime b(cb, w.broker, w.clock, w.fs, w.LogStoreOpener());
  EnableCrac(env, a, "a");
  EnableCrac(env, b, "b");
  RS_CHECK(a.Start().ok());
  Notifier notifier(w, a, partitions, {plan});
  w.clock.SleepFor(b_after_ns);
  RS_CHECK(b.Start().ok());
  if (notifier.Join().frozen > 0) TraceMark("cover", "frozen: during a rebalance");
  FinishRuntimes(env, w, {&a, &b}, {ca, cb}, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.checkpoint_during_rebalance",
                     .description = "a second instance joins while the first is checkpointed and "
                                    "frozen",
                     .steps_hint = 5'000,
                     .steps_max = 3'000'000,
                     .body = CheckpointDuringRebalance});

// scenario.clone_restore
//   Instance a runs and restores; at a drawn moment it is checkpointed, and its image — the
//   state directory, copied, and its process identity — becomes a second instance b, started
//   from the image (frozen: it connects nothing before its restore). Time jumps, the broker
//   moves on, and both are restored, in a drawn order, and run side by side in one group.
//   (What is not cloned: a's in-memory state. A C++ object graph of running threads cannot be
//   duplicated; b starts from a's disk image with a's identity, which is what can collide.)
//   Must hold: no wire client id is used by both (checkpoint_restore: each restore draws a
//   fresh process identity); every other oracle invariant; the tail converges over both with
//   counts equal to the reference model.
void CloneRestore(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 4);
  const int records = draw.Int("records", 20, 169);
  const int32_t batch = draw.Int<int32_t>("restore_batch", 2, 10);
  FreezePlan plan = FreezePlan::Draw(env, 60, true);
  const bool b_first = draw.Bool("b_first");
  draw.Note("| " + plan.ToString());
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, 10);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  const RuntimeConfig ca = CracConfig(1, batch, "/state-a");
  const RuntimeConfig cb = CracConfig(1, batch, "/state-b");
  Runtime a(ca, w.broker, w.clock, w.fs, w.LogStoreOpener());
  EnableCrac(env, a, "a");
  RS_CHECK(a.Start().ok());
  w.clock.SleepFor(plan.delay_ns);
  std::unique_ptr<Runtime> b;
  absl::Status s = FreezeAndRestore(w, a, partitions, plan, [&]() {
    CopyTree(w.fs, "/state-a", "/state-b");
    b = std::make_unique<Runtime>(cb, w.broker, w.clock, w.fs, w.LogStoreOpener());
    RS_CHECK(b->EnableCheckpointRestore({.instance = "b",
                                         .process_id = a.process_id(),
                                         .random = &env.random,
                                         .from_image = true,
                                         .first_incarnation = 1'000'000})
                 .ok());
    RS_CHECK(b->Start().ok());
    RS_CHECK(b->frozen(), "an instance started from an image is frozen");
    if (b_first) RS_CHECK(b->Restore().ok());
  });
  RS_CHECK(s.ok(), "the clone's checkpoint failed: {}", s.ToString());
  if (!b_first) RS_CHECK(b->Restore().ok());
  TraceMark("cover", "two clones restored from one image");
  FinishRuntimes(env, w, {&a, b.get()}, {ca, cb}, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.clone_restore",
                     .description = "two instances restored from one checkpoint image run side by "
                                    "side",
                     .steps_hint = 5'000,
                     .steps_max = 3'000'000,
                     .body = CloneRestore});

// What a user can see at the end of a run: every store's changelog fold and the committed
// input offsets.
struct Outcome {
  std::map<TopicPartition, std::map<std::string, std::string>> folds;
  std::map<TopicPartition, int64_t> committed;
};

Outcome RunOnce(RunEnv& env, int32_t partitions, int records,
                const std::vector<std::vector<std::pair<std::string, std::string>>>& input,
                const FreezePlan* plan) {
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    for (const auto& [k, v] : input[q]) RS_CHECK(w.broker.Append(testing::Input(q), k, v, 0).ok());
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  const RuntimeConfig config = CracConfig(1, 4, "/state");
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  EnableCrac(env, runtime, "");
  RS_CHECK(runtime.Start().ok());
  if (plan != nullptr) {
    Notifier notifier(w, runtime, partitions, {*plan});
    if (notifier.Join().frozen == 1) TraceMark("cover", "differential: frozen");
  }
  FinishRuntime(env, w, runtime, config, partitions, baselines);
  Outcome out;
  std::vector<TopicPartition> inputs;
  for (int32_t q = 0; q < partitions; ++q) {
    for (const std::string& store : w.stores) {
      const TopicPartition tp = testing::ChangelogOf(store, q);
      out.folds[tp] = FoldChangelog(*w.broker.ReadLog(tp, 0, 1'000'000));
    }
    inputs.push_back(testing::Input(q));
  }
  auto admin = w.broker.NewAdmin("differential");
  out.committed = *admin->CommittedOffsets("app", inputs);
  return out;
}

// scenario.checkpoint_differential
//   The same workload twice in one run, in two fresh worlds: once without a notification and
//   once frozen (for a drawn time, at a drawn moment) with no change to the broker.
//   Must hold: both runs end with the same store contents (changelog folds) and the same
//   committed input offsets — a freeze changes nothing a user can see — and each run passes
//   every oracle invariant and the tail.
void CheckpointDifferential(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int records = draw.Int("records", 20, 169);
  FreezePlan plan = FreezePlan::Draw(env, 60, /*broker_changes=*/false);
  plan.delay_ns = std::max(plan.delay_ns, kMillisecond);
  draw.Note("| " + plan.ToString());
  draw.NoteParams();
  std::vector<std::vector<std::pair<std::string, std::string>>> input(partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    for (int i = 0; i < 20; ++i) {
      input[q].emplace_back("k" + std::to_string(env.random.Uniform(8)),
                            std::to_string(1 + env.random.Uniform(5)));
    }
  }
  const Outcome plain = RunOnce(env, partitions, records, input, nullptr);
  const Outcome frozen = RunOnce(env, partitions, records, input, &plan);
  if (plain.folds != frozen.folds) {
    FailInvariant(env, "differential", "stores",
                  "store contents differ between the run without and with a checkpoint");
  }
  if (plain.committed != frozen.committed) {
    FailInvariant(env, "differential", "input",
                  "committed input differs between the run without and with a checkpoint");
  }
}
RESTORESIM_SCENARIO({.name = "scenario.checkpoint_differential",
                     .description = "a freeze of an unchanged world changes no store and no "
                                    "committed offset",
                     .steps_hint = 5'000,
                     .steps_max = 3'000'000,
                     .body = CheckpointDifferential});

}  // namespace

}  // namespace restoresim::scenarios
