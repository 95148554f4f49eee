// TasksRegistry, UpdaterTasks and RestoreHandover: the named moves, and the one-owner rule
// asserted inline — each test that breaks it on purpose dies naming the invariant, as the
// oracle would.
#include "core/runtime/tasks_registry.h"

#include <gtest/gtest.h>

#include "core/runtime/task_test_util.h"
#include "core/runtime/updater_tasks.h"

namespace restoresim {
namespace {

std::unique_ptr<Task> NewTask(int partition, uint64_t incarnation,
                              TaskType type = TaskType::kActive) {
  return testing::StorelessTask(partition, incarnation, type);
}

TEST(TasksRegistryTest, ATaskTravelsThroughEveryPlaceOneAtATime) {
  TasksRegistry tasks("stream-thread-1");
  const TaskId id{0, 3};
  tasks.AddPendingInit(NewTask(3, 7));
  EXPECT_EQ(tasks.Where(id), TasksRegistry::Place::kPendingInit);
  tasks.AddReady(tasks.TakePendingInit(id));
  EXPECT_EQ(tasks.Where(id), TasksRegistry::Place::kReady);
  std::vector<TaskItem> round;
  tasks.HandReadyToRestore(round);
  ASSERT_EQ(round.size(), 1u);
  EXPECT_EQ(round[0].kind, TaskItem::Kind::kCreate);
  EXPECT_EQ(round[0].incarnation, (TaskIncarnation{id, 7}));
  EXPECT_TRUE(tasks.ready().empty());
  EXPECT_EQ(tasks.Where(id), TasksRegistry::Place::kInRestore);
  EXPECT_TRUE(tasks.RestoreThreadHoldsActives());
  const auto [who, type] = tasks.AwaitClose(id);
  EXPECT_EQ(who, (TaskIncarnation{id, 7}));
  EXPECT_EQ(tasks.Where(id), TasksRegistry::Place::kAwaiting);
  EXPECT_TRUE(tasks.TakeBackFromRestore(who));  // a CLOSE had been sent
  EXPECT_EQ(tasks.Where(id), std::nullopt);
  std::unique_ptr<Task> task = std::move(round[0].task);
  task->TransitionTo(TaskState::kRestoring);
  task->TransitionTo(TaskState::kRunning);
  tasks.AddRunning(std::move(task));
  EXPECT_EQ(tasks.RunningIds(), (std::set<TaskId>{id}));
  const std::vector<TaskView> view = tasks.View({id});
  ASSERT_EQ(view.size(), 1u);
  EXPECT_EQ(view[0].where, TaskView::Where::kRevoked);
  tasks.TakeRunning(id)->TransitionTo(TaskState::kSuspended);
  EXPECT_TRUE(tasks.Ids().empty());
}

TEST(TasksRegistryTest, ReadyKeepsTheOrderTasksBecameReady) {
  TasksRegistry tasks("t");
  tasks.AddReady(NewTask(5, 1));
  tasks.AddReady(NewTask(2, 2));
  tasks.AddReady(NewTask(9, 3));
  tasks.AddReady(tasks.TakeReady(TaskId{0, 2}));  // back of the line
  std::vector<TaskItem> round;
  tasks.HandReadyToRestore(round);
  ASSERT_EQ(round.size(), 3u);
  EXPECT_EQ(round[0].incarnation.id.partition, 5);
  EXPECT_EQ(round[1].incarnation.id.partition, 9);
  EXPECT_EQ(round[2].incarnation.id.partition, 2);
}

TEST(TasksRegistryDeathTest, ASecondIncarnationInAnotherPlaceBreaksSingleOwner) {
  TasksRegistry tasks("stream-thread-1");
  tasks.AddPendingInit(NewTask(0, 1));
  EXPECT_DEATH(tasks.AddReady(NewTask(0, 2)),
               "invariant:single_owner.*making ready 0_0#2 while task 0_0 is pending");
}

TEST(TasksRegistryDeathTest, RunningWhileStillBookedInTheRestoreThreadBreaksSingleOwner) {
  // KAFKA-17402's shape: the booking in the restore thread is kept while the task runs.
  TasksRegistry tasks("stream-thread-1");
  tasks.AddReady(NewTask(1, 4));
  std::vector<TaskItem> round;
  tasks.HandReadyToRestore(round);
  EXPECT_FALSE(tasks.TakeBackFromRestore(round[0].incarnation, /*keep_booking=*/true));
  std::unique_ptr<Task> task = std::move(round[0].task);
  task->TransitionTo(TaskState::kRestoring);
  task->TransitionTo(TaskState::kRunning);
  EXPECT_DEATH(tasks.AddRunning(std::move(task)),
               "invariant:single_owner.*in the restore thread already");
}

TEST(TasksRegistryDeathTest, TakingFromAPlaceTheTaskIsNotInBreaksSingleOwner) {
  TasksRegistry tasks("t");
  tasks.AddPendingInit(NewTask(0, 1));
  EXPECT_DEATH(tasks.TakeRestored(TaskId{0, 0}), "invariant:single_owner.*not restored");
  EXPECT_DEATH(tasks.AwaitClose(TaskId{0, 0}), "invariant:single_owner");
}

TEST(TasksRegistryDeathTest, ComingBackWhileAnotherPlaceHoldsTheTaskBreaksSingleOwner) {
  TasksRegistry tasks("t");
  tasks.AddReady(NewTask(0, 1));
  std::vector<TaskItem> round;
  tasks.HandReadyToRestore(round);
  tasks.AwaitClose(TaskId{0, 0});
  // A different incarnation comes back: the booking of #1 stays, a second owner.
  EXPECT_DEATH(tasks.TakeBackFromRestore(TaskIncarnation{TaskId{0, 0}, 2}),
               "invariant:single_owner.*came back from the restore thread while task 0_0 is "
               "awaiting");
}

TEST(UpdaterTasksTest, PauseResumeAndTakeMoveOneTaskAndDropItsDeadline) {
  UpdaterTasks tasks("restore-thread");
  Task& task = tasks.Receive(NewTask(0, 1), UpdaterTasks::Place::kUpdating);
  task.TransitionTo(TaskState::kRestoring);
  const TaskIncarnation who = task.incarnation();
  tasks.StartDeadline(who.id, 5 * kSecond);
  EXPECT_EQ(tasks.Deadline(who.id), 5 * kSecond);
  EXPECT_EQ(tasks.Counts().active_restoring, 1);
  tasks.Pause(who.id);
  EXPECT_EQ(tasks.Deadline(who.id), std::nullopt);  // starts afresh after a pause
  EXPECT_EQ(tasks.PausedCounts(), (std::pair<int64_t, int64_t>{1, 0}));
  EXPECT_TRUE(tasks.Owns(who));
  EXPECT_EQ(tasks.Updating(who), nullptr);
  tasks.Resume(who.id);
  EXPECT_NE(tasks.Updating(who), nullptr);
  EXPECT_EQ(tasks.Take(TaskIncarnation{who.id, 2}), nullptr);  // another incarnation
  std::unique_ptr<Task> taken = tasks.Take(who);
  ASSERT_NE(taken, nullptr);
  EXPECT_TRUE(tasks.empty());
  taken->TransitionTo(TaskState::kSuspended);
}

TEST(UpdaterTasksDeathTest, ReceivingASecondIncarnationBreaksSingleOwner) {
  UpdaterTasks tasks("restore-thread");
  tasks.Receive(NewTask(0, 1), UpdaterTasks::Place::kPaused);
  EXPECT_DEATH(tasks.Receive(NewTask(0, 2), UpdaterTasks::Place::kUpdating),
               "invariant:single_owner.*receiving 0_0#2 while it owns a paused incarnation");
}

}  // namespace
}  // namespace restoresim

