// The swarm: one scenario whose seed draws the whole shape of the run (Groce et al., "Swarm
// testing", ISSTA 2012: a random subset of features per run finds more than all features in
// every run).
#include <fmt/format.h>

#include "core/util/check.h"
#include "scenarios/catalogue.h"
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
  int32_t instances = 1;             // 1 + Choose(3)
  int32_t threads_per_instance = 1;  // 1 + Choose(2)
  int32_t partitions = 1;            // 1 + Choose(6)
  bool standbys = false;             // Choose(2) == 1 (needs 2+ instances)
  int records = 0;                   // initial changelog per partition: Choose(100)
  int32_t restore_batch = 1;         // 1 + Choose(50)
  bool faults = false;               // a drawn broker fault profile: Choose(2) == 1
  int rounds = 0;                    // Choose(7)
  bool two_stores = false;           // tasks with "counts" and "latest": Choose(2) == 1

  static SwarmParams Draw(RunEnv& env) {
    SwarmParams p;
    p.instances = 1 + static_cast<int32_t>(env.Choose(3));
    p.threads_per_instance = 1 + static_cast<int32_t>(env.Choose(2));
    p.partitions = 1 + static_cast<int32_t>(env.Choose(6));
    p.standbys = env.Choose(2) == 1;
    p.records = static_cast<int>(env.Choose(100));
    p.restore_batch = 1 + static_cast<int32_t>(env.Choose(50));
    p.faults = env.Choose(2) == 1;
    p.rounds = static_cast<int>(env.Choose(7));
    p.two_stores = env.Choose(2) == 1;
    return p;
  }
  std::string ToString() const {
    return fmt::format(
        "instances={} threads_per_instance={} partitions={} standbys={} records={} "
        "restore_batch={} faults={} rounds={} two_stores={}",
        instances, threads_per_instance, partitions, standbys, records, restore_batch, faults,
        rounds, two_stores);
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
//   Must hold: every oracle invariant throughout; after the fault-free tail every task runs,
//   every store equals its changelog, standbys caught up, the shutdown is clean and in time,
//   and the counts equal the reference model.
void Swarm(RunEnv& env) {
  const SwarmParams p = SwarmParams::Draw(env);
  const fakes::BrokerFaults faults = p.faults ? DrawBrokerFaults(env) : fakes::BrokerFaults{};
  NoteParams(fmt::format("{} broker faults: {}", p.ToString(), faults.ToString()));
  RuntimeWorld w(/*faults=*/false, p.partitions, kMillisecond,
                 p.two_stores ? std::vector<std::string>{"counts", "latest"}
                              : std::vector<std::string>{"counts"});
  for (int32_t q = 0; q < p.partitions; ++q) {
    w.WriteChangelog(q, p.records);
    ProduceInput(w, env.random, q, static_cast<int>(env.Choose(20)));
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
    switch (static_cast<SwarmEvent>(env.Choose(kSwarmEvents))) {
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
        RS_CHECK(fleet.Lose(env.Choose(fleet.size())).ok());
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
        const int32_t q = static_cast<int32_t>(env.Choose(p.partitions));
        for (const std::string& store : w.stores) {
          const int64_t harmless = HarmlessTruncationMax(w, q, store);
          if (harmless <= 1) continue;
          TruncateHarmlessly(w, q, 1 + static_cast<int64_t>(env.Choose(harmless)), store);
        }
        break;
      }
      case SwarmEvent::kBackToBack: {
        const int generations = 2 + static_cast<int>(env.Choose(2));
        for (int i = 0; i < generations; ++i) {
          g = fleet.Draw(env, p.partitions, p.standbys);
          RS_CHECK(fleet.Rebalance(g).ok());
        }
        break;
      }
    }
    for (int32_t q = 0; q < p.partitions; ++q) {
      ProduceInput(w, env.random, q, static_cast<int>(env.Choose(15)));
    }
    w.clock.SleepFor(static_cast<TimeNs>(env.Choose(10)) * 20 * kMillisecond);
  }
  FinishFleet(env, w, fleet, p.partitions, baselines);
}

}  // namespace

absl::Status RegisterSwarmScenario(sim::ProgramRegistry& registry) {
  return AddAll(registry,
                {
                    sim::Program{.name = "scenario.swarm",
                                 .description = "seed-drawn topology, fleet, standbys, data, "
                                                "rebalances, lost members and broker faults",
                                 .steps_hint = 16'000,
                                 .steps_max = 3'000'000,
                                 .body = Swarm},
                });
}

}  // namespace restoresim::scenarios
