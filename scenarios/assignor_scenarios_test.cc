// The Streams assignor's inputs from a live stream thread (offset_sums.cc): the task
// offset sums its subscription reports, run against the fake broker under the simulator —
// tasks the restore thread owns (restoring actives, standbys) count, running actives report
// the latest-offset sentinel, and task directories left on disk report their checkpoints.
#include <gtest/gtest.h>

#include "core/runtime/assignment_info.h"
#include "core/runtime/runtime.h"
#include "core/runtime/stream_thread.h"
#include "scenarios/runtime_world.h"
#include "scenarios/scenario_fleet.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using testing::Assign;
using testing::RuntimeWorld;

StreamThreadConfig Config(RuntimeWorld& w) {
  StreamThreadConfig c = w.StreamConfig("a-StreamThread-1");
  c.tasks.state_dir = "/state/a/app";
  c.restore.max_poll_records = 10;  // 0_0's long changelog takes many restore polls
  c.streams_assignor =
      StreamsGroupAssignorConfig{.application_id = "app", .input_topic = "input",
                                 .store_names = w.stores, .tasks = {.num_standby_replicas = 1}};
  c.process_id = "a";
  return c;
}

TEST(AssignorScenarioTest, TaskOwnedByTheRestoreThreadCountsInTheOffsetSums) {
  sim::TestRun r = sim::RunUnderSim([&]() {
    RuntimeWorld w(/*faults=*/false, 3);
    w.WriteChangelog(0, 1000);
    w.WriteChangelog(2, 30);
    w.broker.SetManualAssignment("app", true);
    Atomic<uint64_t> incarnations(0);
    StreamThread st(Config(w), w.broker, w.clock, nullptr, incarnations);
    ASSERT_TRUE(st.Subscribe().ok());
    const std::string member = w.broker.Members("app").at(0);
    ASSERT_TRUE(w.broker.Rebalance("app", {{member, Assign({0, 1}, {2})}}).ok());
    int loops_restoring = 0;
    int64_t last_sum = -1;
    for (int loop = 0; loop < 2000; ++loop) {
      ASSERT_TRUE(st.RunOnce().ok());
      TaskManager& tm = st.task_manager();
      const std::map<TaskId, int64_t> sums = tm.TaskOffsetSums();
      if (tm.in_restore().contains(TaskId{0, 0})) {
        ++loops_restoring;
        ASSERT_TRUE(sums.contains(TaskId{0, 0})) << "a restoring active reported absent, loop "
                                                 << loop;
        EXPECT_GE(sums.at(TaskId{0, 0}), last_sum) << "restoration moves the sum forward";
        last_sum = sums.at(TaskId{0, 0});
      }
      if (tm.in_restore().contains(TaskId{0, 2})) {
        ASSERT_TRUE(sums.contains(TaskId{0, 2})) << "a standby reported absent, loop " << loop;
      }
      if (tm.running().contains(TaskId{0, 0})) {
        EXPECT_EQ(sums.at(TaskId{0, 0}), kLatestOffset) << "a running active: the sentinel";
        break;
      }
    }
    EXPECT_GT(loops_restoring, 5) << "0_0 restored in so few loops that nothing was observed";
    EXPECT_GT(last_sum, 0) << "the restore thread's progress never showed in the sums";
    EXPECT_LT(last_sum, 1000 + 1);
    const std::map<TaskId, int64_t> sums = st.task_manager().TaskOffsetSums();
    EXPECT_EQ(sums.at(TaskId{0, 1}), kLatestOffset);
    EXPECT_EQ(sums.at(TaskId{0, 2}), 30) << "the standby caught up with its changelog";
    ASSERT_TRUE(st.Shutdown(30 * kSecond).ok());
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

TEST(AssignorScenarioTest, TaskDirectoryLeftOnDiskReportsItsCheckpoint) {
  sim::TestRun r = sim::RunUnderSim([&]() {
    RuntimeWorld w(/*faults=*/false, 2);
    w.WriteChangelog(1, 40);
    scenarios::LeaveCheckpoint(w, "/state/a/app", 1, 25);
    w.broker.SetManualAssignment("app", true);
    Atomic<uint64_t> incarnations(0);
    StreamThread st(Config(w), w.broker, w.clock, nullptr, incarnations);
    ASSERT_TRUE(st.Subscribe().ok());
    const std::map<TaskId, int64_t> sums = st.task_manager().TaskOffsetSums();
    ASSERT_TRUE(sums.contains(TaskId{0, 1}));
    EXPECT_EQ(sums.at(TaskId{0, 1}), 25 * static_cast<int64_t>(w.stores.size()));
    EXPECT_FALSE(sums.contains(TaskId{0, 0})) << "no directory, no state: not reported";
    ASSERT_TRUE(st.Shutdown(30 * kSecond).ok());
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

// The Runtime's wiring of the Streams assignor (restoresim.group.assignor=streams with
// num.standby.replicas=1): two instances of one application, each with its own state.dir,
// end with every task active on one and its standby on the other, placed by the group
// leader's assignor (no scenario assignment info).
TEST(AssignorScenarioTest, TwoRuntimesWithTheStreamsAssignorKeepEveryTasksStandbyOnTheOther) {
  sim::TestRun r = sim::RunUnderSim([&]() {
    constexpr int32_t kPartitions = 4;
    RuntimeWorld w(/*faults=*/false, kPartitions);
    for (int32_t p = 0; p < kPartitions; ++p) w.WriteChangelog(p, 20);
    std::vector<std::unique_ptr<Runtime>> instances;
    for (const std::string name : {"a", "b"}) {
      RuntimeConfig c;
      c.application_id = "app";
      c.input_topic = "input";
      c.state_dir = "/state/" + name;
      c.num_standby_replicas = 1;
      c.group_assignor = "streams";
      c.commit_interval_ms = 100;
      c.poll_ms = 20;
      c.checkpoint_offset_delta_min = 0;
      auto runtime = std::make_unique<Runtime>(c, w.broker, w.clock, w.fs, w.LogStoreOpener());
      // Two instances in one world: thread names and incarnation numbers kept apart.
      ASSERT_TRUE(runtime
                      ->EnableCheckpointRestore(CheckpointOptions{
                          .instance = name, .process_id = name,
                          .first_incarnation = name == "a" ? 0u : 1'000'000u})
                      .ok());
      ASSERT_TRUE(runtime->Start().ok());
      instances.push_back(std::move(runtime));
    }
    auto placed = [&]() {
      std::map<TaskId, int> actives, standbys;
      for (auto& rt : instances) {
        for (size_t i = 0; i < rt->thread_count(); ++i) {
          const TaskManager& tm = rt->thread(i).task_manager();
          for (const TaskId& id : tm.running()) ++actives[id];
          for (const TaskId& id : tm.wanted_standby()) ++standbys[id];
        }
      }
      for (int32_t p = 0; p < kPartitions; ++p) {
        if (actives[TaskId{0, p}] != 1 || standbys[TaskId{0, p}] != 1) return false;
      }
      return true;
    };
    for (int i = 0; i < 600 && !placed(); ++i) w.clock.SleepFor(100 * kMillisecond);
    EXPECT_TRUE(placed()) << "every task running once with one standby";
    for (auto& rt : instances) {
      for (size_t i = 0; i < rt->thread_count(); ++i) {
        const TaskManager& tm = rt->thread(i).task_manager();
        for (const TaskId& id : tm.running()) {
          EXPECT_FALSE(tm.wanted_standby().contains(id)) << "a standby beside its own active";
        }
      }
    }
    for (auto& rt : instances) ASSERT_TRUE(rt->Close(30 * kSecond).ok());
  }, 1, sim::SimOptions{.steps_max = 5'000'000});
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

}  // namespace
}  // namespace restoresim
