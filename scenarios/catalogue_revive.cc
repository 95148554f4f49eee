// Corruption and revive, and close-then-create in one round. A changelog truncated below a
// task's checkpoint (DeleteRecords) makes its restoration go out of range: the restore thread
// reports the incarnation corrupted, the stream thread closes it dirty, wipes its directory and
// revives a new incarnation that restores from the log start. The truncations here are
// compaction-like (TruncateHarmlessly: every deleted key has a later record), so the changelog
// still folds to the same counts and the reference model stays exact.
#include <fmt/format.h>

#include "core/runtime/runtime.h"
#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

// Where a partition's earlier checkpoint is and where its changelog gets truncated, drawn so
// that the truncation is above the checkpoint (restoring from it goes out of range) and at
// least 7 records below the changelog's end (harmless).
struct Truncation {
  int64_t checkpoint_at = 0;  // in [1, records / 2]
  int64_t below = 0;          // in [checkpoint_at + 1, records - 7]

  static Truncation From(Draws& draw, int records) {
    RS_CHECK(records >= 20);
    Truncation t;
    t.checkpoint_at = draw.Int<int64_t>(1, records / 2);
    t.below = draw.Int<int64_t>(t.checkpoint_at + 1, records - 7);
    return t;
  }
};

int64_t Revived(const std::vector<Member>& members) {
  int64_t revived = 0;
  for (const Member& m : members) revived += m.thread->task_manager().stats().revived;
  return revived;
}

// scenario.revive_after_truncation
//   A Runtime (1-2 stream threads) starts over a state directory an earlier instance left:
//   every task has a store and a checkpoint part-way into its changelog. The changelog of
//   task 0_0 (and of others, when drawn) is truncated above its checkpoint — before the
//   runtime starts (truncate_after = 0), or while it restores. Restoring from the checkpoint
//   goes out of range: corruption, close dirty, wipe, revive from the log start.
//   Must hold: the oracle's invariants (a corruption report applies only to the incarnation it
//   names; no checkpoint names a corrupted changelog until the directory is wiped; the revived
//   store equals the fold of the changelog); a truncation before the start always ends in a
//   revive; every task runs with counts equal to the reference model.
void ReviveAfterTruncation(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int32_t threads = draw.Int<int32_t>("threads", 1, 2);
  const int records = draw.Int("records", 30, 89);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const int input_records = draw.Int("input_records", 0, 29);
  const TimeNs truncate_after_ns = draw.Ms("truncate_after_ms", 0, 19);
  std::map<int32_t, Truncation> truncations;
  for (int32_t q = 0; q < partitions; ++q) {
    const Truncation t = Truncation::From(draw, records);
    if (q == 0 || draw.Bool()) truncations[q] = t;
  }
  std::string truncated = "checkpoint<truncation:";
  for (const auto& [q, t] : truncations) {
    truncated += fmt::format(" {}:{}<{}", q, t.checkpoint_at, t.below);
  }
  draw.Note(truncated);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, input_records);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    auto t = truncations.find(q);
    LeaveCheckpoint(w, "/state/app", q,
                    t == truncations.end() ? records / 2 : t->second.checkpoint_at);
  }
  auto truncate = [&]() {
    for (const auto& [q, t] : truncations) TruncateHarmlessly(w, q, t.below);
  };
  const RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  if (truncate_after_ns == 0) truncate();
  RS_CHECK(runtime.Start().ok());
  if (truncate_after_ns > 0) {
    w.clock.SleepFor(truncate_after_ns);
    truncate();
  }
  AwaitConverged(env, w, MembersOf(runtime, config), partitions);
  if (truncate_after_ns == 0 && Revived(MembersOf(runtime, config)) == 0) {
    FailInvariant(env, "final_state", "0_0",
                  "restored from a checkpoint below its changelog's log start, never revived");
  }
  FinishRuntime(env, w, runtime, config, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.revive_after_truncation",
                     .description = "changelog truncated below the checkpoint during "
                                    "restoration: corruption, close dirty, wipe, revive",
                     .steps_hint = 2'000,
                     .body = ReviveAfterTruncation});

// scenario.close_and_create_same_round
//   Recycle and revive are both "close, then create" of one task, and so is a revoke followed
//   by a re-assignment before the next poll; all three here land in the same or adjacent
//   hand-over rounds. Instances a and b: task 0_0 has an old checkpoint in a's directory below
//   its (truncated) log start, so a's first incarnation of it is corrupted and revived; every
//   other task is, at a drawn moment, either recycled (a: active -> standby, b: standby ->
//   active) or revoked from a and given back to it in the next generation — two generations
//   a sees in one poll, while the revive of 0_0 may be in flight. When drawn, the moment comes
//   once a runs those tasks: a running active recycled in place sends its CLOSE and its
//   standby's CREATE in one round.
//   Must hold: within a round every CLOSE is applied before any CREATE (no changelog
//   registered twice, none registered after its incarnation's CLOSE), and every oracle
//   invariant; at the end every task runs with counts equal to the reference model.
void CloseAndCreateSameRound(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 2, 4);
  const int records = draw.Int("records", 20, 59);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const int input_records = draw.Int("input_records", 0, 19);
  const Truncation t = Truncation::From(draw, records);
  draw.Fixed("checkpoint_at", t.checkpoint_at);
  draw.Fixed("truncate_below", t.below);
  const TimeNs burst_after_ns = draw.Ms("burst_after_ms", 0, 19);
  const bool standbys = draw.Bool("standbys");
  const bool when_running = draw.Bool("when_running");
  std::set<int32_t> recycled;
  std::set<int32_t> reassigned;
  for (int32_t q = 1; q < partitions; ++q) (draw.Bool() ? reassigned : recycled).insert(q);
  draw.Note(fmt::format("recycled=[{}] revoked_and_reassigned=[{}]", fmt::join(recycled, ","),
                        fmt::join(reassigned, ",")));
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, input_records);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  LeaveCheckpoint(w, "/state/a/app", 0, t.checkpoint_at);
  TruncateHarmlessly(w, 0, t.below);
  Fleet fleet(w, {.restore_max_poll_records = restore_batch});
  fleet.Start();
  Generation g = fleet.AllOn(kA, partitions, standbys);
  RS_CHECK(fleet.Rebalance(g).ok());
  if (when_running) {
    const TimeNs deadline = w.clock.NowNs() + kConvergeNsMax;
    TaskManager& tm = fleet.thread(kA).task_manager();
    for (int32_t q = 1; q < partitions; ++q) {
      while (!tm.running().contains(TaskId{0, q}) && w.clock.NowNs() < deadline) {
        w.clock.SleepFor(1 * kMillisecond);
      }
    }
  }
  w.clock.SleepFor(burst_after_ns);
  for (int32_t q : recycled) {
    g[kA].actives.erase(q);
    g[kA].standbys.insert(q);
    g[kB].standbys.erase(q);
    g[kB].actives.insert(q);
  }
  for (int32_t q : reassigned) g[kA].actives.erase(q);
  RS_CHECK(fleet.Rebalance(g).ok());
  if (!reassigned.empty()) {
    for (int32_t q : reassigned) g[kA].actives.insert(q);
    RS_CHECK(fleet.Rebalance(g).ok());  // before a's next poll: a sees both generations
  }
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
  FinishFleet(env, w, fleet, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.close_and_create_same_round",
                     .description = "recycle, revive and revoke+re-assign: close-then-create "
                                    "of one task in one hand-over round",
                     .steps_hint = 5'000,
                     .body = CloseAndCreateSameRound});

}  // namespace

}  // namespace restoresim::scenarios
