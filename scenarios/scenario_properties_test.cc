// Generator-driven scenario properties: rapidcheck generates a small scenario description, the
// whole runtime runs it under the simulator, and a failure shrinks to a small description.
//
// A description: 1-4 partitions; how much changelog data each partition's store starts from and
// how much input each starts with; 1-5 rebalance steps for two stream threads (per partition:
// active on a, on b, or nowhere for the moment, and a standby on the other thread or not; then
// more input and a pause), the last of which places every partition; broker faults on or off;
// the restore consumer's max.poll.records; the simulator seed. Each stream thread has its own
// restore thread, and RuntimeWorld runs the invariant oracle over everything.
//
// The checks, once every input partition is committed to its end (within 120 s of virtual
// time after the last step; 600 s with faults, where a request may time out after 30 s):
//   * without faults (clean hand-overs: every revocation commits), every changelog folds to
//     exactly the reference counts of the initial changelog plus all input, every running
//     store holds exactly those counts, and the changelogs still fold to them after both
//     threads shut down (nothing a producer still held lands late);
//   * with faults, a commit may fail and a task close dirty, so at-least-once may count an input
//     twice: every running store must still equal the fold of its own changelog;
//   * every partition runs on one of the threads, both stream threads are alive (neither
//     stopped on an error), and both shut down.
//
// Each case is small (a run is at most a few hundred thousand scheduling steps), so the 500
// cases of the fault-free property take well under a second. RC_PARAMS="seed=N max_success=M"
// explores further; --gtest_also_run_disabled_tests runs the property with faults (see the
// known bug at its end); RESTORESIM_PROPERTY_TIMELINE=FILE writes a failing case's timeline.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdlib>
#include <exception>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "core/runtime/count_topology.h"
#include "core/runtime/stream_thread.h"
#include "properties/rc_check.h"
#include "core/port/posix_file_system.h"
#include "scenarios/runtime_world.h"
#include "sim/chrome_trace.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using testing::Assign;
using testing::Changelog;
using testing::Input;
using testing::RuntimeWorld;

constexpr int kCases = 500;
constexpr int kFaultCases = 1000;
constexpr int kEosFaultCases = 1000;
constexpr TimeNs kConvergeNsMax = 120 * kSecond;
constexpr TimeNs kConvergeWithFaultsNsMax = 600 * kSecond;
constexpr TimeNs kShutdownNsMax = 300 * kSecond;

// What the cases exercised, printed after the property (so a reader sees it is not vacuous).
// Counts every run, shrink attempts included.
struct Coverage {
  int64_t runs = 0, with_faults = 0, rebalances = 0, created = 0, recycled = 0, revived = 0,
          closed_dirty = 0, sim_steps = 0;
  TimeNs virtual_ns = 0;
};
Coverage coverage;

// ---------------------------------------------------------------------------------------------
// The description and its generator.

struct Placement {
  int active_on = 0;     // 0: thread a, 1: thread b, 2: nowhere (this step only)
  bool standby = false;  // a standby on the other thread
};

struct RebalanceStep {
  std::vector<Placement> placement;  // per partition
  int input_records = 0;             // appended to every partition after the rebalance
  int pause_ms = 0;                  // before the next step
};

struct Scenario {
  int32_t partitions = 1;
  std::vector<int> changelog_records;  // per partition, before the threads start
  std::vector<int> input_records;      // per partition, before the threads start
  std::vector<RebalanceStep> steps;
  bool faults = false;
  bool exactly_once = false;  // processing.guarantee=exactly_once_v2
  int32_t restore_max_poll_records = 1000;
  uint64_t sim_seed = 0;
};