namespace restoresim {
namespace {

// The hand-back's half of the pair: the restore thread's side asserts, as it emits the event,
// that the owner it leaves no longer holds the task; the event then reaches the stream thread.
TEST(RestoreHandoverTest, AHandedBackTaskReachesTheStreamThreadOnce) {
  UpdaterTasks owner("restore-1");
  RestoreHandover handover("restore-1", /*rounds_max=*/4, /*events_max=*/4);
  owner.Receive(NewTask(0, 1), UpdaterTasks::Place::kUpdating);
  std::unique_ptr<Task> task = owner.Take(TaskIncarnation{TaskId{0, 0}, 1});
  ASSERT_NE(task, nullptr);
  task->TransitionTo(TaskState::kRestoring);
  task->TransitionTo(TaskState::kSuspended);
  handover.HandBack(RestoreEvent{.kind = RestoreEvent::Kind::kRemoved,
                                 .incarnation = TaskIncarnation{TaskId{0, 0}, 1},
                                 .task = std::move(task)},
                    owner);
  std::vector<RestoreEvent> events = handover.DrainEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, RestoreEvent::Kind::kRemoved);
  ASSERT_NE(events[0].task, nullptr);
  EXPECT_EQ(events[0].task->incarnation(), (TaskIncarnation{TaskId{0, 0}, 1}));
  EXPECT_TRUE(handover.DrainEvents().empty());
}

TEST(RestoreHandoverDeathTest, HandingBackATaskStillOwnedBreaksSingleOwner) {
  UpdaterTasks owner("restore-1");
  RestoreHandover handover("restore-1", /*rounds_max=*/4, /*events_max=*/4);
  owner.Receive(NewTask(0, 1), UpdaterTasks::Place::kUpdating);
  // A second object of the same incarnation, handed back while the owner still holds it.
  EXPECT_DEATH(handover.HandBack(RestoreEvent{.kind = RestoreEvent::Kind::kRemoved,
                                              .incarnation = TaskIncarnation{TaskId{0, 0}, 1},
                                              .task = NewTask(0, 1)},
                                 owner),
               "invariant:single_owner.*restore-1.*hands 0_0#1 back and still owns it");
}

}  // namespace
}  // namespace restoresim
