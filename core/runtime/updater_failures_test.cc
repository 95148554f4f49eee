// UpdaterFailures: task.timeout.ms started by a retryable stall, cleared by progress and
// expiring into a failed hand-back; a timeout of 0; task-scoped failures; a task-less fatal
// error that fails every owned task, updating and paused, or reports once when none is owned.
// The tasks (UpdaterTasks) and the hand-back (RestoreHandover, with its single-owner
// assertion) are the real ones; the changelog reader, which needs a broker, is stood in for by
// what the failure model asks of it: the changelogs an incarnation holds, and their removal.
#include "core/runtime/updater_failures.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/runtime/task_test_util.h"

namespace restoresim {
namespace {

std::unique_ptr<Task> NewTask(int partition, uint64_t incarnation,
                              TaskType type = TaskType::kActive) {
  return testing::StorelessTask(partition, incarnation, type);
}

// Time that moves only when the test moves it.
class ManualClock final : public Clock {
 public:
  TimeNs now_ns = 0;
  TimeNs NowNs() override { return now_ns; }
  void SleepUntil(TimeNs deadline_ns) override { now_ns = std::max(now_ns, deadline_ns); }
  bool WaitUntil(CondVar&, Mutex&, TimeNs deadline_ns) override {
    SleepUntil(deadline_ns);
    return false;
  }
};

// The registrations a changelog reader holds, per owning incarnation.
struct Registrations {
  std::map<TaskIncarnation, std::vector<TopicPartition>> by_owner;

  std::vector<TopicPartition> ChangelogsOf(const TaskIncarnation& who) const {
    auto it = by_owner.find(who);
    return it == by_owner.end() ? std::vector<TopicPartition>{} : it->second;
  }
  void Unregister(const std::vector<TopicPartition>& changelogs) {
    for (auto& [who, held] : by_owner) {
      std::erase_if(held, [&](const TopicPartition& tp) {
        return std::find(changelogs.begin(), changelogs.end(), tp) != changelogs.end();
      });
    }
  }
};

struct Fixture {
  ManualClock clock;
  UpdaterTasks tasks{"restore-1"};
  RestoreHandover handover{"restore-1", /*rounds_max=*/4, /*events_max=*/16};
  Registrations reader;
  int published = 0;
  UpdaterFailures failures;

  explicit Fixture(TimeNs task_timeout_ns)
      : failures("restore-1", task_timeout_ns, clock, tasks,
                 UpdaterFailures::Hooks{
                     .changelogs_of = [this](const TaskIncarnation& who) {
                       return reader.ChangelogsOf(who);
                     },
                     .unregister = [this](const std::vector<TopicPartition>& changelogs) {
                       reader.Unregister(changelogs);
                     },
                     .hand_back = [this](RestoreEvent event) {
                       handover.HandBack(std::move(event), tasks);
                     },
                     .emit = [this](RestoreEvent event) { handover.Emit(std::move(event)); },
                     .publish_counts = [this]() { ++published; }}) {}

