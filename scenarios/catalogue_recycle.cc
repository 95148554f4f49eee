// Recycling: a task changes type in place, its stores and changelog offsets kept — the CLOSE
// of the old incarnation and the CREATE of the new one travel in one round, and the type
// conversion completes on the restore thread between them. Two instances a and b (a Fleet, one
// stream thread each).
#include <fmt/format.h>

#include "core/util/check.h"
#include "scenarios/catalogue.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

constexpr size_t kA = 0;  // fleet member of instance a
constexpr size_t kB = 1;  // fleet member of instance b

// Parameters of the two recycle scenarios, drawn from the seed (env.Choose; 0 = smallest).
struct RecycleParams {
  int32_t partitions = 1;      // 1 + Choose(3)
  int changelog_records = 20;  // per partition before the application runs: 20 + Choose(80)
  int32_t restore_batch = 2;   // restore.max_poll_records: 2 + Choose(9)
  int input_records = 0;       // per partition and burst: Choose(20)
  TimeNs swap_after_ns = 0;    // the roles swap this long after they were set: Choose(15) ms
  bool standbys = false;       // b keeps standbys where it gives up actives: Choose(2) == 1
  bool swap_back = false;      // a later generation swaps the roles back: Choose(2) == 1

  static RecycleParams Draw(RunEnv& env) {
    RecycleParams p;
    p.partitions = 1 + static_cast<int32_t>(env.Choose(3));
    p.changelog_records = 20 + static_cast<int>(env.Choose(80));
    p.restore_batch = 2 + static_cast<int32_t>(env.Choose(9));
    p.input_records = static_cast<int>(env.Choose(20));
    p.swap_after_ns = static_cast<TimeNs>(env.Choose(15)) * kMillisecond;
    p.standbys = env.Choose(2) == 1;
    p.swap_back = env.Choose(2) == 1;
    return p;
  }
  std::string ToString() const {
    return fmt::format(
        "partitions={} changelog_records={} restore_batch={} input_records={} swap_after_ms={} "
        "standbys={} swap_back={}",
        partitions, changelog_records, restore_batch, input_records, swap_after_ns / kMillisecond,
        standbys, swap_back);
  }
};

void ProduceAll(RuntimeWorld& w, RunEnv& env, const RecycleParams& p) {
  for (int32_t q = 0; q < p.partitions; ++q) ProduceInput(w, env.random, q, p.input_records);
}

// scenario.recycle_active_to_standby_while_restoring
//   a holds every task active and restores its long changelog in small batches; b holds
//   standbys (when drawn). Once a's restore thread has the tasks and swap_after later (most
//   seeds: still restoring), one generation swaps the roles: a recycles each restoring active
//   to a standby — the restore thread hands it back, and it returns as a standby of a new
//   incarnation over the same stores — and b recycles each standby to an active (or creates
//   it). Maybe the roles swap back before either side finished.
//   Must hold: at every step the oracle's invariants — in particular a changelog is never
//   registered twice in a's restore thread and a type conversion completes only while none of
//   the task's changelogs is registered; at the end every task runs on b (or a after the swap
//   back), the counts equal the reference model and the standbys caught up.
void RecycleActiveToStandbyWhileRestoring(RunEnv& env) {
  const RecycleParams p = RecycleParams::Draw(env);
  NoteParams(p.ToString());
  RuntimeWorld w(/*faults=*/false, p.partitions);
  for (int32_t q = 0; q < p.partitions; ++q) w.WriteChangelog(q, p.changelog_records);
  ProduceAll(w, env, p);
  const Baselines baselines = BaselinesNow(w, p.partitions);
  Fleet fleet(w, {.restore_max_poll_records = p.restore_batch});
  fleet.Start();
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kA, p.partitions, p.standbys)).ok());
  std::set<int32_t> all;
  for (int32_t q = 0; q < p.partitions; ++q) all.insert(q);
  fleet.AwaitHandedOver(env, kA, all);
  w.clock.SleepFor(p.swap_after_ns);
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kB, p.partitions, /*standbys=*/true)).ok());
  ProduceAll(w, env, p);
  if (p.swap_back) {
    w.clock.SleepFor(p.swap_after_ns);
    RS_CHECK(fleet.Rebalance(fleet.AllOn(kA, p.partitions, /*standbys=*/true)).ok());
  }
  FinishFleet(env, w, fleet, p.partitions, baselines);
}

