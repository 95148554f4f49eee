// The Streams assignor on the group leader (streams_group_assignor.h, fake_group.h): instances
// whose stream threads offer it, so every generation is Kafka Streams' high-availability
// assignment over the members' task offset sums — standbys placed by num.standby.replicas,
// new instances warmed up before they take actives over in a probing rebalance. Instances are
// built as a Fleet builds them (one StateDirectory and state directory each, threads
// "<instance>-StreamThread-1"), but start one by one and are never rebalanced by hand.
#include <fmt/format.h>

#include <memory>

#include "core/runtime/state_directory.h"
#include "core/runtime/stream_thread.h"
#include "core/util/check.h"
#include "scenarios/rotting_store.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

struct AssignorParams {
  int32_t instances = 2;       // a, then the new ones
  int32_t partitions = 2;      // instances or one more: every instance gets an active
  int changelog_records = 60;  // per partition before the application runs
  int32_t restore_batch = 2;   // restore.max_poll_records
  int64_t acceptable_lag = 5;  // acceptable.recovery.lag
  int64_t probing_ms = 300;    // probing.rebalance.interval.ms
  TimeNs join_gap_ns = 0;      // between the new instances' joins
  int input_records = 0;       // per partition and burst

  static AssignorParams From(Draws& draw) {
    AssignorParams p;
    p.instances = draw.Int<int32_t>(2, 3);  // noted after partitions
    p.partitions = draw.Int<int32_t>("partitions", p.instances, p.instances + 1);
    draw.Fixed("instances", p.instances);
    p.changelog_records = draw.Int("changelog_records", 60, 199);
    p.restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
    p.acceptable_lag = draw.Int<int64_t>("acceptable_lag", 5, 14);
    p.probing_ms = draw.Ms("probing_ms", 300, 700, 100) / kMillisecond;
    p.join_gap_ns = draw.Ms("join_gap_ms", 0, 100, 50);
    p.input_records = draw.Int("input_records", 0, 19);
    return p;
  }
};

// Instances of one stream thread each, offering the Streams assignor.
class AssignorFleet {
 public:
  // `open_store`: the instances' stores (empty: the world's LogStores).
  AssignorFleet(RuntimeWorld& w, const AssignorParams& p, StoreOpener open_store = nullptr,
                bool exactly_once = false) {
    for (int32_t i = 0; i < p.instances; ++i) {
      const std::string instance(1, static_cast<char>('a' + i));
      directories_.push_back(std::make_unique<StateDirectory>());
      StreamThreadConfig c = w.StreamConfig(instance + "-StreamThread-1");
      c.tasks.state_dir = fmt::format("/state/{}/app", instance);
      c.tasks.directory = directories_.back().get();
      c.poll_timeout_ns = kPollNs;
      c.commit_interval_ns = kCommitIntervalNs;
      c.restore.max_poll_records = p.restore_batch;
      c.restore.checkpoint_interval_ns = 500 * kMillisecond;
      c.streams_assignor = StreamsGroupAssignorConfig{
          .application_id = "app",
          .input_topic = "input",
          .store_names = w.stores,
          .tasks = {.num_standby_replicas = 1,
                    .max_warmup_replicas = 2,
                    .acceptable_recovery_lag = p.acceptable_lag},
          .probing_rebalance_interval_ms = p.probing_ms};
      c.process_id = instance;
      if (open_store) c.tasks.open_store = open_store;
      c.tasks.exactly_once = exactly_once;
      state_dirs_.push_back(c.tasks.state_dir);
      threads_.push_back(
          std::make_unique<StreamThread>(std::move(c), w.broker, w.clock, nullptr, incarnations_));
    }
  }
  StreamThread& thread(size_t i) { return *threads_[i]; }
  size_t size() const { return threads_.size(); }
  std::vector<Member> members(size_t count) {
    std::vector<Member> out;
    for (size_t i = 0; i < count; ++i) out.push_back({threads_[i].get(), state_dirs_[i]});
    return out;
  }
  absl::Status Shutdown(TimeNs timeout_ns) {
    const TimeNs deadline_ns = DeadlineAfter(clock_now_(), timeout_ns);
    absl::Status first;
    for (auto& t : threads_) {
      const TimeNs now = clock_now_();
      absl::Status s = t->Shutdown(deadline_ns > now ? deadline_ns - now : 0);
      if (first.ok() && !s.ok()) first = s;
    }
    return first;
  }
  std::function<TimeNs()> clock_now_;

