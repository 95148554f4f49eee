// TaskManager, part 2: the hand-over to the restore thread and back — initialising new tasks,
// sending each round's CLOSE and CREATE items, and taking back what the restore thread
// returned (restored tasks start running; removed ones are resumed, recycled or closed;
// corrupted ones are closed dirty and revived).
#include <fmt/format.h>

#include <iterator>
#include <utility>

#include "core/runtime/mutation.h"
#include "core/runtime/runtime_observer.h"
#include "core/runtime/task_manager.h"
#include "core/util/check.h"

namespace restoresim {

absl::Status TaskManager::HandOver() {
  SettleRevoked();  // (a revocation without its assignment: nothing of them is wanted now)
  for (auto it = pending_init_.begin(); it != pending_init_.end();) {
    if (InitBackingOff(it->first)) {
      ++it;
      continue;
    }
    StateManager& sm = it->second->state_manager();
    absl::Status s = sm.RegisterStores();
    // Mutation damaged-store-retried: the damaged store is retried as it is, forever.
    if (absl::IsDataLoss(s) && !RS_MUTANT(kDamagedStoreRetried)) {
      // A damaged local store (LogStore or RocksDB corruption): as Kafka Streams does, it is
      // wiped and restored from its changelog — never served, never retried as it is forever.
      RS_CHECK(!sm.registered(), "task {}: stores left open by a failed registration",
               it->second->incarnation().ToString());
      TraceMark("cover", "store damaged on open: wiped");
      stores_wiped_on_open_.fetch_add(1, std::memory_order_relaxed);
      if (absl::Status w = sm.Wipe(); w.ok()) s = sm.RegisterStores();
    }
    if (!s.ok()) {  // retried next round
      // A directory still locked by another thread's closing incarnation is expected.
      TraceMark("cover", absl::IsAborted(s) ? "initialisation retried: directory locked"
                                            : "initialisation retried: stores failed to open");
      if (!absl::IsAborted(s)) errors_.push_back(s);
      if (absl::IsAborted(s)) NoteLocked(it->first);
      ++it;
      continue;
    }
    init_backoff_.erase(it->first);
    ready_.push_back(std::move(it->second));
    it = pending_init_.erase(it);
  }
  std::vector<TaskItem> round = std::move(close_items_);
  close_items_.clear();
  for (std::unique_ptr<Task>& task : ready_) {
    RS_CHECK(!in_restore_.contains(task->id()) && !awaiting_.contains(task->id()),
             "task {} handed over while the restore thread has an incarnation of it",
             task->incarnation().ToString());
    in_restore_[task->id()] = {task->incarnation(), task->effective_type()};
    NoteHandedOver(*task);
    TaskItem item;
    item.kind = TaskItem::Kind::kCreate;
    item.incarnation = task->incarnation();
    item.task = std::move(task);
    round.push_back(std::move(item));
  }
  ready_.clear();
  if (round.empty()) return absl::OkStatus();
  std::vector<TaskItem> refused;
  if (!restore_thread_.AddItems(std::move(round), &refused)) {
    for (TaskItem& item : refused) {
      if (item.task == nullptr) continue;
      in_restore_.erase(item.task->id());
      CloseOwned(std::move(item.task), /*clean=*/true, TaskDecision::kCloseShutdown);
    }
    return absl::CancelledError("the restore thread is shutting down");
  }
  ReportView();
  return absl::OkStatus();
}

bool TaskManager::InitBackingOff(TaskId id) const {
  auto it = init_backoff_.find(id);
  if (it == init_backoff_.end() || config_.clock == nullptr) return false;
  return config_.clock->NowNs() < it->second.next_attempt_ns;
}

void TaskManager::NoteLocked(TaskId id) {
  ++stats_.init_attempts_locked;
  if (config_.clock == nullptr) return;
  InitBackoff& b = init_backoff_[id];
  b.backoff_ns = b.backoff_ns == 0 ? config_.init_backoff_ns
                                   : std::min(2 * b.backoff_ns, config_.init_backoff_ns_max);
  RS_CHECK(b.backoff_ns > 0 && b.backoff_ns <= config_.init_backoff_ns_max,
           "task {}: initialisation backoff {} ns out of range", id.ToString(), b.backoff_ns);
  b.next_attempt_ns = DeadlineAfter(config_.clock->NowNs(), b.backoff_ns);
  if (b.backoff_ns == config_.init_backoff_ns_max) {
    TraceMark("cover", "initialisation backoff at its cap");
  }
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
    ready_.push_back(Recycle(std::move(task), *want));
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
  if (RS_MUTANT(kRestoredListedTwice)) {
    for (auto it = in_restore_.begin(); it != in_restore_.end();) {
      it = running_.contains(it->first) ? in_restore_.erase(it) : std::next(it);
    }
  }
  for (RestoreEvent& e : restore_thread_.DrainEvents()) {
    const TaskId id = e.incarnation.id;
    // Only an event that carries its task moves it back: an error about a task (a checkpoint
    // the restore thread could not write) leaves it there. Dropping its booking on any event
    // made the stream thread create a second incarnation of a task its restore thread still
    // restored (found by scenario.storage_faults_on_a_live_instance, pct:3 seed 242:
    // "[invariant:single_owner] ... lists task 0_0 twice: running and pending initialisation").
    const bool moves_back = e.task != nullptr;
    const bool late = e.kind == RestoreEvent::Kind::kRestored && RS_MUTANT(kRestoredListedTwice);
    if (auto it = in_restore_.find(id); moves_back && it != in_restore_.end() &&
                                        it->second.first == e.incarnation && !late) {
      in_restore_.erase(it);
    }
    bool close_sent = false;
    if (auto it = awaiting_.find(id);
        moves_back && it != awaiting_.end() && it->second == e.incarnation) {
      awaiting_.erase(it);
      close_sent = true;
    }
    RS_CHECK(e.task == nullptr || e.task->incarnation() == e.incarnation,
             "event about {} carries {}", e.incarnation.ToString(),
             e.task->incarnation().ToString());
    switch (e.kind) {
      case RestoreEvent::Kind::kRestored:
        TakeBackRestored(std::move(e.task), close_sent);
        break;
      case RestoreEvent::Kind::kRemoved:
        TakeBack(std::move(e.task));
        break;
      case RestoreEvent::Kind::kCorrupted:
        ++stats_.corrupted_reports;
        // Several reports about one incarnation merge by union.
        corrupted[e.incarnation].insert(e.corrupted_changelogs.begin(),
                                        e.corrupted_changelogs.end());
        if (e.task != nullptr) corrupted_tasks[e.incarnation] = std::move(e.task);
        break;
      case RestoreEvent::Kind::kWarning:
        ++stats_.restore_errors;
        errors_.push_back(e.error);
        break;
      case RestoreEvent::Kind::kFailed:
        RS_CHECK(!e.error.ok(), "failure event about {} without an error",
                 e.incarnation.ToString());
        if (failure.ok()) failure = e.error;
        errors_.push_back(e.error);
        if (e.task != nullptr) {
          ++stats_.failed;
          RS_CHECK(e.task->state() == TaskState::kSuspended, "failed task {} came back {}",
                   e.incarnation.ToString(), TaskStateName(e.task->state()));
          CloseOwned(std::move(e.task), /*clean=*/false, TaskDecision::kCloseFailed);
        }
        break;
    }
  }
  // All corruption of this drain together.
  for (auto& [who, task] : corrupted_tasks) {
    RS_OBSERVE(OnCorruptionHandled, who, task.get());
    if (Wanted(who.id) == task->type()) {
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
  if (failure.ok() && !start_failure_.ok()) failure = std::exchange(start_failure_, {});
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
    ready_.push_back(std::move(task));
  } else {
    ready_.push_back(Recycle(std::move(task), *want));
  }
}

// Close dirty, wipe, and a new incarnation that restores from the beginning. Wiping under
// at-least-once too: a store restored from a truncated changelog over its old contents would
// not be the fold of any changelog (see docs/DESIGN.md).
void TaskManager::Revive(std::unique_ptr<Task> task, const std::set<TopicPartition>& corrupted) {
  const TaskId id = task->id();
  const TaskType type = task->type();
  RS_CHECK(!pending_init_.contains(id) && !in_restore_.contains(id),
           "revive of {} while another incarnation is held", task->incarnation().ToString());
  TraceMark("task", fmt::format("revive {} ({} corrupted changelogs)",
                                task->incarnation().ToString(), corrupted.size()));
  CloseOwned(std::move(task), /*clean=*/false, TaskDecision::kRevive, /*wipe=*/true);
  ++stats_.revived;
  std::unique_ptr<Task> revived = NewTask(id, type);
  // Mutation revived-not-readded (PR 13829): the revived incarnation is booked as the restore
  // thread's but never handed to it.
  if (RS_MUTANT(kRevivedNotReadded)) {
    in_restore_[id] = {revived->incarnation(), type};
    parked_.push_back(std::move(revived));
    return;
  }
  pending_init_[id] = std::move(revived);
}

void TaskManager::TryStartRunning(std::unique_ptr<Task> task) {
  const TopicPartition input = task->input();
  absl::StatusOr<std::map<TopicPartition, int64_t>> committed = consumer_.Committed({input});
  absl::Status s = committed.status();
  if (!s.ok() && !IsRetryable(s)) {
    // Kafka's initializeMetadata: anything but a timeout fails the task's initialisation
    // (a StreamsException for the task; the thread fails).
    FailBeforeRunning(std::move(task), s);
    return;
  }
  if (s.ok()) {
    // The input resumes where the group committed it (nothing: auto.offset.reset).
    if (auto it = committed->find(input); it != committed->end()) s = consumer_.Seek(input, it->second);
  }
  if (!s.ok()) {
    // Retried at the next drain; a retryable error is expected, anything else (of the seek)
    // is also recorded. Retryable ones count against task.timeout.ms, as Kafka's
    // maybeInitTaskTimeoutOrThrow around the committed-offset read of a task's initialisation.
    if (!IsRetryable(s)) errors_.push_back(s);
    TraceMark("cover", "committed-offset read failed before running");
    if (IsRetryable(s) && StartTimedOut(task->id(), s)) {
      FailBeforeRunning(std::move(task), s);
      return;
    }
    restored_[task->id()] = std::move(task);
    return;
  }
  start_deadline_ns_.erase(task->id());  // progress clears the timeout
  StartRunning(std::move(task));
}

bool TaskManager::StartTimedOut(TaskId id, const absl::Status& cause) {
  RS_CHECK(IsRetryable(cause));
  if (config_.task_timeout_ns == 0) return true;  // task.timeout.ms=0: the first error fails it
  const TimeNs now = config_.clock == nullptr ? 0 : config_.clock->NowNs();
  auto [it, first] = start_deadline_ns_.try_emplace(id, DeadlineAfter(now, config_.task_timeout_ns));
  if (first) {
    TraceMark("cover", "task timeout started before running");
    return false;
  }
  return config_.clock != nullptr && now >= it->second;
}

// The task fails as a task failing in the restore thread does: closed dirty, and the drain
// returns the failure (the stream thread fails; its handler answers).
void TaskManager::FailBeforeRunning(std::unique_ptr<Task> task, const absl::Status& cause) {
  const TaskId id = task->id();
  start_deadline_ns_.erase(id);
  const absl::Status error =
      IsRetryable(cause)
          ? absl::DeadlineExceededError(fmt::format(
                "task {}: committed offset of {} not read within task.timeout.ms ({} ms): {}",
                task->incarnation().ToString(), task->input().ToString(),
                config_.task_timeout_ns / kMillisecond, std::string(cause.message())))
          : absl::Status(cause.code(),
                         fmt::format("task {}: failed to read the committed offset of {}: {}",
                                     task->incarnation().ToString(), task->input().ToString(),
                                     std::string(cause.message())));
  TraceMark("cover", "task timed out before running");
  ++stats_.failed;
  errors_.push_back(error);
  RS_OBSERVE(OnTaskFailed, config_.thread_name, task->incarnation(), error);
  task->TransitionTo(TaskState::kSuspended);
  RS_CHECK(!running_.contains(id) && !restored_.contains(id));
  SendClose(task->incarnation(), task->state_manager().CaptureChangelogPartitions());
  CloseOwned(std::move(task), /*clean=*/false, TaskDecision::kCloseFailed);
  if (start_failure_.ok()) start_failure_ = error;
}

void TaskManager::RetryRestored() {
  std::vector<TaskId> ids;
  for (const auto& [id, task] : restored_) ids.push_back(id);
  for (const TaskId& id : ids) {
    std::unique_ptr<Task> task = std::move(restored_.at(id));
    restored_.erase(id);
    if (Wanted(id) == TaskType::kActive) {
      TryStartRunning(std::move(task));
    } else {
      restored_[id] = std::move(task);
      CloseRestored(id);
    }
  }
  // A deadline ends with its parked task (started, failed or closed).
  for (auto it = start_deadline_ns_.begin(); it != start_deadline_ns_.end();) {
    it = restored_.contains(it->first) ? std::next(it) : start_deadline_ns_.erase(it);
  }
  RS_CHECK(start_deadline_ns_.size() <= restored_.size());
}

// A restored task no longer wanted as an active: its completed changelogs are still
// registered in the restore thread, so it closes with a CLOSE, as when it comes back unwanted.
void TaskManager::CloseRestored(TaskId id) {
  std::unique_ptr<Task> task = std::move(restored_.at(id));
  restored_.erase(id);
  task->TransitionTo(TaskState::kSuspended);
  SendClose(task->incarnation(), task->state_manager().CaptureChangelogPartitions());
  CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);
}

void TaskManager::StartRunning(std::unique_ptr<Task> task) {
  RS_CHECK(task->type() == TaskType::kActive && !running_.contains(task->id()),
           "task {} cannot start running", task->incarnation().ToString());
  // Its input is the partition its id names, as when it was created: input partitions of a
  // task never change here (task_manager.h).
  RS_CHECK(task->input() == InputOf(task->id()), "task {} runs with input {}, not {}",
           task->incarnation().ToString(), task->input().ToString(),
           InputOf(task->id()).ToString());
  Decided(task->incarnation(), TaskDecision::kStartRunning, task->type());
  task->TransitionTo(TaskState::kRunning);
  if (absl::Status s = task->state_manager().RemoveCheckpointForProcessing(); !s.ok()) {
    errors_.push_back(s);
  }
  if (absl::Status s = consumer_.Resume({task->input()}); !s.ok()) errors_.push_back(s);
  TraceMark("task", "running " + task->incarnation().ToString());
  running_[task->id()] = std::move(task);
}

}  // namespace restoresim