std::ostream& operator<<(std::ostream& os, const Scenario& s) {
  os << fmt::format("{} partitions, faults {}, {}, restore max.poll.records {}, sim seed {}\n",
                    s.partitions, s.faults ? "on" : "off",
                    s.exactly_once ? "exactly_once_v2" : "at_least_once",
                    s.restore_max_poll_records, s.sim_seed);
  os << "  initial changelog/input per partition:";
  for (int32_t p = 0; p < s.partitions; ++p) {
    os << fmt::format(" {}:{}/{}", p, s.changelog_records[p], s.input_records[p]);
  }
  for (size_t i = 0; i < s.steps.size(); ++i) {
    os << "\n  step " << i << ":";
    for (int32_t p = 0; p < s.partitions; ++p) {
      const Placement& pl = s.steps[i].placement[p];
      static constexpr const char* kWhere[] = {"a", "b", "-"};
      os << fmt::format(
          " {}:{}{}", p, kWhere[pl.active_on],
          pl.standby && pl.active_on != 2 ? (pl.active_on == 0 ? "+sb(b)" : "+sb(a)") : "");
    }
    os << fmt::format("; +{} input; pause {} ms", s.steps[i].input_records, s.steps[i].pause_ms);
  }
  return os;
}

// `faults`: whether descriptions may turn broker faults on.
rc::Gen<Scenario> GenScenario(bool faults, bool exactly_once) {
  return rc::gen::exec([faults, exactly_once]() {
    Scenario s;
    s.exactly_once = exactly_once;
    s.partitions = *rc::gen::inRange(1, 5);
    for (int32_t p = 0; p < s.partitions; ++p) {
      s.changelog_records.push_back(*rc::gen::inRange(0, 60));
      s.input_records.push_back(*rc::gen::inRange(0, 30));
    }
    const int steps = *rc::gen::inRange(1, 6);
    for (int i = 0; i < steps; ++i) {
      RebalanceStep step;
      for (int32_t p = 0; p < s.partitions; ++p) {
        step.placement.push_back(Placement{.active_on = *rc::gen::inRange(0, 3),
                                           .standby = *rc::gen::arbitrary<bool>()});
      }
      step.input_records = *rc::gen::inRange(0, 10);
      // Short pauses half the time: a rebalance then lands between two commits.
      step.pause_ms = *rc::gen::weightedOneOf<int>(
          {{1, rc::gen::inRange(0, 250)}, {1, rc::gen::inRange(250, 2000)}});
      s.steps.push_back(std::move(step));
    }
    s.faults = faults && *rc::gen::arbitrary<bool>();
    s.restore_max_poll_records = *rc::gen::inRange(1, 51);
    s.sim_seed = *rc::gen::inRange<uint64_t>(0, 1000);
    return s;
  });
}

// ---------------------------------------------------------------------------------------------
// Running one description.

void ProduceInput(RuntimeWorld& w, int32_t p, int n) {
  const int64_t from = *w.broker.EndOffset(Input(p));
  for (int64_t i = from; i < from + n; ++i) {
    std::optional<std::string> value;
    if (i % 11 != 10) value = std::to_string(1 + i % 4);
    RS_CHECK(w.broker.Append(Input(p), "k" + std::to_string((i + p) % 6), value, i).ok());
  }
}

StreamThreadConfig Config(RuntimeWorld& w, const Scenario& s, std::string name) {
  StreamThreadConfig c = w.StreamConfig(std::move(name));
  c.records_per_task_max = 5;
  c.commit_interval_ns = 200 * kMillisecond;
  c.restore.max_poll_records = s.restore_max_poll_records;
  c.tasks.exactly_once = s.exactly_once;
  return c;
}

// The rebalance of one step; the last step places a partition left nowhere on thread a.
void Rebalance(RuntimeWorld& w, const std::vector<std::string>& members, const Scenario& s,
               size_t step) {
  std::set<int32_t> active[2], standby[2];
  for (int32_t p = 0; p < s.partitions; ++p) {
    Placement pl = s.steps[step].placement[p];
    if (pl.active_on == 2 && step + 1 == s.steps.size()) pl.active_on = 0;
    if (pl.active_on == 2) continue;
    active[pl.active_on].insert(p);
    if (pl.standby) standby[1 - pl.active_on].insert(p);
  }
  RS_CHECK(w.broker
               .Rebalance("app", {{members[0], Assign(active[0], standby[0])},
                                  {members[1], Assign(active[1], standby[1])}})
               .ok());
}