 private:
  std::vector<std::unique_ptr<StateDirectory>> directories_;
  Atomic<uint64_t> incarnations_{0, "assignor_fleet_incarnations"};
  std::vector<std::unique_ptr<StreamThread>> threads_;
  std::vector<std::string> state_dirs_;
};

// Whether every instance runs at least its share (partitions / instances) of actives.
bool Balanced(AssignorFleet& fleet, int32_t partitions) {
  const size_t share = static_cast<size_t>(partitions) / fleet.size();
  for (size_t i = 0; i < fleet.size(); ++i) {
    if (fleet.thread(i).task_manager().running().size() < share) return false;
  }
  return true;
}

// At the end: each task's standby (num.standby.replicas = 1) on an instance other than its
// active's.
void CheckStandbysPlaced(RunEnv& env, AssignorFleet& fleet, int32_t partitions) {
  for (int32_t q = 0; q < partitions; ++q) {
    const TaskId id{0, q};
    size_t active = fleet.size();
    size_t standbys = 0;
    for (size_t i = 0; i < fleet.size(); ++i) {
      if (fleet.thread(i).task_manager().running().contains(id)) active = i;
      if (fleet.thread(i).task_manager().wanted_standby().contains(id)) ++standbys;
    }
    if (active == fleet.size() || standbys < 1 ||
        fleet.thread(active).task_manager().wanted_standby().contains(id)) {
      FailInvariant(env, "final_state", id.ToString(),
                    fmt::format("{} standby(s) placed by the assignor, active on {}: every task "
                                "needs its num.standby.replicas=1 standby on another instance",
                                standbys, active == fleet.size() ? "none"
                                                                 : fleet.thread(active).name()));
    }
  }
}

// The start of the assignor stories: a alone until it runs every task, then the others join
// and the probing rebalances balance the actives (failing "liveness" if they never do).
void StartAndBalance(RunEnv& env, RuntimeWorld& w, AssignorFleet& fleet,
                     const AssignorParams& p) {
  fleet.clock_now_ = [&w]() { return w.clock.NowNs(); };
  fleet.thread(0).Start();
  AwaitConverged(env, w, fleet.members(1), p.partitions, {.require_standbys = false});
  for (int32_t q = 0; q < p.partitions; ++q) ProduceInput(w, env.random, q, p.input_records);
  for (size_t i = 1; i < fleet.size(); ++i) {
    if (i > 1) w.clock.SleepFor(p.join_gap_ns);
    TraceMark("scenario", "instance joins: " + fleet.thread(i).name());
    fleet.thread(i).Start();
  }
  const TimeNs deadline = w.clock.NowNs() + kConvergeNsMax;
  while (w.broker.Members("app").size() < fleet.size() && w.clock.NowNs() < deadline) {
    w.clock.SleepFor(5 * kMillisecond);
  }
  while (!Balanced(fleet, p.partitions) && w.clock.NowNs() < deadline) {
    w.clock.SleepFor(10 * kMillisecond);
  }
  const StreamsGroupAssignor* leader = fleet.thread(0).streams_assignor();
  if (!Balanced(fleet, p.partitions) || leader->probing_scheduled() == 0) {
    FailInvariant(env, "liveness", "assignor",
                  fmt::format("not balanced within {} s ({} probing rebalances scheduled): the "
                              "new instances never took actives over",
                              kConvergeNsMax / kSecond, leader->probing_scheduled()));
  }
}

// The tail of the assignor stories: converged, stores and standbys checked, shut down.
void FinishAssignorFleet(RunEnv& env, RuntimeWorld& w, AssignorFleet& fleet, int32_t partitions,
                         const Baselines& baselines) {
  const std::vector<Member> members = fleet.members(fleet.size());
  AwaitConverged(env, w, members, partitions);
  CheckRunningStores(env, w, members);
  CheckStandbysPlaced(env, fleet, partitions);
  const auto standbys = WantedStandbys(members);
  // The tail: no more generations while the instances leave one by one.
  w.broker.SetManualAssignment("app", true);
  ShutdownWithin(env, w, "fleet", kShutdownTimeoutNs,
                 [&](TimeNs timeout_ns) { return fleet.Shutdown(timeout_ns); });
  w.oracle.CheckFinal();
  CheckChangelogs(env, w, partitions, baselines);
  CheckStandbys(env, w, standbys, 0);
}

