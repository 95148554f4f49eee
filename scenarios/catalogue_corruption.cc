// Corruption found while processing: a store's latent damage that only a read finds (RocksDB's
// corrupted block), handled as a corrupted task, never as the thread's failure.
//
// Corruption where something else happens at the same time: a report in flight while its task
// is revoked, moved or recycled; corruption of one of a task's two changelogs; initialisation
// retried (a locked directory, stores that fail to open) while corruption is handled and a
// rebalance arrives. Each story leaves a coverage mark ("cover/...") when its window is
// reached; catalogue_test asserts the marks appear in a sweep.
#include <fmt/format.h>

#include "core/runtime/runtime.h"
#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/rotting_store.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;


// A checkpoint for task 0_q in `state_dir` below a harmless truncation of its changelog(s):
// restoring from it goes out of range. REQUIRES: records >= 20.
void CorruptFromCheckpoint(RuntimeWorld& w, Draws& draw, const std::string& state_dir, int32_t q,
                           int records, const std::vector<std::string>& truncated_stores) {
  const int64_t checkpoint_at = draw.Int<int64_t>(1, records / 2);
  const int64_t below = draw.Int<int64_t>(checkpoint_at + 1, records - 7);
  LeaveCheckpoint(w, state_dir, q, checkpoint_at);
  for (const std::string& store : truncated_stores) TruncateHarmlessly(w, q, below, store);
}

// scenario.corruption_report_while_revoked
//   a's restore thread reports task 0_0 corrupted: either a's checkpoint of it lies below its
//   (truncated) log start, or (drawn) it restores from scratch and its changelog is truncated
//   above the restore position while it restores. a and b have two stream threads each; a's
//   first holds 0_0. A drawn 0-9 ms after a handed 0_0 over, a generation changes
//   0_0's fate — moved to b, recycled on a to a standby (active on b), revoked to nobody and
//   given back to a 1-3 ms later, or moved to a's other thread, over the same task directory —
//   so the report may still be in flight when a handles the generation.
//   Must hold: a report about an incarnation a no longer wants in that form closes it dirty,
//   wipes it and applies nothing else (no revive, no recycle of it: the assignment invariant
//   checks every decision against the assignment of the moment), so another thread's
//   incarnation never opens the corrupted directory (checkpoint); exact counts.
//   Coverage: "corruption report for an incarnation no longer wanted".
void CorruptionReportWhileRevoked(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 2);
  const int records = draw.Int("records", 20, 59);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const int input_records = draw.Int("input_records", 0, 19);
  const TimeNs change_after_ns = draw.Ms("change_after_ms", 0, 9);
  // 0 moved to b, 1 recycled on a, 2 revoked and back, 3 moved to a's other thread
  const uint64_t fate = draw.Int<uint64_t>("fate", 0, 3);
  const TimeNs back_after_ns = draw.Ms("back_after_ms", 1, 3);
  const bool while_restoring = draw.Bool("while_restoring");  // truncated mid-restoration
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, input_records);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  if (!while_restoring) CorruptFromCheckpoint(w, draw, "/state/a/app", 0, records, {"counts"});
  Fleet fleet(w, {.threads_per_instance = 2, .restore_max_poll_records = restore_batch});
  fleet.Start();
  constexpr size_t kA2 = 1;        // a's second thread
  constexpr size_t kBFirst = 2;    // b's first thread
  Generation g = fleet.AllOn(kA, partitions, /*standbys=*/false);
  RS_CHECK(fleet.Rebalance(g).ok());
  fleet.AwaitHandedOver(env, kA, {0});
  if (while_restoring) {
    w.clock.SleepFor(2 * kMillisecond);  // a few batches in
    TruncateHarmlessly(w, 0, HarmlessTruncationMax(w, 0));
  }
  w.clock.SleepFor(change_after_ns);
  g[kA].actives.erase(0);
  if (fate == 0 || fate == 1) g[kBFirst].actives.insert(0);
  if (fate == 1) g[kA].standbys.insert(0);
  if (fate == 3) g[kA2].actives.insert(0);
  RS_CHECK(fleet.Rebalance(g).ok());
  if (fate == 2) {
    w.clock.SleepFor(back_after_ns);
    g[kA].actives.insert(0);
    RS_CHECK(fleet.Rebalance(g).ok());
  }
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
  FinishFleet(env, w, fleet, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.corruption_report_while_revoked",
                     .description = "a corruption report in flight while its task is moved, "
                                    "recycled, or revoked and given back",
                     .steps_hint = 4'000,
                     .body = CorruptionReportWhileRevoked});

