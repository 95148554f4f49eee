// Recycling: a task changes type in place, its stores and changelog offsets kept — the CLOSE
// of the old incarnation and the CREATE of the new one travel in one round, and the type
// conversion completes on the restore thread between them. Two instances a and b (a Fleet, one
// stream thread each).
#include <fmt/format.h>

#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;


// Parameters of the two recycle scenarios, drawn from the seed (0 = smallest).
struct RecycleParams {
  int32_t partitions = 1;
  int changelog_records = 20;  // per partition before the application runs
  int32_t restore_batch = 2;   // restore.max_poll_records
  int input_records = 0;       // per partition and burst
  TimeNs swap_after_ns = 0;    // the roles swap this long after they were set
  bool standbys = false;       // b keeps standbys where it gives up actives
  bool swap_back = false;      // a later generation swaps the roles back

  static RecycleParams From(Draws& draw) {
    return {.partitions = draw.Int<int32_t>("partitions", 1, 3),
            .changelog_records = draw.Int("changelog_records", 20, 99),
            .restore_batch = draw.Int<int32_t>("restore_batch", 2, 10),
            .input_records = draw.Int("input_records", 0, 19),
            .swap_after_ns = draw.Ms("swap_after_ms", 0, 14),
            .standbys = draw.Bool("standbys"),
            .swap_back = draw.Bool("swap_back")};
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
  Draws draw(env);
  const RecycleParams p = RecycleParams::From(draw);
  draw.NoteParams();
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
RESTORESIM_SCENARIO({.name = "scenario.recycle_active_to_standby_while_restoring",
                     .description = "a restoring active becomes a standby (and b's standby an "
                                    "active) in one generation",
                     .steps_hint = 5'000,
                     .body = RecycleActiveToStandbyWhileRestoring});

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
  Draws draw(env);
  const RecycleParams p = RecycleParams::From(draw);
  const int bursts = draw.Int("bursts", 1, 3);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, p.partitions);
  for (int32_t q = 0; q < p.partitions; ++q) w.WriteChangelog(q, p.changelog_records / 4);
  const Baselines baselines = BaselinesNow(w, p.partitions);
  Fleet fleet(w, {.restore_max_poll_records = p.restore_batch});
  fleet.Start();
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kB, p.partitions, /*standbys=*/true)).ok());
  for (int i = 0; i < bursts; ++i) {
    ProduceAll(w, env, p);
    w.clock.SleepFor(draw.Ms(0, 140, 10));
  }
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kA, p.partitions, p.standbys)).ok());
  ProduceAll(w, env, p);
  if (p.swap_back) {
    w.clock.SleepFor(p.swap_after_ns);
    RS_CHECK(fleet.Rebalance(fleet.AllOn(kB, p.partitions, /*standbys=*/true)).ok());
  }
  FinishFleet(env, w, fleet, p.partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.recycle_standby_to_active_while_updating",
                     .description = "a standby being updated becomes an active while its active "
                                    "is recycled to a standby",
                     .steps_hint = 4'000,
                     .body = RecycleStandbyToActiveWhileUpdating});

// scenario.standby_promotion_while_actives_restore
//   a restores `restoring` tasks with long changelogs (actives first: its standbys are paused
//   meanwhile) and holds standbys of `promoted` tasks that b runs and feeds with input. While
//   a still restores, a generation promotes a's standbys to actives (b keeps standbys of them
//   when drawn). The promoted tasks are actives now: they restore alongside the others.
//   Must hold: reader_mode (a standby changelog is never updated while an active one of the
//   same restore thread is restoring) and every oracle invariant; at the end every task runs
//   on a with counts equal to the reference model.
void StandbyPromotionWhileActivesRestore(RunEnv& env) {
  Draws draw(env);
  const int32_t restoring = draw.Int<int32_t>("restoring", 1, 2);
  const int32_t promoted = draw.Int<int32_t>("promoted", 1, 2);
  const int long_records = draw.Int("long_records", 50, 199);
  const int short_records = draw.Int("short_records", 0, 19);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const int input_records = draw.Int("input_records", 0, 19);
  const TimeNs promote_after_ns = draw.Ms("promote_after_ms", 0, 19);
  const bool b_keeps_standbys = draw.Bool("b_keeps_standbys");
  draw.NoteParams();
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
RESTORESIM_SCENARIO({.name = "scenario.standby_promotion_while_actives_restore",
                     .description = "standbys (paused while actives restore) promoted to actives "
                                    "before the restoration ends",
                     .steps_hint = 5'000,
                     .body = StandbyPromotionWhileActivesRestore});

// scenario.swap_roles_repeatedly
//   a runs every task active with b's standbys (or the reverse), and the roles swap 1-3 times,
//   with input between the swaps: running actives become standbys (closed, or recycled in place
//   when a standby of the task is wanted there), standbys become actives, over the same stores.
//   Must hold: every oracle invariant — no changelog registered twice, nothing registered once
//   its CLOSE is applied; at the end every task runs with counts equal to the reference model
//   and the standbys caught up.
void SwapRolesRepeatedly(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int records = draw.Int("records", 0, 29);
  const int swaps = draw.Int("swaps", 1, 3);
  draw.NoteParams();
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
    w.clock.SleepFor(draw.Ms(20, 200, 20));
    RS_CHECK(fleet.Rebalance(fleet.AllOn(i % 2 == 0 ? kB : kA, partitions, true)).ok());
    for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, 10);
  }
  FinishFleet(env, w, fleet, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.swap_roles_repeatedly",
                     .description = "a's and b's actives and standbys swap roles 1-3 times, with "
                                    "input between the swaps",
                     .steps_hint = 2'000,
                     .body = SwapRolesRepeatedly});

}  // namespace

}  // namespace restoresim::scenarios
