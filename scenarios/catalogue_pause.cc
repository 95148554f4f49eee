// Pause and resume (KIP-834: KafkaStreams.pause/resume, the state updater's paused tasks):
// an instance's topology is paused while its actives restore and its standbys update, the
// assignment moves tasks under it, and it is resumed. Two instances a and b (a Fleet, one
// stream thread each, each instance a client with a pause of its own).
#include <fmt/format.h>

#include "core/sync/thread.h"
#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;


// Parameters drawn from the seed (0 = smallest, fewest, none, earliest).
struct PauseParams {
  int32_t partitions = 1;
  int changelog_records = 30;  // per partition before the application runs
  int32_t restore_batch = 2;   // restore.max_poll_records
  int input_records = 0;       // per partition and burst
  // After a handed its tasks to its restore thread: 0-14 ms, ten times that when drawn late
  // (most tasks restored and running by then).
  TimeNs pause_after_ns = 0;
  size_t paused = 0;           // who pauses: 0 both instances, 1 a, 2 b
  size_t event = 0;            // while paused: 0 none, 1 recycle, 2 revoke, 3 both
  TimeNs paused_ns = 0;        // paused this long after the event

  static PauseParams From(Draws& draw) {
    PauseParams p;
    p.partitions = draw.Int<int32_t>("partitions", 1, 3);
    p.changelog_records = draw.Int("changelog_records", 30, 179);
    p.restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
    p.input_records = draw.Int("input_records", 0, 19);
    p.pause_after_ns = draw.Ms(0, 14);
    if (draw.Bool()) p.pause_after_ns *= 10;
    draw.Fixed("pause_after_ms", p.pause_after_ns / kMillisecond);
    p.paused = draw.Pick("paused", {"a and b", "a", "b"});
    p.event = draw.Pick("event", {"none", "recycle", "revoke", "recycle and revoke"});
    p.paused_ns = draw.Ms("paused_ms", 0, 180, 20);
    return p;
  }
  bool Pauses(size_t member) const {
    return paused == 0 || (paused == 1 && member == kA) || (paused == 2 && member == kB);
  }
};

void ProduceAll(RuntimeWorld& w, RunEnv& env, const PauseParams& p) {
  for (int32_t q = 0; q < p.partitions; ++q) ProduceInput(w, env.random, q, p.input_records);
}

void SetPaused(Fleet& fleet, const PauseParams& p, bool paused) {
  for (size_t m : {kA, kB}) {
    if (p.Pauses(m)) fleet.SetPaused(fleet.instance_of(m), paused);
  }
}

// Partition 0 moves: its active goes to the other member, and the member that held it keeps
// nothing of it (its task is revoked and closed: a paused one is handed back by its restore
// thread, or, running, closed by its stream thread).
Generation MovePartitionZero(const Generation& g) {
  Generation next = g;
  const size_t from = g[kA].actives.contains(0) ? kA : kB;
  const size_t to = from == kA ? kB : kA;
  next[from].actives.erase(0);
  next[from].standbys.erase(0);
  next[to].standbys.erase(0);
  next[to].actives.insert(0);
  return next;
}

// scenario.pause_resume_during_restoration_and_recycle
//   a holds every task active and restores its long changelogs in small batches; b holds
//   standbys of them and updates them. Once a's restore thread has the tasks and pause_after
//   later (early: most still restoring; late: most running), a, b or both pause. While
//   paused, input arrives and maybe the assignment moves tasks under the pause: a recycle
//   (the roles swap: a's paused actives become standbys over the same stores, b's paused
//   standbys become actives), a revocation (partition 0 moves away: a paused task is closed),
//   or both. Then everything resumes.
//   Must hold: at every step the oracle's invariants — paused_tasks above all (a paused task
//   gets no restored batch and processes nothing; every thread takes the pause up at its next
//   iteration), single owner (the restore thread's paused set handed back at close, recycle
//   and shutdown), no double registration (a resumed task registers once, its CLOSE still
//   unregisters it), no_wasted_work (restoration resumes from where it stopped: nothing
//   restored again below a checkpoint); while paused a paused instance processes nothing; at
//   the end every task runs with counts equal to the reference model and the standbys caught
//   up.
void PauseResumeDuringRestorationAndRecycle(RunEnv& env) {
  Draws draw(env);
  const PauseParams p = PauseParams::From(draw);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, p.partitions);
  for (int32_t q = 0; q < p.partitions; ++q) w.WriteChangelog(q, p.changelog_records);
  ProduceAll(w, env, p);
  const Baselines baselines = BaselinesNow(w, p.partitions);
  Fleet fleet(w, {.restore_max_poll_records = p.restore_batch});
  fleet.Start();
  Generation g = fleet.AllOn(kA, p.partitions, /*standbys=*/true);
  RS_CHECK(fleet.Rebalance(g).ok());
  std::set<int32_t> all;
  for (int32_t q = 0; q < p.partitions; ++q) all.insert(q);
  fleet.AwaitHandedOver(env, kA, all);
  w.clock.SleepFor(p.pause_after_ns);
  SetPaused(fleet, p, true);
  ProduceAll(w, env, p);
  // Every thread has taken the pause up well within this (one poll, one idle wait): from here
  // a paused instance processes nothing until it resumes.
  w.clock.SleepFor(150 * kMillisecond);
  std::vector<int64_t> processed;
  for (size_t m : {kA, kB}) processed.push_back(fleet.thread(m).records_processed());
  if (p.event == 1 || p.event == 3) {
    g = fleet.AllOn(kB, p.partitions, /*standbys=*/true);  // the roles swap: recycles
    RS_CHECK(fleet.Rebalance(g).ok());
    w.clock.SleepFor(draw.Ms(0, 90, 10));
  }
  if (p.event == 2 || p.event == 3) {
    g = MovePartitionZero(g);
    RS_CHECK(fleet.Rebalance(g).ok());
  }
  ProduceAll(w, env, p);
  w.clock.SleepFor(p.paused_ns);
  for (size_t m : {kA, kB}) {
    if (!p.Pauses(m)) continue;
    RS_CHECK_EQ(fleet.thread(m).records_processed(), processed[m],
                "{} processed records while paused", fleet.thread(m).name());
  }
  SetPaused(fleet, p, false);
  ProduceAll(w, env, p);
  FinishFleet(env, w, fleet, p.partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.pause_resume_during_restoration_and_recycle",
                     .description = "a, b or both pause while actives restore and standbys "
                                    "update; a recycle and/or revocation while paused; resume",
                     .steps_hint = 6'000,
                     .body = PauseResumeDuringRestorationAndRecycle});