// scenario.standbys_placed_by_assignor
//   Instances offering the Streams assignor (num.standby.replicas=1, a small
//   acceptable.recovery.lag, a short probing.rebalance.interval.ms): a starts alone and
//   restores every task's long changelog; once they run, one or two new instances join (a
//   drawn gap apart) with no state. The leader's assignor keeps the actives on a (the new
//   instances are not caught up) and gives the new instances standbys or warm-ups of the
//   tasks that are to move; they restore them; the probing rebalances the leader triggers
//   then move the caught-up tasks over, until the assignment is balanced.
//   Must hold: at every step the oracle's invariants; the leader's assignor scheduled a
//   probing rebalance and, in the end, every instance runs its share of the actives (the
//   probing moves happened); every task has its standby on an instance other than its
//   active's; the counts equal the reference model and the standbys caught up.
void StandbysPlacedByAssignor(RunEnv& env) {
  Draws draw(env);
  const AssignorParams p = AssignorParams::From(draw);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, p.partitions);
  for (int32_t q = 0; q < p.partitions; ++q) {
    w.WriteChangelog(q, p.changelog_records);
    ProduceInput(w, env.random, q, p.input_records);
  }
  const Baselines baselines = BaselinesNow(w, p.partitions);
  AssignorFleet fleet(w, p);
  StartAndBalance(env, w, fleet, p);
  TraceMark("cover", "probing rebalance moved actives to caught-up instances");
  if (fleet.thread(0).streams_assignor()->with_warmups() > 0) {
    TraceMark("cover", "assignor scenario saw a warm-up");
  }
  FinishAssignorFleet(env, w, fleet, p.partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.standbys_placed_by_assignor",
                     .description = "the leader's Streams assignor places standbys and warm-ups; "
                                    "probing rebalances move caught-up tasks to new instances",
                     .steps_hint = 20'000,
                     .steps_max = 4'000'000,
                     .body = StandbysPlacedByAssignor});

// Whether every task runs somewhere with a standby wanted on another instance (what
// CheckStandbysPlaced requires).
bool StandbysPlacedNow(AssignorFleet& fleet, int32_t partitions) {
  for (int32_t q = 0; q < partitions; ++q) {
    size_t active = fleet.size();
    bool standby_elsewhere = false;
    for (size_t i = 0; i < fleet.size(); ++i) {
      if (fleet.thread(i).task_manager().running().contains(TaskId{0, q})) active = i;
    }
    for (size_t i = 0; i < fleet.size(); ++i) {
      if (i != active && fleet.thread(i).task_manager().wanted_standby().contains(TaskId{0, q})) {
        standby_elsewhere = true;
      }
    }
    if (active == fleet.size() || !standby_elsewhere) return false;
  }
  return true;
}

// The instance (index) whose thread runs task `id`, and one that wants its standby; size() if
// none.
std::pair<size_t, size_t> ActiveAndStandbyOf(AssignorFleet& fleet, TaskId id) {
  size_t active = fleet.size();
  size_t standby = fleet.size();
  for (size_t i = 0; i < fleet.size(); ++i) {
    if (fleet.thread(i).task_manager().running().contains(id)) active = i;
    if (fleet.thread(i).task_manager().wanted_standby().contains(id)) standby = i;
  }
  return {active, standby};
}

