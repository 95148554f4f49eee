// RestoreThread against the fake broker under the simulator: tasks move in with CREATE items
// and out with events (restored, removed, corrupted); CLOSE before CREATE in one round; the
// deferred type conversion; shutdown with a timeout.
#include "core/runtime/restore_thread.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/restore_thread_test_util.h"
#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using testing::Changelog;
using testing::Create;
using testing::Items;
using testing::WaitEvents;
using testing::RuntimeWorld;

TaskItem Close(TaskIncarnation who, std::vector<TopicPartition> changelogs = {}) {
  TaskItem item;
  item.kind = TaskItem::Kind::kClose;
  item.incarnation = who;
  item.changelogs = std::move(changelogs);
  return item;
}

void ExpectOk(const sim::TestRun& r) { ASSERT_TRUE(r.outcome.ok()) << r.outcome.message; }

TEST(RestoreThreadTest, RestoredActiveComesBackStandbyStays) {
  for (bool faults : {false, true}) {
    for (uint64_t seed = 0; seed < 8; ++seed) {
      ExpectOk(sim::RunUnderSim([&]() {
        RuntimeWorld w(faults);
        w.WriteChangelog(0, 50);
        w.WriteChangelog(1, 20);
        RestoreThread rt(w.broker, w.clock, nullptr);
        rt.Start();
        std::vector<TaskItem> items;
        items.push_back(Create(w.NewTask(0, TaskType::kActive)));
        items.push_back(Create(w.NewTask(1, TaskType::kStandby)));
        ASSERT_TRUE(rt.AddItems(std::move(items), nullptr));
        std::vector<RestoreEvent> events = WaitEvents(w, rt, 1);
        ASSERT_EQ(events.size(), 1u);
        ASSERT_EQ(events[0].kind, RestoreEvent::Kind::kRestored) << events[0].error;
        Task& active = *events[0].task;
        EXPECT_EQ(active.id(), (TaskId{0, 0}));
        EXPECT_EQ(active.state(), TaskState::kRestoring);
        EXPECT_EQ(*active.state_manager().StoreForChangelog(Changelog(0))->ReadAll(), w.Fold(0));
        EXPECT_TRUE(rt.CompletedChangelogs()->contains(Changelog(0)));
        w.clock.SleepFor(5 * kSecond);  // the standby catches up once no active restores
        EXPECT_EQ(rt.StandbyRecordsUpdated(), 20);
        ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
        events = rt.DrainEvents();
        ASSERT_EQ(events.size(), 1u) << "the standby comes back at shutdown";
        EXPECT_EQ(events[0].kind, RestoreEvent::Kind::kRemoved);
        EXPECT_EQ(events[0].task->type(), TaskType::kStandby);
        EXPECT_EQ(*events[0].task->state_manager().StoreForChangelog(Changelog(1))->ReadAll(),
                  w.Fold(1));
      }, seed));
    }
  }
}

TEST(RestoreThreadTest, CloseIsAppliedBeforeCreateInOneRoundWithDeferredTypeConversion) {
  for (uint64_t seed = 0; seed < 10; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(false);
      w.WriteChangelog(2, 10);
      RestoreThread rt(w.broker, w.clock, nullptr);
      rt.Start();
      ASSERT_TRUE(rt.AddItems(Items(Create(w.NewTask(2, TaskType::kActive))), nullptr));
      std::vector<RestoreEvent> events = WaitEvents(w, rt, 1);
      ASSERT_EQ(events.size(), 1u);
      ASSERT_EQ(events[0].kind, RestoreEvent::Kind::kRestored);
      std::unique_ptr<Task> active = std::move(events[0].task);
      active->TransitionTo(TaskState::kRunning);
      // Recycle the running active into a standby: prepare the type, capture the changelogs
      // (kept: a recycle does not clear the stores), and send CREATE before CLOSE on purpose.
      active->TransitionTo(TaskState::kSuspended);
      const TaskIncarnation old = active->incarnation();
      const std::vector<TopicPartition> captured =
          active->state_manager().CaptureChangelogPartitions();
      std::unique_ptr<StateManager> sm = active->CloseAndRecycleState();
      sm->PrepareNewTaskType(TaskType::kStandby);
      auto standby = std::make_unique<Task>(TaskIncarnation{old.id, old.incarnation + 100},
                                            std::move(sm), testing::Input(2));
      EXPECT_EQ(standby->type(), TaskType::kActive) << "converted only by the restore thread";
      std::vector<TaskItem> round;
      round.push_back(Create(std::move(standby)));
      round.push_back(Close(old, captured));
      ASSERT_TRUE(rt.AddItems(std::move(round), nullptr));
      w.WriteChangelog(2, 5, 10);  // more data: the standby follows it
      w.clock.SleepFor(2 * kSecond);
      ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
      events = rt.DrainEvents();
      ASSERT_EQ(events.size(), 1u);
      ASSERT_EQ(events[0].kind, RestoreEvent::Kind::kRemoved);
      EXPECT_EQ(events[0].task->type(), TaskType::kStandby);
      EXPECT_EQ(*events[0].task->state_manager().StoreForChangelog(Changelog(2))->ReadAll(),
                w.Fold(2));
    }, seed));
  }
}

