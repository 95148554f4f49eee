// TaskManager, part 2: the hand-over to the restore thread and back — initialising new tasks,
// sending each round's CLOSE and CREATE items, and taking back what the restore thread
// returned (restored tasks start running; removed ones are resumed, recycled or closed;
// corrupted ones are closed dirty and revived by TaskReviver).
#include <fmt/format.h>

#include <iterator>
#include <map>
#include <utility>

#include "core/runtime/runtime_observer.h"
#include "core/runtime/task_manager.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {
absl::Status TaskManager::HandOver() {
  SettleRevoked();  // (a revocation without its assignment: nothing of them is wanted now)
  initializer_.InitializePending();
  std::vector<TaskItem> round = closer_.TakeCloseItems();
  for (const std::unique_ptr<Task>& task : tasks_.ready()) offset_sums_.NoteHandedOver(*task);
  tasks_.HandReadyToRestore(round);
  if (round.empty()) return absl::OkStatus();
  std::vector<TaskItem> refused;
  if (!restore_thread_.AddItems(std::move(round), &refused)) {
    for (TaskItem& item : refused) {
      if (item.task == nullptr) continue;
      tasks_.Refused(item.task->id());
      closer_.CloseOwned(std::move(item.task), /*clean=*/true, TaskDecision::kCloseShutdown);
    }
    return absl::CancelledError("the restore thread is shutting down");
  }
  ReportView();
  return absl::OkStatus();
}

// A task restored to the end offset of its registration after its CLOSE was sent: the
// incarnation is over (its CLOSE is on its way); a new one keeps the stores and restores on
// to the current end (the partition may have had another owner meanwhile who wrote to the
// changelog), or the task closes. Found by scenario.two_rebalances_between_polls: it ran on a
// stale store.
void TaskManager::TakeBackRestoredAfterClose(std::unique_ptr<Task> task) {
  task->TransitionTo(TaskState::kSuspended);
  const std::optional<TaskType> want = Wanted(task->id());
  TraceMark("cover", want ? "restored after its CLOSE was sent, wanted again"
                          : "restored after its CLOSE was sent");
  // Mutation stale-pending-action (KAFKA-15690): the close decided when the CLOSE was sent is
  // applied, although the assignment wants the task again by now.
  if (want && RS_MUTANT(kStalePendingAction)) {
    closer_.CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);
  } else if (want) {
    tasks_.AddReady(factory_.Recycle(std::move(task), *want));
  } else {
    closer_.CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);
  }
}

void TaskManager::TakeBackRestored(std::unique_ptr<Task> task, bool close_sent) {
  RS_CHECK(task != nullptr && task->state() == TaskState::kRestoring,
           "a restored task must come back RESTORING");
  const bool wanted_active =
      Wanted(task->id()) == TaskType::kActive && task->type() == TaskType::kActive;
  // Mutation close-sent-then-started (KAFKA-16077): the close pending since its CLOSE was sent
  // is forgotten because the assignment wants the task again, and this incarnation runs.
  if (close_sent && !(wanted_active && RS_MUTANT(kCloseSentThenStarted))) {
    TakeBackRestoredAfterClose(std::move(task));
  } else if (wanted_active) {
    TryStartRunning(std::move(task));
  } else {
    task->TransitionTo(TaskState::kSuspended);
    closer_.SendClose(task->incarnation(), task->state_manager().CaptureChangelogPartitions());
    closer_.CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);
  }
}

absl::Status TaskManager::HandleRestoreEvents() {
  std::map<TaskIncarnation, std::set<TopicPartition>> corrupted;
  std::map<TaskIncarnation, std::unique_ptr<Task>> corrupted_tasks;
  absl::Status failure;  // the first failure of this drain
  // Mutation restored-listed-twice (KAFKA-17402): the booking of a restored task is dropped
  // one drain late, so until then it is listed as running and as in the restore thread.
  if (RS_MUTANT(kRestoredListedTwice)) tasks_.DropBookingsOfRunning();
  for (RestoreEvent& e : restore_thread_.DrainEvents()) {
    CheckHandedBack(e);  // as the restore thread did when it sent it
    if (e.kind == RestoreEvent::Kind::kCorrupted) {
      ++stats_.corrupted_reports;
      // Several reports about one incarnation merge by union.
      corrupted[e.incarnation].insert(e.corrupted_changelogs.begin(),
                                      e.corrupted_changelogs.end());
      if (e.task != nullptr) {
        tasks_.TakeBackFromRestore(e.incarnation);
        corrupted_tasks[e.incarnation] = std::move(e.task);
      }
      continue;
    }
    HandleRestoreEvent(e, failure);
  }
  if (failure.ok() && !start_failure_.ok()) failure = std::exchange(start_failure_, {});
  // A fatal error of the drain wins over its corruption reports (Kafka's
  // maybeThrowTaskExceptions): the corrupted tasks are closed with the failing thread, not
  // revived.
  reviver_.HandleCorrupted(corrupted, corrupted_tasks, /*revive=*/failure.ok());
  if (!failure.ok()) {
    // Nothing more is created or started, and no view reported (what it holds no longer
    // follows its assignment): the thread fails, its tasks close at its shutdown.
    return absl::Status(failure.code(),
                        fmt::format("stream thread '{}': restoration failed: {}",
                                    config_.thread_name, std::string(failure.message())));
  }
  RetryRestored();
  if (!start_failure_.ok()) {
    const absl::Status timed_out = std::exchange(start_failure_, {});
    return absl::Status(timed_out.code(),
                        fmt::format("stream thread '{}': {}", config_.thread_name,
                                    std::string(timed_out.message())));
  }
  Reconcile();
  return absl::OkStatus();
}