// scenario.corruption_of_one_of_two_stores
//   Tasks have two stores on two changelogs ("counts" and "latest", count_topology.h). A
//   Runtime (1-2 threads) starts over a state directory an earlier instance left, every store
//   checkpointed part-way; one changelog of task 0_0 — counts, latest, or both, drawn — is
//   truncated above its checkpoint, before the start or while it restores.
//   Must hold: corruption of one changelog takes the whole task out of the restore thread —
//   nothing of it keeps restoring (registration ↔ ownership: no changelog of it left
//   registered and not completed when it leaves) — it is closed dirty, wiped and revived, and
//   both its stores restore from their log starts; the final counts and latest values equal
//   their reference models.
//   Coverage: "corruption of one of a task's changelogs".
void CorruptionOfOneOfTwoStores(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 2);
  const int32_t threads = draw.Int<int32_t>("threads", 1, 2);
  const int records = draw.Int("records", 20, 79);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const int input_records = draw.Int("input_records", 0, 19);
  const size_t which = draw.Pick("truncated", {"counts", "latest", "both"});
  const TimeNs truncate_after_ns = draw.Ms("truncate_after_ms", 0, 19);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions, kMillisecond, {"counts", "latest"});
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, input_records);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  const int64_t checkpoint_at = draw.Int<int64_t>(1, records / 2);
  const int64_t below = draw.Int<int64_t>(checkpoint_at + 1, records - 7);
  for (int32_t q = 0; q < partitions; ++q) {
    LeaveCheckpoint(w, "/state/app", q, q == 0 ? checkpoint_at : records / 2);
  }
  auto truncate = [&]() {
    if (which != 1) TruncateHarmlessly(w, 0, below, "counts");
    if (which != 0) TruncateHarmlessly(w, 0, below, "latest");
  };
  RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  config.store_names = w.stores;
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  if (truncate_after_ns == 0) truncate();
  RS_CHECK(runtime.Start().ok());
  if (truncate_after_ns > 0) {
    w.clock.SleepFor(truncate_after_ns);
    truncate();
  }
  FinishRuntime(env, w, runtime, config, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.corruption_of_one_of_two_stores",
                     .description = "tasks with two stores on two changelogs, one of them "
                                    "truncated below its checkpoint",
                     .steps_hint = 3'000,
                     .body = CorruptionOfOneOfTwoStores});

// Stores that fail to open: the first `failures` opens of each task directory's stores fail
// (an I/O error, not corruption: RegisterStores is retried at the next hand-over).
StoreOpener FailingOpener(RuntimeWorld& w, int failures) {
  auto left = std::make_shared<std::map<std::string, int>>();
  return [&w, left, failures](const std::string& dir, const std::string& name)
             -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
    auto [it, fresh] = left->try_emplace(dir, failures);
    if (it->second > 0) {
      --it->second;
      return absl::UnavailableError(fmt::format("injected: store {} did not open", dir));
    }
    return w.LogStoreOpener()(dir, name);
  };
}

