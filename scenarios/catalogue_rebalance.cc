// Rebalances the restore thread has not caught up with: a task revoked and assigned again
// before the restore thread applied the first change, a member lost while its tasks restore,
// and several generations between two polls.
#include <fmt/format.h>

#include "core/util/check.h"
#include "scenarios/catalogue.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

constexpr size_t kA = 0;
constexpr size_t kB = 1;

// Partitions 0.. of which 0 always, the others when Choose(2) == 1.
std::set<int32_t> DrawSubset(RunEnv& env, int32_t partitions) {
  std::set<int32_t> subset = {0};
  for (int32_t q = 1; q < partitions; ++q) {
    if (env.Choose(2) == 1) subset.insert(q);
  }
  return subset;
}

// scenario.revoke_then_reassign_before_restore_thread_saw_it
//   a restores every task from long changelogs (100-299 records) in small batches (2-5). Once
//   they are on its restore thread (and a drawn 0-9 ms later), a generation revokes some tasks
//   from a (0_0 always; to b when via_b, else to nobody), and
//   the next generation (reassign_after later: 0 = before a's next poll) gives them back to
//   a. The stream thread sends the CLOSE of an incarnation the restore thread still restores,
//   remembers it, and decides when the task comes back: resume it (same incarnation) when it
//   is wanted again, or close it.
//   Must hold: every oracle invariant — single ownership along the hand-off edges, no CLOSE
//   applied before its CREATE, nothing registered after its CLOSE; at the end every task runs
//   on a with counts equal to the reference model.
void RevokeThenReassign(RunEnv& env) {
  const int32_t partitions = 1 + static_cast<int32_t>(env.Choose(3));
  const int records = 100 + static_cast<int>(env.Choose(200));
  const int32_t restore_batch = 2 + static_cast<int32_t>(env.Choose(4));
  const int input_records = static_cast<int>(env.Choose(20));
  const TimeNs revoke_after_ns = static_cast<TimeNs>(env.Choose(10)) * kMillisecond;
  const TimeNs reassign_after_ns = static_cast<TimeNs>(env.Choose(4)) * kMillisecond;
  const bool via_b = env.Choose(2) == 1;
  const std::set<int32_t> revoked = DrawSubset(env, partitions);
  NoteParams(
      fmt::format("partitions={} records={} restore_batch={} input_records={} "
                  "revoke_after_ms={} reassign_after_ms={} via_b={} revoked=[{}]",
                  partitions, records, restore_batch, input_records, revoke_after_ns / kMillisecond,
                  reassign_after_ns / kMillisecond, via_b, fmt::join(revoked, ",")));
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, input_records);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  Fleet fleet(w, {.restore_max_poll_records = restore_batch});
  fleet.Start();
  Generation g = fleet.AllOn(kA, partitions, /*standbys=*/false);
  RS_CHECK(fleet.Rebalance(g).ok());
  fleet.AwaitHandedOver(env, kA, revoked);
  w.clock.SleepFor(revoke_after_ns);
  for (int32_t q : revoked) {
    g[kA].actives.erase(q);
    if (via_b) g[kB].actives.insert(q);
  }
  RS_CHECK(fleet.Rebalance(g).ok());
  w.clock.SleepFor(reassign_after_ns);
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kA, partitions, /*standbys=*/false)).ok());
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
  FinishFleet(env, w, fleet, partitions, baselines);
}

