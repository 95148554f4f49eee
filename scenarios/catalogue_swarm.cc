// The swarm: one scenario whose seed draws the whole shape of the run (Groce et al., "Swarm
// testing", ISSTA 2012: a random subset of features per run finds more than all features in
// every run).
#include <fmt/format.h>

#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

enum class SwarmEvent : uint64_t {
  kInputOnly = 0,   // no rebalance this round
  kGeneration = 1,  // a drawn generation: moves, recycles, new and closed tasks
  kSwap = 2,        // every task with a standby swaps it with its active (recycles both ways)
  kLoseMember = 3,  // a drawn member is lost, then a generation over the others
  kBackToBack = 4,  // two or three generations before any member polls
  kTruncate = 5,    // a changelog truncated (compaction-like): checkpoints below it corrupt
};
constexpr uint64_t kSwarmEvents = 6;

struct SwarmParams {
  int32_t instances = 1;
  int32_t threads_per_instance = 1;
  int32_t partitions = 1;
  bool standbys = false;      // (needs 2+ instances)
  int records = 0;            // initial changelog per partition
  int32_t restore_batch = 1;
  bool faults = false;        // a drawn broker fault profile
  int rounds = 0;
  bool two_stores = false;    // tasks with "counts" and "latest"

  static SwarmParams From(Draws& draw) {
    return {.instances = draw.Int<int32_t>("instances", 1, 3),
            .threads_per_instance = draw.Int<int32_t>("threads_per_instance", 1, 2),
            .partitions = draw.Int<int32_t>("partitions", 1, 6),
            .standbys = draw.Bool("standbys"),
            .records = draw.Int("records", 0, 99),
            .restore_batch = draw.Int<int32_t>("restore_batch", 1, 50),
            .faults = draw.Bool("faults"),
            .rounds = draw.Int("rounds", 0, 6),
            .two_stores = draw.Bool("two_stores")};
  }
};

// Swaps each task's active and standby (both members in the group).
Generation Swapped(Generation g) {
  Generation out(g.size());
  for (size_t i = 0; i < g.size(); ++i) {
    for (int32_t p : g[i].actives) {
      auto standby = std::find_if(
          g.begin(), g.end(), [p](const MemberAssignment& m) { return m.standbys.contains(p); });
      if (standby == g.end()) {
        out[i].actives.insert(p);
        continue;
      }
      out[standby - g.begin()].actives.insert(p);
      out[i].standbys.insert(p);
    }
  }
  return out;
}

