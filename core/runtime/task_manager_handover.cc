// TaskManager, part 2: the hand-over to the restore thread and back — initialising new tasks,
// sending each round's CLOSE and CREATE items, and taking back what the restore thread
// returned (restored tasks start running; removed ones are resumed, recycled or closed;
// corrupted ones are closed dirty and revived).
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
  std::vector<TaskItem> round = std::move(close_items_);
  close_items_.clear();
  for (const std::unique_ptr<Task>& task : tasks_.ready()) offset_sums_.NoteHandedOver(*task);
  tasks_.HandReadyToRestore(round);
  if (round.empty()) return absl::OkStatus();
  std::vector<TaskItem> refused;
  if (!restore_thread_.AddItems(std::move(round), &refused)) {
    for (TaskItem& item : refused) {
      if (item.task == nullptr) continue;
      tasks_.Refused(item.task->id());
      CloseOwned(std::move(item.task), /*clean=*/true, TaskDecision::kCloseShutdown);
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
    CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);
  } else if (want) {
    tasks_.AddReady(factory_.Recycle(std::move(task), *want));
  } else {
    CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);
  }
}

void TaskManager::TakeBackRestored(std::unique_ptr<Task> task, bool close_sent) {
  RS_CHECK(task != nullptr && task->state() == TaskState::kRestoring,
           "a restored task must come back RESTORING");
  if (close_sent) {
    TakeBackRestoredAfterClose(std::move(task));
  } else if (Wanted(task->id()) == TaskType::kActive && task->type() == TaskType::kActive) {
    TryStartRunning(std::move(task));
  } else {
    task->TransitionTo(TaskState::kSuspended);
    SendClose(task->incarnation(), task->state_manager().CaptureChangelogPartitions());
    CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);
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
  HandleCorrupted(corrupted, corrupted_tasks, /*revive=*/failure.ok());
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
        CloseOwned(std::move(e.task), /*clean=*/false, TaskDecision::kCloseFailed);
      }
      break;
  }
}

void TaskManager::HandleCorrupted(
    std::map<TaskIncarnation, std::set<TopicPartition>>& corrupted,
    std::map<TaskIncarnation, std::unique_ptr<Task>>& corrupted_tasks, bool revive) {
  for (auto& [who, task] : corrupted_tasks) {
    RS_CHECK(corrupted.contains(who), "corrupted task {} without its report", who.ToString());
    RS_OBSERVE(OnCorruptionHandled, who, task.get());
    if (task->type() == TaskType::kActive) active_corrupted_ = true;
    if (!revive) {
      // The thread fails with this drain: closed dirty and wiped (the revive's close, without
      // the new incarnation), as Kafka closes its failed set at the thread's shutdown.
      TraceMark("task", "corrupted " + who.ToString() + " not revived: the thread fails");
      CloseOwned(std::move(task), /*clean=*/false, TaskDecision::kCloseShutdown, /*wipe=*/true);
    } else if (Wanted(who.id) == task->type()) {
      Revive(std::move(task), corrupted[who]);
    } else {
      // No longer ours to revive: close it and revive nothing — but wipe it, as a revive
      // would: its directory stays this instance's, and another thread's incarnation of the
      // task (it may have moved there) would open the corrupted stores and checkpoint (found
      // by scenario.swarm, pct:3 seed 192: "[invariant:checkpoint] ... checkpoint names
      // app-counts-changelog-1, reported corrupted and not wiped since").
      ++stats_.stale_reports;
      TraceMark("cover", "corruption report for an incarnation no longer wanted");
      CloseOwned(std::move(task), /*clean=*/false, TaskDecision::kCloseStale, /*wipe=*/true);
    }
  }
  for (const auto& [who, changelogs] : corrupted) {
    if (!corrupted_tasks.contains(who)) RS_OBSERVE(OnCorruptionHandled, who, nullptr);
  }
}

void TaskManager::TakeBack(std::unique_ptr<Task> task) {
  RS_CHECK(task != nullptr && task->state() == TaskState::kSuspended,
           "a removed task must come back SUSPENDED");
  const std::optional<TaskType> want = Wanted(task->id());
  if (!want) {
    CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);  // checkpoints it
  } else if (*want == task->type()) {
    // Mutation resume-as-recreate: closed (and, by Reconcile, created again) instead of
    // resumed.
    if (RS_MUTANT(kResumeAsRecreate)) {
      CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);
      return;
    }
    // Revoked and assigned again meanwhile: resume it.
    Decided(task->incarnation(), TaskDecision::kResume, task->type());
    tasks_.AddReady(std::move(task));
  } else {
    tasks_.AddReady(factory_.Recycle(std::move(task), *want));
  }
}

// Close dirty, wipe, and a new incarnation that restores from the beginning. Wiping under
// at-least-once too: a store restored from a truncated changelog over its old contents would
// not be the fold of any changelog (see docs/DESIGN.md).
void TaskManager::Revive(std::unique_ptr<Task> task, const std::set<TopicPartition>& corrupted) {
  const TaskId id = task->id();
  const TaskType type = task->type();
  RS_CHECK(!tasks_.Where(id).has_value(), "revive of {} while another incarnation is held",
           task->incarnation().ToString());
  TraceMark("task", fmt::format("revive {} ({} corrupted changelogs)",
                                task->incarnation().ToString(), corrupted.size()));
  CloseOwned(std::move(task), /*clean=*/false, TaskDecision::kRevive, /*wipe=*/true);
  ++stats_.revived;
  std::unique_ptr<Task> revived = factory_.Create(id, type);
  // Mutation revived-not-readded (PR 13829): the revived incarnation is booked as the restore
  // thread's but never handed to it.
  if (RS_MUTANT(kRevivedNotReadded)) {
    tasks_.BookWithoutHandOver(revived->incarnation(), type);
    parked_.push_back(std::move(revived));
    return;
  }
  tasks_.AddPendingInit(std::move(revived));
}