// Regression (found by scenario.rebalance_storm): rounds drained together used to be merged and
// every CLOSE applied before every CREATE, so a later round's CLOSE of a task overtook the
// earlier round's CREATE of it: the task stayed registered and the stream thread waited for it
// forever. Rounds now apply in order.
TEST(RestoreThreadTest, ALaterRoundsCloseDoesNotOvertakeAnEarlierRoundsCreate) {
  ExpectOk(sim::RunUnderSim([&]() {
    RuntimeWorld w(false);
    w.WriteChangelog(1, 5);
    RestoreThread rt(w.broker, w.clock, nullptr);
    std::unique_ptr<Task> standby = w.NewTask(1, TaskType::kStandby);
    const TaskIncarnation who = standby->incarnation();
    // Both rounds are queued before the thread starts, so its first drain takes both.
    ASSERT_TRUE(rt.AddItems(Items(Create(std::move(standby))), nullptr));
    ASSERT_TRUE(rt.AddItems(Items(Close(who)), nullptr));
    rt.Start();
    std::vector<RestoreEvent> events = WaitEvents(w, rt, 1);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, RestoreEvent::Kind::kRemoved);
    EXPECT_EQ(events[0].incarnation, who);
    ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
    EXPECT_TRUE(rt.DrainEvents().empty()) << "nothing left registered or owned";
  }));
}

TEST(RestoreThreadTest, CorruptedTaskComesBackWithItsChangelogs) {
  ExpectOk(sim::RunUnderSim([&]() {
    RuntimeWorld w(false);
    w.WriteChangelog(3, 30);
    {
      std::unique_ptr<StateManager> sm = w.NewStateManager(3, TaskType::kActive);
      w.RestoreInto(*sm, 3, 4);
      ASSERT_TRUE(sm->Close(/*clean=*/true).ok());
    }
    ASSERT_TRUE(w.broker.DeleteRecords({{Changelog(3), 25}}).ok());
    RestoreThread rt(w.broker, w.clock, nullptr);
    rt.Start();
    ASSERT_TRUE(rt.AddItems(Items(Create(w.NewTask(3, TaskType::kActive))), nullptr));
    std::vector<RestoreEvent> events = WaitEvents(w, rt, 1);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, RestoreEvent::Kind::kCorrupted);
    ASSERT_NE(events[0].task, nullptr);
    EXPECT_EQ(events[0].corrupted_changelogs, std::set<TopicPartition>{Changelog(3)});
    ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
  }));
}

TEST(RestoreThreadTest, CloseOfAnOwnedTaskHandsItBack) {
  ExpectOk(sim::RunUnderSim([&]() {
    RuntimeWorld w(false);
    w.WriteChangelog(1, 5);
    RestoreThread rt(w.broker, w.clock, nullptr);
    rt.Start();
    std::unique_ptr<Task> standby = w.NewTask(1, TaskType::kStandby);
    const TaskIncarnation who = standby->incarnation();
    ASSERT_TRUE(rt.AddItems(Items(Create(std::move(standby))), nullptr));
    w.clock.SleepFor(kSecond);
    ASSERT_TRUE(rt.AddItems(Items(Close(who)), nullptr));
    std::vector<RestoreEvent> events = WaitEvents(w, rt, 1);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, RestoreEvent::Kind::kRemoved);
    EXPECT_EQ(events[0].incarnation, who);
    EXPECT_EQ(events[0].task->state(), TaskState::kSuspended);
    ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
    EXPECT_TRUE(rt.DrainEvents().empty());
  }));
}

// Kafka's maybeCheckpointUpdatingTasks with checkpointNeeded: every interval, only tasks whose
// stores moved more than the offset delta since their last checkpoint are checkpointed.
TEST(RestoreThreadTest, PeriodicCheckpointWaitsUntilTheStoresMovedPastTheOffsetDelta) {
  ExpectOk(sim::RunUnderSim([&]() {
    RuntimeWorld w(/*faults=*/false);
    w.WriteChangelog(1, 20);
    RestoreThreadConfig config;
    config.checkpoint_interval_ns = 100 * kMillisecond;
    config.checkpoint_offset_delta_min = 30;
    RestoreThread rt(w.broker, w.clock, nullptr, config);
    rt.Start();
    std::unique_ptr<Task> standby = w.NewTask(1, TaskType::kStandby);
    const std::string checkpoint = standby->state_manager().checkpoint_path();
    ASSERT_TRUE(rt.AddItems(Items(Create(std::move(standby))), nullptr));
    w.clock.SleepFor(2 * kSecond);
    ASSERT_EQ(rt.StandbyRecordsUpdated(), 20);
    EXPECT_TRUE(absl::IsNotFound(w.fs.FileExists(checkpoint)))
        << "20 records are not more than the delta of 30: no checkpoint yet";
    w.WriteChangelog(1, 11, /*start=*/20);
    w.clock.SleepFor(2 * kSecond);
    ASSERT_EQ(rt.StandbyRecordsUpdated(), 31);
    absl::StatusOr<CheckpointOffsets> written = ReadCheckpoint(w.fs, checkpoint);
    ASSERT_TRUE(written.ok()) << "31 records moved: checkpointed at the next interval";
    EXPECT_EQ(written->at(Changelog(1)), 31);
    w.WriteChangelog(1, 5, /*start=*/31);
    w.clock.SleepFor(2 * kSecond);
    EXPECT_EQ(ReadCheckpoint(w.fs, checkpoint)->at(Changelog(1)), 31)
        << "5 more records since the checkpoint: not rewritten";
    ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
    EXPECT_EQ(ReadCheckpoint(w.fs, checkpoint)->at(Changelog(1)), 36)
        << "a task handed back at shutdown is checkpointed regardless (forced)";
  }, /*seed=*/0));
}

}  // namespace
}  // namespace restoresim