// Parameters of the idle story, drawn from the seed (0 = smallest, none, earliest).
struct IdleParams {
  int32_t partitions = 2;       // a may run partition 0; the others are b's, then move to a
  int changelog_records = 20;   // per partition before the application runs
  int32_t restore_batch = 2;    // restore.max_poll_records
  int input_records = 0;        // per partition and burst
  bool a_runs_one = false;      // a runs partition 0 before the pause (else a holds nothing)
  TimeNs pause_after_ns = 0;    // after the first generation converged
  TimeNs moved_after_ns = 0;    // a paused this long before b's partitions move to it
  TimeNs resume_after_ns = 0;   // after the move: a resumes

  static IdleParams From(Draws& draw) {
    IdleParams p;
    p.partitions = draw.Int<int32_t>("partitions", 2, 3);
    p.changelog_records = draw.Int("changelog_records", 20, 119);
    p.restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
    p.input_records = draw.Int("input_records", 0, 19);
    p.a_runs_one = draw.Bool("a_runs_one");
    p.pause_after_ns = draw.Ms("pause_after_ms", 0, 150, 10);
    p.moved_after_ns = draw.Ms("moved_after_ms", 0, 200, 20);
    p.resume_after_ns = draw.Ms("resume_after_ms", 20, 400, 20);
    return p;
  }
};

// scenario.paused_while_idle_assigned_then_resumed
//   Instances a and b: a runs partition 0 or nothing, b runs the rest; once everything runs,
//   a's restore thread has nothing to restore and waits idle for work. a pauses then (its
//   restore thread idle), and while paused b's partitions move to a: a's restore thread gets
//   new actives with whole changelogs to restore, parks them paused (KAFKA-14299: nothing is
//   restored into a task added while its topology is paused) and waits idle again, every task
//   it holds paused. a resumes resume_after later, while its restore thread waits.
//   Must hold: at every step the oracle's invariants — liveness_bounds above all (the resume
//   wakes the idle restore thread at the virtual time of the resume, not when its idle wait
//   runs out), paused_tasks (nothing restored into a task parked paused, from the moment it
//   arrives), registration (a parked task's changelogs are registered when it resumes); at the
//   end every task runs with counts equal to the reference model.
void PausedWhileIdleAssignedThenResumed(RunEnv& env) {
  Draws draw(env);
  const IdleParams p = IdleParams::From(draw);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, p.partitions);
  for (int32_t q = 0; q < p.partitions; ++q) {
    w.WriteChangelog(q, p.changelog_records);
    ProduceInput(w, env.random, q, p.input_records);
  }
  const Baselines baselines = BaselinesNow(w, p.partitions);
  Fleet fleet(w, {.restore_max_poll_records = p.restore_batch});
  fleet.Start();
  Generation g(fleet.size());
  for (int32_t q = 0; q < p.partitions; ++q) {
    g[q == 0 && p.a_runs_one ? kA : kB].actives.insert(q);
  }
  RS_CHECK(fleet.Rebalance(g).ok());
  AwaitConverged(env, w, fleet.members(), p.partitions);  // from here a's restore thread idles
  w.clock.SleepFor(p.pause_after_ns);
  fleet.SetPaused(fleet.instance_of(kA), true);
  for (int32_t q = 0; q < p.partitions; ++q) ProduceInput(w, env.random, q, p.input_records);
  w.clock.SleepFor(p.moved_after_ns);
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kA, p.partitions, /*standbys=*/false)).ok());
  w.clock.SleepFor(p.resume_after_ns);
  if (fleet.thread(kA).restore_thread().PausedActives() > 0) {
    TraceMark("scenario", "resume with new actives parked paused");
  }
  fleet.SetPaused(fleet.instance_of(kA), false);
  for (int32_t q = 0; q < p.partitions; ++q) ProduceInput(w, env.random, q, p.input_records);
  FinishFleet(env, w, fleet, p.partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.paused_while_idle_assigned_then_resumed",
                     .description = "a pauses while its restore thread idles, b's partitions "
                                    "move to it paused, a resumes while it idles again",
                     .steps_hint = 6'000,
                     .body = PausedWhileIdleAssignedThenResumed});

}  // namespace

}  // namespace restoresim::scenarios