// scenario.initialisation_retried_during_corruption_and_rebalance
//   Instance a has two stream threads sharing one state directory; task 0_0's checkpoint there
//   lies below its (truncated) log start, and every task directory's stores fail to open the
//   first 0-2 times. a runs every task; a drawn 0-19 ms later a generation moves tasks between
//   a's two threads (a task directory a closing incarnation of the other thread still locks:
//   initialisation is retried) while 0_0's corruption is reported and revived (its new
//   incarnation's stores may fail to open too).
//   Must hold: a task whose initialisation is retried stays where the assignment wants it
//   (assignment), its thread does not report RUNNING before it runs (running_gate), one state
//   manager at a time has a directory open (single_owner); exact counts.
//   Coverage: "initialisation retried: directory locked", "initialisation retried: stores
//   failed to open", and a revive.
void InitialisationRetriedDuringCorruptionAndRebalance(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 2, 3);
  const int records = draw.Int("records", 20, 59);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const int input_records = draw.Int("input_records", 0, 19);
  const int open_failures = draw.Int("open_failures", 0, 2);
  const TimeNs move_after_ns = draw.Ms("move_after_ms", 0, 19);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, input_records);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  CorruptFromCheckpoint(w, draw, "/state/a/app", 0, records, {"counts"});
  Fleet fleet(w, {.instances = 1, .threads_per_instance = 2,
                  .restore_max_poll_records = restore_batch,
                  .open_store = FailingOpener(w, open_failures)});
  fleet.Start();
  Generation g(fleet.size());
  for (int32_t q = 0; q < partitions; ++q) g[q % 2].actives.insert(q);
  RS_CHECK(fleet.Rebalance(g).ok());
  w.clock.SleepFor(move_after_ns);
  Generation moved(fleet.size());
  for (int32_t q = 0; q < partitions; ++q) {
    // 0_0 stays (its revive goes on); each other task moves to the other thread, or stays.
    const size_t owner = q == 0 || !draw.Bool() ? q % 2 : 1 - q % 2;
    moved[owner].actives.insert(q);
  }
  RS_CHECK(fleet.Rebalance(moved).ok());
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
  FinishFleet(env, w, fleet, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.initialisation_retried_during_corruption_and_rebalance",
                     .description = "stores that fail to open and locked directories while a "
                                    "corruption is revived and tasks move between threads",
                     .steps_hint = 4'000,
                     .body = InitialisationRetriedDuringCorruptionAndRebalance});

// scenario.store_corrupt_while_processing
//   A Runtime (1-2 threads) under at-least-once or exactly_once_v2 restores 1-3 changelogs of
//   0-40 records and processes 1-59 input records per partition; the stores of one drawn task
//   rot at a drawn read (testing::StoreRot: the 1st-40th Get through them; 0: none): from then
//   on every read of that store answers DataLoss, as RocksDB answers a Get that reaches a block
//   whose checksum fails, until its directory is wiped.
//   Must hold: the task is corrupted, not its thread — closed dirty, wiped, and a new
//   incarnation restores it from its changelog and processes on (the runtime converges, never
//   ERROR); no rotten store directory is left unwiped; every oracle invariant; every store
//   equals its changelog; counts exact under exactly once (under at-least-once the task's
//   processed, uncommitted input is processed again by design: reference counts not held).
//   Coverage: "cover/store data loss while processing: task revived", "cover/rotten store wiped
//   and opened empty".
void StoreCorruptWhileProcessing(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int32_t threads = draw.Int<int32_t>("threads", 1, 2);
  const int records = draw.Int("records", 0, 40);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const bool eos = draw.Pick("guarantee", {"at_least_once", "exactly_once_v2"}) == 1;
  const int32_t rotting = draw.Int<int32_t>("rotting", 0, partitions - 1);
  const int64_t rot_at = draw.Int<int64_t>("rot_at_read", 0, 40);
  const int input = draw.Int("input", 1, 59);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) w.WriteChangelog(q, records);
  const Baselines baselines = BaselinesNow(w, partitions);
  RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  if (eos) {
    config.processing_guarantee = "exactly_once_v2";
    TraceMark("scenario", "exactly once");
  }
  testing::StoreRot rot(fmt::format("/{}/", TaskId{0, rotting}.ToString()), rot_at);
  Runtime runtime(config, w.broker, w.clock, w.fs,
                  testing::RottingStoreOpener(w.LogStoreOpener(), rot));
  RS_CHECK(runtime.Start().ok());
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input);
  FinishRuntime(env, w, runtime, config, partitions, baselines, {.reference_counts = eos});
  if (rot.rotten_count() > 0) {
    FailInvariant(env, "final_state", TaskId{0, rotting}.ToString(),
                  fmt::format("{} store directories found corrupt were never wiped",
                              rot.rotten_count()));
  }
}
RESTORESIM_SCENARIO({.name = "scenario.store_corrupt_while_processing",
                     .description = "a store's data found corrupt by a read while processing: "
                                    "its task is wiped and restored, its thread goes on",
                     .steps_hint = 6'000,
                     .body = StoreCorruptWhileProcessing});

}  // namespace

}  // namespace restoresim::scenarios
