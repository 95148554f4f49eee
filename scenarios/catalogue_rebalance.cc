// Rebalances the restore thread has not caught up with: a task revoked and assigned again
// before the restore thread applied the first change, a member lost while its tasks restore,
// and several generations between two polls.
#include <fmt/format.h>

#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;


// Partitions 0.. of which 0 always, the others when drawn; noted as "name=[0,2]".
std::set<int32_t> DrawSubset(Draws& draw, std::string_view name, int32_t partitions) {
  std::set<int32_t> subset = {0};
  for (int32_t q = 1; q < partitions; ++q) {
    if (draw.Bool()) subset.insert(q);
  }
  draw.Note(fmt::format("{}=[{}]", name, fmt::join(subset, ",")));
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
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int records = draw.Int("records", 100, 299);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 5);
  const int input_records = draw.Int("input_records", 0, 19);
  const TimeNs revoke_after_ns = draw.Ms("revoke_after_ms", 0, 9);
  const TimeNs reassign_after_ns = draw.Ms("reassign_after_ms", 0, 3);
  const bool via_b = draw.Bool("via_b");
  const std::set<int32_t> revoked = DrawSubset(draw, "revoked", partitions);
  draw.NoteParams();
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
RESTORESIM_SCENARIO({.name = "scenario.revoke_then_reassign_before_restore_thread_saw_it",
                     .description = "a restoring task revoked and assigned back before the "
                                    "restore thread applied the revocation",
                     .steps_hint = 7'000,
                     .body = RevokeThenReassign});

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
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int records = draw.Int("records", 50, 149);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const int input_records = draw.Int("input_records", 0, 19);
  const TimeNs lose_after_ns = draw.Ms("lose_after_ms", 0, 14);
  const bool standbys = draw.Bool("standbys");
  const std::set<int32_t> back_to_a = DrawSubset(draw, "back_to_a", partitions);
  draw.NoteParams();
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
RESTORESIM_SCENARIO({.name = "scenario.lost_while_restoring",
                     .description = "a member lost while its tasks restore; the same tasks "
                                    "assigned to it again after it rejoins",
                     .steps_hint = 4'500,
                     .body = LostWhileRestoring});

// scenario.two_rebalances_between_polls
//   2-3 instances (one stream thread each) go through rounds of generations installed back to
//   back — two or three per round, before any member polls again — each drawn at random
//   (every task active somewhere, standbys on other instances when drawn), with input and a
//   pause between rounds. A member applies the generations it sees in one poll in order:
//   revocations, then the latest assignment.
//   Must hold: every oracle invariant; at the end every task runs where the last generation
//   put it, with counts equal to the reference model, and standbys caught up.
void TwoRebalancesBetweenPolls(RunEnv& env) {
  Draws draw(env);
  const int32_t instances = draw.Int<int32_t>("instances", 2, 3);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 4);
  const int records = draw.Int("records", 0, 49);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 20);
  const bool standbys = draw.Bool("standbys");
  const int rounds = draw.Int("rounds", 1, 4);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) w.WriteChangelog(q, records);
  const Baselines baselines = BaselinesNow(w, partitions);
  Fleet fleet(w, {.instances = instances, .restore_max_poll_records = restore_batch});
  fleet.Start();
  for (int round = 0; round < rounds; ++round) {
    const int generations = draw.Int(2, 3);
    for (int i = 0; i < generations; ++i) {
      RS_CHECK(fleet.Rebalance(fleet.Draw(env, partitions, standbys)).ok());
    }
    for (int32_t q = 0; q < partitions; ++q) {
      ProduceInput(w, env.random, q, draw.Int(0, 9));
    }
    w.clock.SleepFor(draw.Ms(0, 90, 10));
  }
  FinishFleet(env, w, fleet, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.two_rebalances_between_polls",
                     .description = "rounds of two or three generations installed before any "
                                    "member polls again",
                     .steps_hint = 4'000,
                     .body = TwoRebalancesBetweenPolls});

}  // namespace

}  // namespace restoresim::scenarios