// Only an event that carries its task moves it back: an error about a task (a checkpoint the
// restore thread could not write) leaves it there. Dropping its booking on any event made the
// stream thread create a second incarnation of a task its restore thread still restored (found
// by scenario.storage_faults_on_a_live_instance, pct:3 seed 242: "[invariant:single_owner] ...
// lists task 0_0 twice: running and pending initialisation").
void TaskManager::HandleRestoreEvent(RestoreEvent& e, absl::Status& failure) {
  const bool late = e.kind == RestoreEvent::Kind::kRestored && RS_MUTANT(kRestoredListedTwice);
  const bool close_sent =
      e.task != nullptr && tasks_.TakeBackFromRestore(e.incarnation, /*keep_booking=*/late);
  switch (e.kind) {
    case RestoreEvent::Kind::kRestored:
      TakeBackRestored(std::move(e.task), close_sent);
      break;
    case RestoreEvent::Kind::kRemoved:
      TakeBack(std::move(e.task));
      break;
    case RestoreEvent::Kind::kCorrupted:
      RS_CHECK(false, "corruption of {} is handled with its drain", e.incarnation.ToString());
      break;
    case RestoreEvent::Kind::kWarning:
      ++stats_.restore_errors;
      errors_.push_back(e.error);
      break;
    case RestoreEvent::Kind::kFailed:
      failure = e.error;  // the last of the drain, as Kafka throws its last fatal error
      errors_.push_back(e.error);
      if (e.task != nullptr) {
        ++stats_.failed;
        closer_.CloseOwned(std::move(e.task), /*clean=*/false, TaskDecision::kCloseFailed);
      }
      break;
  }
}

void TaskManager::TakeBack(std::unique_ptr<Task> task) {
  RS_CHECK(task != nullptr && task->state() == TaskState::kSuspended,
           "a removed task must come back SUSPENDED");
  const std::optional<TaskType> want = Wanted(task->id());
  if (!want) {
    closer_.CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);  // checkpoints it
  } else if (*want == task->type()) {
    // Mutation resume-as-recreate: closed (and, by Reconcile, created again) instead of
    // resumed.
    if (RS_MUTANT(kResumeAsRecreate)) {
      closer_.CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);
      return;
    }
    // Revoked and assigned again meanwhile: resume it.
    Decided(task->incarnation(), TaskDecision::kResume, task->type());
    tasks_.AddReady(std::move(task));
  } else {
    tasks_.AddReady(factory_.Recycle(std::move(task), *want));
  }
}

absl::StatusOr<size_t> TaskManager::Process(size_t records_per_task_max) {
  absl::StatusOr<size_t> processed = executor_.Process(records_per_task_max);
  for (const auto& [id, cause] : executor_.TakeCorrupted()) {
    if (absl::Status s = reviver_.ReviveRunning(id, cause); !s.ok()) return s;
  }
  RS_CHECK(executor_.TakeCorrupted().empty(), "{}: corrupted tasks left unrevived",
           config_.thread_name);
  return processed;
}

void TaskManager::TryStartRunning(std::unique_ptr<Task> task) {
  RS_CHECK(Wanted(task->id()) == TaskType::kActive, "task {} cannot start running",
           task->incarnation().ToString());
  absl::Status error;
  if (starter_.Start(task, &error) == TaskStarter::Outcome::kFail) {
    FailTask(std::move(task), error, /*send_close=*/true);
  }
}

void TaskManager::FailTask(std::unique_ptr<Task> task, const absl::Status& error,
                           bool send_close) {
  RS_CHECK(!error.ok() && !tasks_.Where(task->id()).has_value(), "{}: failure of {} ({})",
           config_.thread_name, task->incarnation().ToString(), error.ToString());
  ++stats_.failed;
  errors_.push_back(error);
  RS_OBSERVE(OnTaskFailed, config_.thread_name, task->incarnation(), error);
  if (send_close) {  // its changelogs are still registered in the restore thread
    task->TransitionTo(TaskState::kSuspended);
    closer_.SendClose(task->incarnation(), task->state_manager().CaptureChangelogPartitions());
  }
  closer_.CloseOwned(std::move(task), /*clean=*/false, TaskDecision::kCloseFailed);
  if (start_failure_.ok()) start_failure_ = error;
}

void TaskManager::RetryRestored() {
  std::vector<TaskId> ids;
  for (const auto& [id, task] : tasks_.restored()) ids.push_back(id);
  for (const TaskId& id : ids) {
    if (Wanted(id) == TaskType::kActive) {
      TryStartRunning(tasks_.TakeRestored(id));
    } else {
      CloseRestored(id);
    }
  }
  starter_.DropDeadlinesNotRestored(tasks_);
}

// A restored task no longer wanted as an active: its completed changelogs are still
// registered in the restore thread, so it closes with a CLOSE, as when it comes back unwanted.
void TaskManager::CloseRestored(TaskId id) {
  std::unique_ptr<Task> task = tasks_.TakeRestored(id);
  task->TransitionTo(TaskState::kSuspended);
  closer_.SendClose(task->incarnation(), task->state_manager().CaptureChangelogPartitions());
  closer_.CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);
}

}  // namespace restoresim