// scenario.swarm
//   The seed draws the topology (1-6 partitions), the fleet (1-3 instances of 1-2 stream
//   threads), one or two stores per task, standbys, the data volume and restore batch size, a
//   broker fault profile (or none), and 0-6 rounds, each one event — input only, a drawn
//   generation, a swap of actives and standbys (recycles both ways), a lost member,
//   generations back to back, or a compaction-like truncation of a changelog (a checkpoint
//   below it is corruption: revive) — then input and a pause.
//   With faults and standbys, the restore consumers' Assign may also find the metadata
//   unavailable (drawn after the broker's profile), which can fail a reader's step after it
//   applied batches (an unregister mid-step, then the step's last assignment).
//   Must hold: every oracle invariant throughout; after the fault-free tail every task runs,
//   every store equals its changelog, standbys caught up, the shutdown is clean and in time,
//   and the counts equal the reference model.
// One round's event (SwarmEvent), drawn; `g` is the latest generation.
void PlayEvent(RunEnv& env, Draws& draw, RuntimeWorld& w, Fleet& fleet, const SwarmParams& p,
               Generation& g) {
  switch (draw.Enum<SwarmEvent>(kSwarmEvents)) {
    case SwarmEvent::kInputOnly:
      break;
    case SwarmEvent::kGeneration:
      g = fleet.Draw(env, p.partitions, p.standbys);
      RS_CHECK(fleet.Rebalance(g).ok());
      break;
    case SwarmEvent::kSwap:
      g = Swapped(g);
      RS_CHECK(fleet.Rebalance(g).ok());
      break;
    case SwarmEvent::kLoseMember: {
      // Lost once every input record is committed, and no input arrives until it has seen
      // the loss: a member lost with processed, uncommitted input — or one that goes on
      // processing, a zombie, until its next poll — breaks exact counts and store contents
      // by design under at-least-once (see docs/SCENARIOS.md, "Lost members").
      // Under faults that quiet moment may not come soon: then nobody is lost this round.
      if (fleet.size() < 2 ||
          !Converges(w, fleet.members(), p.partitions,
                     {.timeout_ns = 5 * kSecond, .require_standbys = false})) {
        break;
      }
      RS_CHECK(fleet.Lose(draw.Int<size_t>(0, fleet.size() - 1)).ok());
      g = fleet.Draw(env, p.partitions, p.standbys);
      RS_CHECK(fleet.Rebalance(g).ok());
      // It rejoins at its next poll, and a rejoin starts a generation (as the group protocol
      // does; in manual mode the scenario is the assignor): until then it keeps its standbys.
      fleet.AwaitAllActive(env);
      g = fleet.Draw(env, p.partitions, p.standbys);
      RS_CHECK(fleet.Rebalance(g).ok());
      break;
    }
    case SwarmEvent::kTruncate: {
      // Harmless (every key deleted has a later record): below every key's last record.
      const int32_t q = draw.Int<int32_t>(0, p.partitions - 1);
      for (const std::string& store : w.stores) {
        const int64_t harmless = HarmlessTruncationMax(w, q, store);
        if (harmless <= 1) continue;
        TruncateHarmlessly(w, q, draw.Int<int64_t>(1, harmless), store);
      }
      break;
    }
    case SwarmEvent::kBackToBack: {
      const int generations = draw.Int(2, 3);
      for (int i = 0; i < generations; ++i) {
        g = fleet.Draw(env, p.partitions, p.standbys);
        RS_CHECK(fleet.Rebalance(g).ok());
      }
      break;
    }
  }
}

void Swarm(RunEnv& env) {
  Draws draw(env);
  const SwarmParams p = SwarmParams::From(draw);
  fakes::BrokerFaults faults = p.faults ? DrawBrokerFaults(env) : fakes::BrokerFaults{};
  // Only with faults and standbys: runs without them draw as before.
  if (p.faults && p.standbys && draw.Bool("metadata_unavailable")) {
    faults.metadata_unavailable_per_mille =
        draw.Int<uint32_t>("metadata_unavailable_per_mille", 1, 300);
  }
  draw.Note("broker faults: " + faults.ToString());
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, p.partitions, kMillisecond,
                 p.two_stores ? std::vector<std::string>{"counts", "latest"}
                              : std::vector<std::string>{"counts"});
  for (int32_t q = 0; q < p.partitions; ++q) {
    w.WriteChangelog(q, p.records);
    ProduceInput(w, env.random, q, draw.Int(0, 19));
  }
  const Baselines baselines = BaselinesNow(w, p.partitions);
  Fleet fleet(w, {.instances = p.instances,
                  .threads_per_instance = p.threads_per_instance,
                  .restore_max_poll_records = p.restore_batch});
  fleet.Start();
  w.broker.SetFaults(faults);
  Generation g = fleet.Draw(env, p.partitions, p.standbys);
  RS_CHECK(fleet.Rebalance(g).ok());
  for (int round = 0; round < p.rounds; ++round) {
    fleet.AwaitAllActive(env);
    PlayEvent(env, draw, w, fleet, p, g);
    for (int32_t q = 0; q < p.partitions; ++q) {
      ProduceInput(w, env.random, q, draw.Int(0, 14));
    }
    w.clock.SleepFor(draw.Ms(0, 180, 20));
  }
  FinishFleet(env, w, fleet, p.partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.swarm",
                     .description = "seed-drawn topology, fleet, standbys, data, rebalances, lost "
                                    "members and broker faults",
                     .steps_hint = 16'000,
                     .steps_max = 3'000'000,
                     .body = Swarm});

}  // namespace

}  // namespace restoresim::scenarios