// scenario.lost_while_restoring
//   a restores every task (b holds standbys when drawn). A drawn 0-14 ms after its restore
//   thread has them, a is lost (its
//   session expired: no revocation, no commit) and b takes every task over at once. a sees the
//   loss at its next poll, closes what it runs dirty, gets back what its restore thread had,
//   and rejoins; then the same tasks (0_0 always) are assigned to a again. Input arrives only
//   once a has seen the loss, so it has processed nothing it did not commit (a member lost
//   with processed, uncommitted input, or one that processes on as a zombie until its next
//   poll, breaks exact counts and store contents by design under at-least-once: see
//   docs/SCENARIOS.md, "Lost members").
//   Must hold: every oracle invariant; every task runs again, on a or b, with counts equal to
//   the reference model.
void LostWhileRestoring(RunEnv& env) {
  const int32_t partitions = 1 + static_cast<int32_t>(env.Choose(3));
  const int records = 50 + static_cast<int>(env.Choose(100));
  const int32_t restore_batch = 2 + static_cast<int32_t>(env.Choose(9));
  const int input_records = static_cast<int>(env.Choose(20));
  const TimeNs lose_after_ns = static_cast<TimeNs>(env.Choose(15)) * kMillisecond;
  const bool standbys = env.Choose(2) == 1;
  const std::set<int32_t> back_to_a = DrawSubset(env, partitions);
  NoteParams(
      fmt::format("partitions={} records={} restore_batch={} input_records={} "
                  "lose_after_ms={} standbys={} back_to_a=[{}]",
                  partitions, records, restore_batch, input_records, lose_after_ns / kMillisecond,
                  standbys, fmt::join(back_to_a, ",")));
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) w.WriteChangelog(q, records);
  const Baselines baselines = BaselinesNow(w, partitions);
  Fleet fleet(w, {.restore_max_poll_records = restore_batch});
  fleet.Start();
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kA, partitions, standbys)).ok());
  fleet.AwaitHandedOver(env, kA, back_to_a);
  w.clock.SleepFor(lose_after_ns);
  RS_CHECK(fleet.Lose(kA).ok());
  Generation g(fleet.size());
  for (int32_t q = 0; q < partitions; ++q) g[kB].actives.insert(q);
  RS_CHECK(fleet.Rebalance(g).ok());
  fleet.AwaitAllActive(env);  // a saw the loss: it cannot process the input below as a zombie
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
  for (int32_t q : back_to_a) {
    g[kB].actives.erase(q);
    g[kA].actives.insert(q);
    if (standbys) g[kB].standbys.insert(q);
  }
  RS_CHECK(fleet.Rebalance(g).ok());
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
  FinishFleet(env, w, fleet, partitions, baselines);
}

// scenario.two_rebalances_between_polls
//   2-3 instances (one stream thread each) go through rounds of generations installed back to
//   back — two or three per round, before any member polls again — each drawn at random
//   (every task active somewhere, standbys on other instances when drawn), with input and a
//   pause between rounds. A member applies the generations it sees in one poll in order:
//   revocations, then the latest assignment.
//   Must hold: every oracle invariant; at the end every task runs where the last generation
//   put it, with counts equal to the reference model, and standbys caught up.
void TwoRebalancesBetweenPolls(RunEnv& env) {
  const int32_t instances = 2 + static_cast<int32_t>(env.Choose(2));
  const int32_t partitions = 1 + static_cast<int32_t>(env.Choose(4));
  const int records = static_cast<int>(env.Choose(50));
  const int32_t restore_batch = 2 + static_cast<int32_t>(env.Choose(19));
  const bool standbys = env.Choose(2) == 1;
  const int rounds = 1 + static_cast<int>(env.Choose(4));
  NoteParams(
      fmt::format("instances={} partitions={} records={} restore_batch={} standbys={} "
                  "rounds={}",
                  instances, partitions, records, restore_batch, standbys, rounds));
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) w.WriteChangelog(q, records);
  const Baselines baselines = BaselinesNow(w, partitions);
  Fleet fleet(w, {.instances = instances, .restore_max_poll_records = restore_batch});
  fleet.Start();
  for (int round = 0; round < rounds; ++round) {
    const int generations = 2 + static_cast<int>(env.Choose(2));
    for (int i = 0; i < generations; ++i) {
      RS_CHECK(fleet.Rebalance(fleet.Draw(env, partitions, standbys)).ok());
    }
    for (int32_t q = 0; q < partitions; ++q) {
      ProduceInput(w, env.random, q, static_cast<int>(env.Choose(10)));
    }
    w.clock.SleepFor(static_cast<TimeNs>(env.Choose(10)) * 10 * kMillisecond);
  }
  FinishFleet(env, w, fleet, partitions, baselines);
}

}  // namespace

absl::Status RegisterRebalanceScenarios(sim::ProgramRegistry& registry) {
  return AddAll(
      registry,
      {
          sim::Program{.name = "scenario.revoke_then_reassign_before_restore_thread_saw_it",
                       .description = "a restoring task revoked and assigned back before the "
                                      "restore thread applied the revocation",
                       .steps_hint = 7'000,
                       .steps_max = 2'000'000,
                       .body = RevokeThenReassign},
          sim::Program{.name = "scenario.lost_while_restoring",
                       .description = "a member lost while its tasks restore; the same tasks "
                                      "assigned to it again after it rejoins",
                       .steps_hint = 4'500,
                       .steps_max = 2'000'000,
                       .body = LostWhileRestoring},
          sim::Program{.name = "scenario.two_rebalances_between_polls",
                       .description = "rounds of two or three generations installed before "
                                      "any member polls again",
                       .steps_hint = 4'000,
                       .steps_max = 2'000'000,
                       .body = TwoRebalancesBetweenPolls},
      });
}

}  // namespace restoresim::scenarios