absl::StatusOr<size_t> TaskManager::Process(size_t records_per_task_max) {
  absl::StatusOr<size_t> processed = executor_.Process(records_per_task_max);
  for (const auto& [id, cause] : executor_.TakeCorrupted()) {
    if (absl::Status s = ReviveCorruptedRunning(id, cause); !s.ok()) return s;
  }
  RS_CHECK(executor_.TakeCorrupted().empty(), "{}: corrupted tasks left unrevived",
           config_.thread_name);
  return processed;
}

// A store's data loss found while processing (RocksDB reads a block whose checksum fails only
// when a Get reaches it) is handled as the restore thread's corruption reports are: closed
// dirty, wiped, and a new incarnation restores from the changelog — never the thread's failure
// (Kafka's TaskCorruptedException, caught by the stream thread's loop, handleCorruption). Its
// input waits, paused, for that incarnation, which seeks it back to the last commit. Under
// exactly once the dirty close ends the thread's transaction, and every other running task
// follows it (HandleTransactionLost): their records were in it. Under at-least-once what it sent
// is flushed first: a changelog write landing after the new incarnation read the changelog's
// end would be in the changelog and never in the store (found by
// scenario.store_corrupt_while_processing, pct:3 seed 10: "[invariant:checkpoint] ... store
// 'counts' differs from the changelog's history below it"). A flush that fails for good fails
// the thread: reviving over writes that may still land would be a silent divergence.
absl::Status TaskManager::ReviveCorruptedRunning(TaskId id, const absl::Status& cause) {
  RS_CHECK(absl::IsDataLoss(cause) && tasks_.running().contains(id),
           "{}: revive of {} for {}", config_.thread_name, id.ToString(), cause.ToString());
  ++stats_.corrupted_while_processing;
  errors_.push_back(cause);
  active_corrupted_ = true;
  if (!config_.exactly_once) {
    if (absl::Status s = executor_.FlushSends(); !s.ok()) {
      return absl::Status(s.code(), fmt::format("stream thread '{}': task {} corrupted while "
                                                "processing ({}), and its sends not flushed: {}",
                                                config_.thread_name, id.ToString(),
                                                std::string(cause.message()),
                                                std::string(s.message())));
    }
  }
  if (Wanted(id) != TaskType::kActive) {
    // Revoked, waiting for its assignment: no longer ours to revive, but wiped all the same.
    CloseRunning(id, /*clean=*/false, TaskDecision::kCloseStale, /*commit=*/false,
                 /*wipe=*/true);
    return absl::OkStatus();
  }
  TraceMark("cover", "store data loss while processing: task revived");
  const TopicPartition input = InputOf(id);
  CloseRunning(id, /*clean=*/false, TaskDecision::kRevive, /*commit=*/false, /*wipe=*/true);
  ++stats_.revived;
  tasks_.AddPendingInit(factory_.Create(id, TaskType::kActive));
  // What it fetched and did not process is fetched again: from the last commit, or from the
  // beginning when there is none (Kafka resets a revived task's input the same way).
  starter_.RewindUncommitted(id);
  RS_CHECK(!tasks_.running().contains(id), "{}: {} still running after its revive",
           config_.thread_name, id.ToString());
  if (absl::Status s = consumer_.Pause({input}); !s.ok()) errors_.push_back(s);
  return absl::OkStatus();
}

void TaskManager::TryStartRunning(std::unique_ptr<Task> task) {
  absl::Status error;
  switch (starter_.Prepare(*task, &error)) {
    case TaskStarter::Outcome::kStart:
      StartRunning(std::move(task));
      break;
    case TaskStarter::Outcome::kRetry:
      tasks_.AddRestored(std::move(task));
      break;
    case TaskStarter::Outcome::kFail:
      FailTask(std::move(task), error, /*send_close=*/true);
      break;
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
    SendClose(task->incarnation(), task->state_manager().CaptureChangelogPartitions());
  }
  CloseOwned(std::move(task), /*clean=*/false, TaskDecision::kCloseFailed);
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
  SendClose(task->incarnation(), task->state_manager().CaptureChangelogPartitions());
  CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);
}

void TaskManager::StartRunning(std::unique_ptr<Task> task) {
  RS_CHECK(task->type() == TaskType::kActive && Wanted(task->id()) == TaskType::kActive,
           "task {} cannot start running", task->incarnation().ToString());
  // Its input is the partition its id names, as when it was created: input partitions of a
  // task never change here (task_manager.h).
  RS_CHECK(task->input() == InputOf(task->id()), "task {} runs with input {}, not {}",
           task->incarnation().ToString(), task->input().ToString(),
           InputOf(task->id()).ToString());
  Decided(task->incarnation(), TaskDecision::kStartRunning, task->type());
  task->TransitionTo(TaskState::kRunning);
  if (absl::Status s = consumer_.Resume({task->input()}); !s.ok()) errors_.push_back(s);
  TraceMark("task", "running " + task->incarnation().ToString());
  tasks_.AddRunning(std::move(task));
}

}  // namespace restoresim