// scenario.recycle_standby_to_active_while_updating
//   b holds every task active and processes input in bursts, committing (and so appending to
//   the changelogs) every 100 ms; a holds the standbys and updates them as the changelogs
//   grow. Between bursts one generation swaps the roles: a recycles each standby it is
//   updating to an active, which must first restore to the changelog's end, and b gives up
//   its running actives — revoked, they commit and close, and come back as standbys over the
//   same stores when drawn (this runtime turns a revoked running active into a standby by
//   close and create, not recycle: see docs/SCENARIOS.md). Maybe the roles swap back.
//   Must hold: the oracle's invariants (no double registration, conversion only while
//   unregistered, an active processes only after restoring under its own incarnation); at the
//   end the counts equal the reference model and the standbys caught up.
void RecycleStandbyToActiveWhileUpdating(RunEnv& env) {
  const RecycleParams p = RecycleParams::Draw(env);
  const int bursts = 1 + static_cast<int>(env.Choose(3));
  NoteParams(fmt::format("{} bursts={}", p.ToString(), bursts));
  RuntimeWorld w(/*faults=*/false, p.partitions);
  for (int32_t q = 0; q < p.partitions; ++q) w.WriteChangelog(q, p.changelog_records / 4);
  const Baselines baselines = BaselinesNow(w, p.partitions);
  Fleet fleet(w, {.restore_max_poll_records = p.restore_batch});
  fleet.Start();
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kB, p.partitions, /*standbys=*/true)).ok());
  for (int i = 0; i < bursts; ++i) {
    ProduceAll(w, env, p);
    w.clock.SleepFor(static_cast<TimeNs>(env.Choose(15)) * 10 * kMillisecond);
  }
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kA, p.partitions, p.standbys)).ok());
  ProduceAll(w, env, p);
  if (p.swap_back) {
    w.clock.SleepFor(p.swap_after_ns);
    RS_CHECK(fleet.Rebalance(fleet.AllOn(kB, p.partitions, /*standbys=*/true)).ok());
  }
  FinishFleet(env, w, fleet, p.partitions, baselines);
}

// scenario.standby_promotion_while_actives_restore
//   a restores `restoring` tasks with long changelogs (actives first: its standbys are paused
//   meanwhile) and holds standbys of `promoted` tasks that b runs and feeds with input. While
//   a still restores, a generation promotes a's standbys to actives (b keeps standbys of them
//   when drawn). The promoted tasks are actives now: they restore alongside the others.
//   Must hold: reader_mode (a standby changelog is never updated while an active one of the
//   same restore thread is restoring) and every oracle invariant; at the end every task runs
//   on a with counts equal to the reference model.
void StandbyPromotionWhileActivesRestore(RunEnv& env) {
  const int32_t restoring = 1 + static_cast<int32_t>(env.Choose(2));
  const int32_t promoted = 1 + static_cast<int32_t>(env.Choose(2));
  const int long_records = 50 + static_cast<int>(env.Choose(150));
  const int short_records = static_cast<int>(env.Choose(20));
  const int32_t restore_batch = 2 + static_cast<int32_t>(env.Choose(9));
  const int input_records = static_cast<int>(env.Choose(20));
  const TimeNs promote_after_ns = static_cast<TimeNs>(env.Choose(20)) * kMillisecond;
  const bool b_keeps_standbys = env.Choose(2) == 1;
  NoteParams(
      fmt::format("restoring={} promoted={} long_records={} short_records={} "
                  "restore_batch={} input_records={} promote_after_ms={} "
                  "b_keeps_standbys={}",
                  restoring, promoted, long_records, short_records, restore_batch, input_records,
                  promote_after_ns / kMillisecond, b_keeps_standbys));
  const int32_t partitions = restoring + promoted;
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, q < restoring ? long_records : short_records);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  Fleet fleet(w, {.restore_max_poll_records = restore_batch});
  fleet.Start();
  Generation g(fleet.size());
  for (int32_t q = 0; q < partitions; ++q) {
    if (q < restoring) {
      g[kA].actives.insert(q);
    } else {
      g[kB].actives.insert(q);
      g[kA].standbys.insert(q);
    }
  }
  RS_CHECK(fleet.Rebalance(g).ok());
  for (int32_t q = restoring; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
  w.clock.SleepFor(promote_after_ns);
  for (int32_t q = restoring; q < partitions; ++q) {
    g[kA].standbys.erase(q);
    g[kA].actives.insert(q);
    g[kB].actives.erase(q);
    if (b_keeps_standbys) g[kB].standbys.insert(q);
  }
  RS_CHECK(fleet.Rebalance(g).ok());
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
  FinishFleet(env, w, fleet, partitions, baselines);
}