// What a partition's counts must be: its initial changelog folded, then all its input.
std::map<std::string, std::string> Reference(RuntimeWorld& w, int32_t p, int initial) {
  return ReferenceCounts(*w.broker.ReadLog(Input(p), 0, 1'000'000),
                         FoldChangelog(*w.broker.ReadLog(Changelog(p), 0, initial)));
}

// The store a partition must hold now: the reference without faults, the fold of its own
// changelog with them.
std::map<std::string, std::string> Expected(RuntimeWorld& w, const Scenario& s, int32_t p) {
  // Exactly once: the reference whatever failed (no input counted twice, nothing aborted kept).
  if (!s.faults || s.exactly_once) return Reference(w, p, s.changelog_records[p]);
  return FoldChangelog(*w.broker.ReadLog(Changelog(p), 0, 1'000'000));
}

// Every partition committed to its input end and running somewhere with the expected store.
// Returns what is missing (empty when converged).
std::string Missing(RuntimeWorld& w, const Scenario& s, StreamThread& a, StreamThread& b) {
  const auto committed = w.broker.CommittedOffsets("app");
  std::string missing;
  for (int32_t p = 0; p < s.partitions; ++p) {
    auto it = committed.find(Input(p));
    const int64_t at = it == committed.end() ? 0 : it->second;  // nothing committed: 0
    const int64_t end = *w.broker.EndOffset(Input(p));
    if (at != end) {
      missing += fmt::format(" {}: committed {} of {};", p, at, end);
      continue;
    }
    StreamThread* runs = a.task_manager().running().contains(TaskId{0, p})   ? &a
                         : b.task_manager().running().contains(TaskId{0, p}) ? &b
                                                                             : nullptr;
    if (runs == nullptr) {
      missing += fmt::format(" {}: not running on either thread;", p);
      continue;
    }
    const auto contents = runs->task_manager().RunningStoreContents(TaskId{0, p});
    if (!contents.ok() || *contents != Expected(w, s, p)) {
      missing += fmt::format(" {}: the store on {} differs from the {};", p, runs->name(),
                             s.faults && !s.exactly_once ? "fold of its changelog"
                                                         : "reference counts");
    }
  }
  return missing;
}

// Every changelog folds to the reference counts (without faults); "" when they all do.
std::string CheckChangelogs(RuntimeWorld& w, const Scenario& s, std::string_view when) {
  for (int32_t p = 0; p < s.partitions; ++p) {
    const auto folded =
        FoldChangelog(*w.broker.ReadCommittedLog(Changelog(p), 0, 1'000'000));
    if (folded != Reference(w, p, s.changelog_records[p])) {
      return fmt::format(
          "partition {}: {}, the changelog folds to counts other than the "
          "reference model's",
          p, when);
    }
  }
  return "";
}

std::string Describe(StreamThread& t) {
  TaskManager& tm = t.task_manager();
  std::string s = t.name() + ": running";
  for (const TaskId& id : tm.running()) s += " " + id.ToString();
  s += "; in restore";
  for (const TaskId& id : tm.in_restore()) s += " " + id.ToString();
  s += "; wanted active";
  for (const TaskId& id : tm.wanted_active()) s += " " + id.ToString();
  s += "; wanted standby";
  for (const TaskId& id : tm.wanted_standby()) s += " " + id.ToString();
  s += fmt::format("; {} loops, {} errors", t.loops(), tm.errors().size());
  if (!tm.errors().empty()) s += " (last: " + tm.errors().back().ToString() + ")";
  return s + "\n";
}