// scenario.eos_corrupted_active_moves_to_its_standby
//   Instances offering the Streams assignor under exactly_once_v2 (num.standby.replicas=1):
//   a restores every task alone, the others join, the probing rebalances balance the actives,
//   and every task's standby catches up on another instance. Then the stores of one drawn
//   task's active rot at a drawn read (testing::StoreRot) while more input arrives: the task is
//   corrupted while processing, closed dirty and wiped.
//   Must hold: the oracle's invariants; its thread enforces a rebalance and the leader's
//   assignor moves the active (assigns it, or runs it) to the instance whose standby is caught
//   up, within
//   kConvergeNsMax, instead of leaving it to restore from scratch where its state was wiped
//   (Kafka's KAFKA-12486); the counts equal the reference model; standbys caught up at the end.
//   Coverage: "cover/corrupted active moved to its caught-up standby".
void EosCorruptedActiveMovesToItsStandby(RunEnv& env) {
  Draws draw(env);
  const AssignorParams p = AssignorParams::From(draw);
  const int32_t rotting = draw.Int<int32_t>("rotting", 0, p.partitions - 1);
  const int64_t rot_at = draw.Int<int64_t>("rot_at_read", 1, 10);
  const int input = draw.Int("input", 10, 29);
  draw.NoteParams();
  TraceMark("scenario", "exactly once");
  RuntimeWorld w(/*faults=*/false, p.partitions);
  for (int32_t q = 0; q < p.partitions; ++q) {
    w.WriteChangelog(q, p.changelog_records);
    ProduceInput(w, env.random, q, p.input_records);
  }
  const Baselines baselines = BaselinesNow(w, p.partitions);
  testing::StoreRot rot("", 0);
  AssignorFleet fleet(w, p, testing::RottingStoreOpener(w.LogStoreOpener(), rot),
                      /*exactly_once=*/true);
  StartAndBalance(env, w, fleet, p);
  AwaitConverged(env, w, fleet.members(fleet.size()), p.partitions);  // standbys caught up
  const TaskId id{0, rotting};
  const auto [from, standby] = ActiveAndStandbyOf(fleet, id);
  RS_CHECK(from < fleet.size() && standby < fleet.size() && from != standby);
  rot.Arm(fmt::format("/state/{}/app/{}/", static_cast<char>('a' + from), id.ToString()), rot_at);
  for (int32_t q = 0; q < p.partitions; ++q) ProduceInput(w, env.random, q, input);
  const TimeNs deadline = w.clock.NowNs() + kConvergeNsMax;
  while (rot.rotted() == 0 && w.clock.NowNs() < deadline) w.clock.SleepFor(kMillisecond);
  // Moved once the assignment gives the active to the standby's instance: a probing rebalance
  // may balance it back before it runs there, to the instance whose standby, restored since the
  // wipe, is caught up too (pos seed 764: b restored it for 300 ms, a restore poll of 100 ms per
  // task, and the probing rebalance 300 ms after the corruption moved it back to a).
  auto moved = [&fleet, &id, to = standby] {  // a structured binding: captured by value
    return ActiveAndStandbyOf(fleet, id).first == to ||
           fleet.thread(to).task_manager().wanted_active().contains(id);
  };
  while (!moved() && w.clock.NowNs() < deadline) w.clock.SleepFor(5 * kMillisecond);
  if (rot.rotted() == 0 || !moved()) {
    FailInvariant(env, "liveness", id.ToString(),
                  fmt::format("corrupted on {} (rot found: {}), its active never moved to {} "
                              "whose standby was caught up, within {} s",
                              fleet.thread(from).name(), rot.rotted() > 0,
                              fleet.thread(standby).name(), kConvergeNsMax / kSecond));
  }
  TraceMark("cover", "corrupted active moved to its caught-up standby");
  // The probing rebalances the move sets off settle before the tail checks the placement.
  const TimeNs settle_by = w.clock.NowNs() + kConvergeNsMax;
  while (!(Balanced(fleet, p.partitions) && StandbysPlacedNow(fleet, p.partitions)) &&
         w.clock.NowNs() < settle_by) {
    w.clock.SleepFor(10 * kMillisecond);
  }
  FinishAssignorFleet(env, w, fleet, p.partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.eos_corrupted_active_moves_to_its_standby",
                     .description = "exactly once: an active found corrupted while processing "
                                    "moves to its caught-up standby (KAFKA-12486)",
                     .steps_hint = 25'000,
                     .steps_max = 4'000'000,
                     .body = EosCorruptedActiveMovesToItsStandby});

}  // namespace

}  // namespace restoresim::scenarios