// scenario.swap_roles_repeatedly
//   a runs every task active with b's standbys (or the reverse), and the roles swap 1-3 times,
//   with input between the swaps: running actives become standbys (closed, or recycled in place
//   when a standby of the task is wanted there), standbys become actives, over the same stores.
//   Must hold: every oracle invariant — no changelog registered twice, nothing registered once
//   its CLOSE is applied; at the end every task runs with counts equal to the reference model
//   and the standbys caught up.
void SwapRolesRepeatedly(RunEnv& env) {
  const int32_t partitions = 1 + static_cast<int32_t>(env.Choose(3));
  const int records = static_cast<int>(env.Choose(30));
  const int swaps = 1 + static_cast<int>(env.Choose(3));
  NoteParams(fmt::format("partitions={} records={} swaps={}", partitions, records, swaps));
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, 10);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  Fleet fleet(w, {.restore_max_poll_records = 10});
  fleet.Start();
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kA, partitions, /*standbys=*/true)).ok());
  for (int i = 0; i < swaps; ++i) {
    w.clock.SleepFor((1 + static_cast<TimeNs>(env.Choose(10))) * 20 * kMillisecond);
    RS_CHECK(fleet.Rebalance(fleet.AllOn(i % 2 == 0 ? kB : kA, partitions, true)).ok());
    for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, 10);
  }
  FinishFleet(env, w, fleet, partitions, baselines);
}

}  // namespace

absl::Status RegisterRecycleScenarios(sim::ProgramRegistry& registry) {
  return AddAll(
      registry,
      {
          sim::Program{.name = "scenario.recycle_active_to_standby_while_restoring",
                       .description = "a restoring active becomes a standby (and b's standby "
                                      "an active) in one generation",
                       .steps_hint = 5'000,
                       .steps_max = 2'000'000,
                       .body = RecycleActiveToStandbyWhileRestoring},
          sim::Program{.name = "scenario.recycle_standby_to_active_while_updating",
                       .description = "a standby being updated becomes an active while its "
                                      "active is recycled to a standby",
                       .steps_hint = 4'000,
                       .steps_max = 2'000'000,
                       .body = RecycleStandbyToActiveWhileUpdating},
          sim::Program{.name = "scenario.swap_roles_repeatedly",
                       .description = "a's and b's actives and standbys swap roles 1-3 times, "
                                      "with input between the swaps",
                       .steps_hint = 2'000,
                       .steps_max = 2'000'000,
                       .body = SwapRolesRepeatedly},
          sim::Program{.name = "scenario.standby_promotion_while_actives_restore",
                       .description = "standbys (paused while actives restore) promoted to "
                                      "actives before the restoration ends",
                       .steps_hint = 5'000,
                       .steps_max = 2'000'000,
                       .body = StandbyPromotionWhileActivesRestore},
      });
}

}  // namespace restoresim::scenarios
