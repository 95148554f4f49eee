// Two stream threads of one application under scenario-driven rebalances, each thread on its
// own simulated thread with its own restore thread:
//   * recycle both ways (active -> standby and standby -> active on both threads at once),
//     revoke and re-assign, with clean hand-overs: every store ends equal to the reference
//     model of the topology fed the same input (nothing lost, nothing counted twice);
//   * lost partitions (no commit): at-least-once may count a record twice, but every store
//     still ends equal to the fold of its own changelog, and every task runs again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/port/file_system.h"
#include "core/runtime/assignment_info.h"
#include "core/runtime/count_topology.h"
#include "core/runtime/stream_thread.h"
#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using testing::Changelog;
using testing::Assign;
using testing::Input;
using testing::RuntimeWorld;

constexpr int32_t kPartitions = 4;

StreamThreadConfig Config(RuntimeWorld& w, std::string name) {
  StreamThreadConfig c = w.StreamConfig(std::move(name));  // two instances, two state dirs
  c.records_per_task_max = 5;
  c.commit_interval_ns = 200 * kMillisecond;
  c.restore.max_poll_records = 20;
  return c;
}


void ProduceInput(RuntimeWorld& w, int from, int n) {
  for (int32_t p = 0; p < kPartitions; ++p) {
    for (int i = from; i < from + n; ++i) {
      std::optional<std::string> value;
      if (i % 11 != 10) value = std::to_string(1 + i % 4);
      RS_CHECK(w.broker.Append(Input(p), "k" + std::to_string((i + p) % 6), value, i).ok());
    }
  }
}

std::map<std::string, std::string> Reference(RuntimeWorld& w, int32_t p) {
  return ReferenceCounts(*w.broker.ReadLog(Input(p), 0, 1'000'000));
}

// Waits (virtual time) until every partition runs on one of the threads and `check` holds.
bool WaitFor(RuntimeWorld& w, std::vector<StreamThread*> threads,
             const std::function<bool(TaskManager&, int32_t)>& check, TimeNs timeout_ns) {
  const TimeNs deadline = w.clock.NowNs() + timeout_ns;
  while (w.clock.NowNs() < deadline) {
    int ok = 0;
    for (int32_t p = 0; p < kPartitions; ++p) {
      for (StreamThread* t : threads) {
        if (t->task_manager().running().contains(TaskId{0, p}) && check(t->task_manager(), p)) {
          ++ok;
        }
      }
    }
    if (ok == kPartitions) return true;
    w.clock.SleepFor(50 * kMillisecond);
  }
  return false;
}

TEST(RebalanceScenarioTest, RecycleBothWaysAndRevokeReassignKeepEveryCountExact) {
  for (uint64_t seed = 0; seed < 8; ++seed) {
    sim::TestRun r = sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, kPartitions);
      w.broker.SetManualAssignment("app", true);
      ProduceInput(w, 0, 30);
      Atomic<uint64_t> incarnations(0);
      StreamThread a(Config(w, "instance-a"), w.broker, w.clock, nullptr, incarnations);
      StreamThread b(Config(w, "instance-b"), w.broker, w.clock, nullptr, incarnations);
      a.Start();
      b.Start();
      while (w.broker.Members("app").size() < 2) w.clock.SleepFor(10 * kMillisecond);
      const std::vector<std::string> m = w.broker.Members("app");
      auto rebalance = [&](std::set<int32_t> a_act, std::set<int32_t> a_sb,
                           std::set<int32_t> b_act, std::set<int32_t> b_sb) {
        ASSERT_TRUE(w.broker.Rebalance("app", {{m[0], Assign(a_act, a_sb)},
                                               {m[1], Assign(b_act, b_sb)}})
                        .ok());
      };
      rebalance({0, 1}, {2, 3}, {2, 3}, {0, 1});
      w.clock.SleepFor(2 * kSecond);
      ProduceInput(w, 30, 20);
      rebalance({2, 3}, {0, 1}, {0, 1}, {2, 3});  // recycle both ways, on both threads
      w.clock.SleepFor(2 * kSecond);
      ProduceInput(w, 50, 20);
      rebalance({2}, {0}, {0, 1}, {2, 3});  // revoke 3 from a ...
      rebalance({2, 3}, {0, 1}, {0, 1}, {});  // ... and give it back before a's next poll
      ProduceInput(w, 70, 10);
      const bool converged = WaitFor(
          w, {&a, &b},
          [&](TaskManager& tm, int32_t p) {
            auto contents = tm.RunningStoreContents(TaskId{0, p});
            return contents.ok() && *contents == Reference(w, p);
          },
          60 * kSecond);
      EXPECT_TRUE(converged) << "every store must reach the reference counts";
      EXPECT_GT(a.task_manager().stats().recycled + b.task_manager().stats().recycled, 0);
      EXPECT_TRUE(a.Shutdown(30 * kSecond).ok());
      EXPECT_TRUE(b.Shutdown(30 * kSecond).ok());
    }, seed, sim::SimOptions{.steps_max = 5'000'000});
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
  }
}