// Runs the scenario; returns the first failed check ("" when every check passed).
std::string RunScenario(const Scenario& s) {
  RuntimeWorld w(s.faults, s.partitions);
  w.broker.SetManualAssignment("app", true);
  for (int32_t p = 0; p < s.partitions; ++p) {
    w.WriteChangelog(p, s.changelog_records[p]);
    ProduceInput(w, p, s.input_records[p]);
  }
  Atomic<uint64_t> incarnations(0);
  StreamThread a(Config(w, s, "instance-a"), w.broker, w.clock, nullptr, incarnations);
  StreamThread b(Config(w, s, "instance-b"), w.broker, w.clock, nullptr, incarnations);
  a.Start();
  b.Start();
  while (w.broker.Members("app").size() < 2) w.clock.SleepFor(10 * kMillisecond);
  std::vector<std::string> members = w.broker.Members("app");  // join order: a may be second
  if (!members[0].starts_with("instance-a")) std::swap(members[0], members[1]);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    Rebalance(w, members, s, i);
    for (int32_t p = 0; p < s.partitions; ++p) ProduceInput(w, p, s.steps[i].input_records);
    w.clock.SleepFor(s.steps[i].pause_ms * kMillisecond);
  }
  const TimeNs deadline = w.clock.NowNs() + (s.faults ? kConvergeWithFaultsNsMax : kConvergeNsMax);
  std::string missing = Missing(w, s, a, b);
  while (!missing.empty() && w.clock.NowNs() < deadline && !a.failed() && !b.failed()) {
    w.clock.SleepFor(100 * kMillisecond);
    missing = Missing(w, s, a, b);
  }
  std::string failure;
  if (a.failed() || b.failed()) {
    failure = fmt::format("a stream thread stopped on an error (a failed: {}, b failed: {})",
                          a.failed(), b.failed());
  } else if (!missing.empty()) {
    failure = fmt::format("not converged within {} s of virtual time after the last step:",
                          (s.faults ? kConvergeWithFaultsNsMax : kConvergeNsMax) / kSecond) +
              missing + "\n" + Describe(a) + Describe(b) +
              static_cast<sim::Simulation*>(CurrentSim())->ThreadsReport();
  } else if (!s.faults || s.exactly_once) {
    failure = CheckChangelogs(w, s, "once converged");
  }
  // Generous: under faults every request the shutdown makes may time out (30 s each).
  const absl::Status a_exit = a.Shutdown(kShutdownNsMax);
  const absl::Status b_exit = b.Shutdown(kShutdownNsMax);
  for (StreamThread* t : {&a, &b}) {
    const TaskManagerStats& st = t->task_manager().stats();
    coverage.created += st.created;
    coverage.recycled += st.recycled;
    coverage.revived += st.revived;
    coverage.closed_dirty += st.closed_dirty;
  }
  coverage.rebalances += static_cast<int64_t>(s.steps.size());
  coverage.with_faults += s.faults;
  if (failure.empty() && !(a_exit.ok() || IsInjected(a_exit))) failure = a_exit.ToString();
  if (failure.empty() && !(b_exit.ok() || IsInjected(b_exit))) failure = b_exit.ToString();
  if (failure.empty() && (!s.faults || s.exactly_once)) {
    // Again after shutdown: whatever the producers still held has been written by now.
    failure = CheckChangelogs(w, s, "after shutdown");
  }
  return failure;
}

// Full traces (slower) only when a failing case's timeline is asked for.
sim::TraceMode TraceModeOfRuns() {
  return std::getenv("RESTORESIM_PROPERTY_TIMELINE") != nullptr ? sim::TraceMode::kFull
                                                                  : sim::TraceMode::kHashOnly;
}