  // Receives task 0_`partition`#1, restoring (updating) or paused, its changelog registered
  // when updating.
  TaskIncarnation Own(int partition, UpdaterTasks::Place place) {
    Task& task = tasks.Receive(NewTask(partition, 1), place);
    task.TransitionTo(TaskState::kRestoring);
    if (place == UpdaterTasks::Place::kUpdating) {
      reader.by_owner[task.incarnation()] = {TopicPartition{"app-changelog", partition}};
    }
    return task.incarnation();
  }
};

RestoreStep Stalled(const TaskIncarnation& who) {
  RestoreStep step;
  step.stalled.emplace(who, absl::UnavailableError("leader not available"));
  return step;
}

TEST(UpdaterFailuresTest, ARetryableStallStartsTheTimeoutProgressClearsItExpiryFailsTheTask) {
  Fixture f(10 * kSecond);
  const TaskIncarnation who = f.Own(0, UpdaterTasks::Place::kUpdating);
  f.clock.now_ns = kSecond;
  f.failures.HandleFailures(Stalled(who));
  EXPECT_EQ(f.tasks.Deadline(who.id), 11 * kSecond);  // maybeInitTaskTimeoutOrThrow
  RestoreStep progressed;
  progressed.progressed.insert(who);
  f.failures.HandleFailures(progressed);
  EXPECT_EQ(f.tasks.Deadline(who.id), std::nullopt);  // clearTaskTimeout
  f.clock.now_ns = 20 * kSecond;
  f.failures.HandleFailures(Stalled(who));  // starts afresh: 30 s
  f.clock.now_ns = 30 * kSecond;
  f.failures.HandleFailures(Stalled(who));  // at the deadline: retried
  EXPECT_TRUE(f.tasks.Owns(who));
  EXPECT_TRUE(f.handover.DrainEvents().empty());
  f.clock.now_ns = 30 * kSecond + 1;
  f.failures.HandleFailures(Stalled(who));
  EXPECT_FALSE(f.tasks.Owns(who));
  EXPECT_TRUE(f.reader.ChangelogsOf(who).empty());  // a timeout left them registered
  std::vector<RestoreEvent> events = f.handover.DrainEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, RestoreEvent::Kind::kFailed);
  EXPECT_EQ(events[0].incarnation, who);
  ASSERT_NE(events[0].task, nullptr);
  EXPECT_EQ(events[0].task->state(), TaskState::kSuspended);
  EXPECT_EQ(events[0].error.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(events[0].error.message(),
            "task 0_0 did not make progress within 10000 ms (task.timeout.ms is 10000 ms): "
            "leader not available");
}

TEST(UpdaterFailuresTest, ATimeoutOfZeroFailsTheFirstStalledTaskAtOnce) {
  Fixture f(0);
  const TaskIncarnation who = f.Own(1, UpdaterTasks::Place::kUpdating);
  const TaskIncarnation other = f.Own(2, UpdaterTasks::Place::kUpdating);
  f.failures.HandleFailures(Stalled(who));
  EXPECT_FALSE(f.tasks.Owns(who));
  EXPECT_TRUE(f.tasks.Owns(other));  // only the stalled one
  EXPECT_EQ(f.reader.ChangelogsOf(other).size(), 1u);
  std::vector<RestoreEvent> events = f.handover.DrainEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].incarnation, who);
  EXPECT_EQ(events[0].error.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(events[0].error.message().find("within 0 ms (task.timeout.ms is 0 ms)"),
            std::string_view::npos);
}

TEST(UpdaterFailuresTest, ATaskScopedErrorFailsThatTaskOnceAndNoOther) {
  Fixture f(10 * kSecond);
  const TaskIncarnation who = f.Own(0, UpdaterTasks::Place::kUpdating);
  const TaskIncarnation other = f.Own(1, UpdaterTasks::Place::kUpdating);
  RestoreStep step;
  step.failed.emplace(who, absl::InternalError("store write failed"));
  step.failed.emplace(TaskIncarnation{TaskId{0, 7}, 3}, absl::InternalError("not owned"));
  f.failures.HandleFailures(step);
  f.failures.HandleFailures(step);  // reported again: the task is gone, nothing more
  std::vector<RestoreEvent> events = f.handover.DrainEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].incarnation, who);
  EXPECT_EQ(events[0].error, absl::InternalError("store write failed"));
  EXPECT_TRUE(f.tasks.Owns(other));
  EXPECT_EQ(f.published, 0);
}

TEST(UpdaterFailuresTest, ATaskLessErrorFailsUpdatingAndPausedTasksOrReportsOnceWhenNoneOwned) {
  Fixture f(10 * kSecond);
  const TaskIncarnation updating = f.Own(0, UpdaterTasks::Place::kUpdating);
  const TaskIncarnation paused = f.Own(1, UpdaterTasks::Place::kPaused);
  const absl::Status denied = absl::PermissionDeniedError("not authorized to read");
  ASSERT_TRUE(IsFatalStepError(denied));
  f.failures.FailAllOwned(denied);
  EXPECT_TRUE(f.tasks.empty());
  EXPECT_EQ(f.published, 1);  // the paused gauges drop to 0
  std::vector<RestoreEvent> events = f.handover.DrainEvents();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].incarnation, updating);
  EXPECT_EQ(events[1].incarnation, paused);
  for (const RestoreEvent& event : events) {
    EXPECT_EQ(event.kind, RestoreEvent::Kind::kFailed);
    ASSERT_NE(event.task, nullptr);
    EXPECT_EQ(event.error, denied);
  }
  f.failures.FailAllOwned(denied);  // none owned: one report naming no task
  events = f.handover.DrainEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, RestoreEvent::Kind::kFailed);
  EXPECT_EQ(events[0].task, nullptr);
  EXPECT_EQ(events[0].error, denied);
  EXPECT_EQ(f.published, 1);
}

TEST(UpdaterFailuresTest, OnlyRefusalsMissingTopicsBugsAndDataLossAreFatalForAStep) {
  EXPECT_TRUE(IsFatalStepError(absl::NotFoundError("unknown topic")));
  EXPECT_TRUE(IsFatalStepError(absl::DataLossError("truncated")));
  EXPECT_FALSE(IsFatalStepError(absl::UnavailableError("leader not available")));
  EXPECT_FALSE(IsFatalStepError(absl::FailedPreconditionError("position not known yet")));
  EXPECT_FALSE(IsFatalStepError(absl::DeadlineExceededError("fetch timed out")));
}

TEST(UpdaterFailuresDeathTest, ATaskBothProgressedAndStalledIsABug) {
  Fixture f(10 * kSecond);
  const TaskIncarnation who = f.Own(0, UpdaterTasks::Place::kUpdating);
  RestoreStep step = Stalled(who);
  step.progressed.insert(who);
  EXPECT_DEATH(f.failures.HandleFailures(step), "both progressed and stalled");
}

}  // namespace
}  // namespace restoresim