TEST(RebalanceScenarioTest, LostPartitionsComeBackAndStoresMatchTheirChangelogs) {
  for (uint64_t seed = 0; seed < 8; ++seed) {
    sim::TestRun r = sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/seed % 2 == 1, kPartitions);
      w.broker.SetManualAssignment("app", true);
      ProduceInput(w, 0, 30);
      Atomic<uint64_t> incarnations(0);
      StreamThread a(Config(w, "instance-a"), w.broker, w.clock, nullptr, incarnations);
      StreamThread b(Config(w, "instance-b"), w.broker, w.clock, nullptr, incarnations);
      a.Start();
      b.Start();
      while (w.broker.Members("app").size() < 2) w.clock.SleepFor(10 * kMillisecond);
      std::vector<std::string> m = w.broker.Members("app");  // in join order: a may be second
      if (!m[0].starts_with("instance-a")) std::swap(m[0], m[1]);
      ASSERT_TRUE(w.broker.Rebalance("app", {{m[0], Assign({0, 1, 2, 3}, {})},
                                             {m[1], Assign({}, {0, 1, 2, 3})}})
                      .ok());
      w.clock.SleepFor(1 * kSecond);
      ProduceInput(w, 30, 20);
      // a is lost at a quiet moment: once every input record it processed is committed (and
      // its changelog writes with it). Losing it with changelog writes still queued would let
      // them land after b restored — the zombie writes of at-least-once (docs/SCENARIOS.md),
      // which the oracle's checkpoint invariant reports.
      for (int i = 0; i < 600; ++i) {
        const auto committed = w.broker.CommittedOffsets("app");
        bool quiet = true;
        for (int32_t p = 0; p < kPartitions; ++p) {
          auto it = committed.find(Input(p));
          const int64_t end = *w.broker.EndOffset(Input(p));
          quiet = quiet && (end == 0 || (it != committed.end() && it->second == end));
        }
        if (quiet) break;
        w.clock.SleepFor(100 * kMillisecond);
      }
      // (Observing another simulated thread's task manager is safe: only one thread runs.)
      const bool a_was_running = !a.task_manager().running().empty();
      ASSERT_TRUE(w.broker.LoseMember("app", m[0]).ok());  // a loses everything, uncommitted
      ASSERT_TRUE(w.broker.Rebalance("app", {{m[1], Assign({0, 1, 2, 3}, {})}}).ok());
      w.clock.SleepFor(2 * kSecond);
      ProduceInput(w, 50, 10);
      const bool converged = WaitFor(
          w, {&a, &b},
          [&](TaskManager& tm, int32_t p) {
            auto contents = tm.RunningStoreContents(TaskId{0, p});
            return contents.ok() &&
                   *contents == FoldChangelog(*w.broker.ReadLog(Changelog(p), 0, 1'000'000));
          },
          60 * kSecond);
      EXPECT_TRUE(converged) << "every task runs again with its store equal to its changelog";
      // a may still be inside a timed-out request (an injected fault): let it see the loss.
      for (int i = 0; i < 1200 && !a.task_manager().running().empty(); ++i) {
        w.clock.SleepFor(100 * kMillisecond);
      }
      EXPECT_TRUE(a.task_manager().running().empty())
          << "a keeps tasks it lost\n"
          << static_cast<sim::Simulation*>(CurrentSim())->ThreadsReport();
      if (a_was_running) {
        EXPECT_GT(a.task_manager().stats().closed_dirty, 0) << "lost running tasks close dirty";
      }
      const absl::Status a_exit = a.Shutdown(30 * kSecond);
      const absl::Status b_exit = b.Shutdown(30 * kSecond);
      EXPECT_TRUE(a_exit.ok() || IsInjected(a_exit)) << a_exit;
      EXPECT_TRUE(b_exit.ok() || IsInjected(b_exit)) << b_exit;
    }, seed, sim::SimOptions{.steps_max = 5'000'000});
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
  }
}

}  // namespace
}  // namespace restoresim