// Runs `cases` generated scenarios (with broker faults if `faults`) and prints what they
// covered.
void CheckScenarios(int cases, bool faults, bool exactly_once = false) {
  properties::CheckProperty(cases, [faults, exactly_once]() {
    const Scenario s = *GenScenario(faults, exactly_once);
    std::string failure;
    const sim::TestRun run = sim::RunUnderSim([&]() { failure = RunScenario(s); }, s.sim_seed,
                                              sim::SimOptions{.steps_max = 10'000'000,
                                                              .trace_mode = TraceModeOfRuns()});
    if (!run.outcome.ok()) {
      // RESTORESIM_PROPERTY_TIMELINE=FILE: the failing case's timeline (the last one written is
      // the shrunk counterexample's), for Perfetto.
      if (const char* path = std::getenv("RESTORESIM_PROPERTY_TIMELINE"); path != nullptr) {
        (void)sim::WriteChromeTrace(*PosixFileSystem::Default(), path, *run.sim,
                                    {.program = "property", .message = run.outcome.message});
      }
      RC_FAIL("the simulated run failed: " + run.outcome.message);
    }
    if (!failure.empty()) RC_FAIL(failure);
    ++coverage.runs;
    coverage.sim_steps += static_cast<int64_t>(run.steps);
    coverage.virtual_ns += run.end_ns;
  });
  const Coverage& c = coverage;
  std::printf(
      "%lld passing runs (%lld with faults), %lld rebalances; tasks: %lld created, "
      "%lld recycled, %lld revived, %lld closed dirty; %lld scheduling steps, %.0f s "
      "virtual\n",
      (long long)c.runs, (long long)c.with_faults, (long long)c.rebalances, (long long)c.created,
      (long long)c.recycled, (long long)c.revived, (long long)c.closed_dirty,
      (long long)c.sim_steps, c.virtual_ns / 1e9);
}

TEST(ScenarioPropertiesTest, RebalancedRuntimeConvergesToTheReferenceModel) {
  CheckScenarios(kCases, /*faults=*/false);
}

// KNOWN BUG (found by this property; details in the report of the rapidcheck properties): a
// commit that fails during a revocation (an injected flush or commit fault) closes the task
// dirty, but
//   * its changelog records stay queued in the stream thread's producer and are appended by a
//     later flush, after the partition's new owner restored the changelog: the new owner's
//     store no longer equals the fold of its changelog ("the store on instance-b differs from
//     the fold of its changelog"), and
//   * its store keeps the writes past its last checkpoint: when the partition comes back to the
//     same thread, the new incarnation restores from that checkpoint over them (the oracle's
//     store_contents: "store 'counts' differs from the fold of ... up to N").
// A shrunk counterexample (default seed, 1000 cases): 2 partitions, faults on, restore
// max.poll.records 14, sim seed 271; initial changelog/input 0:1/0 1:23/2; step 0: 0:a 1:a+sb(b),
// +4 input, pause 250 ms; step 1: 0:b 1:a, +4 input, pause 250 ms; step 2: 0:a 1:a.
// Disabled until the runtime handles a dirty close after a failed commit; the fault-free
// property above keeps running.
TEST(ScenarioPropertiesTest, DISABLED_UnderBrokerFaultsStoresStayTheFoldOfTheirChangelogs) {
  CheckScenarios(kFaultCases, /*faults=*/true);
}

// The same property under exactly_once_v2, with broker faults on: what the disabled property
// above finds under at-least-once cannot happen here. A dirty close aborts the thread's
// transaction, so the records a failed commit left in the producer are aborted, never appended
// for the new owner to miss (the new owner's producer, initialising its transactional id,
// fences a zombie's), and a dirty close wipes the task's state, so nothing past the last commit
// survives to be restored over. Stronger than with at-least-once: every store and changelog
// must equal the reference model exactly, faults or not (issue 21).
TEST(ScenarioPropertiesTest, UnderBrokerFaultsWithExactlyOnceTheStateIsTheReferenceModel) {
  CheckScenarios(kEosFaultCases, /*faults=*/true, /*exactly_once=*/true);
}

}  // namespace
}  // namespace restoresim
