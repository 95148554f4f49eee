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
namespace {

// task.timeout.ms from a task's first error on (Kafka's maybeInitTaskTimeoutOrThrow): the first
// error starts the deadline in `deadlines` (`started` says so), a later one past it has timed
// out; with a timeout of 0 the first error does. Without a clock nothing times out.
template <typename Key>
bool TimeoutPassed(std::map<Key, TimeNs>& deadlines, const Key& key, TimeNs timeout_ns,
                   Clock* clock, bool& started) {
  started = false;
  if (timeout_ns == 0) return true;
  const TimeNs now = clock == nullptr ? 0 : clock->NowNs();
  auto [it, first] = deadlines.try_emplace(key, DeadlineAfter(now, timeout_ns));
  RS_CHECK(!first || it->second >= now, "a task's deadline in the past");
  started = first;
  return !first && clock != nullptr && now >= it->second;
}

}  // namespace

absl::Status TaskManager::HandOver() {
  SettleRevoked();  // (a revocation without its assignment: nothing of them is wanted now)
  InitializePending();
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

void TaskManager::InitializePending() {
  std::vector<TaskId> ids;
  for (const auto& [id, task] : tasks_.pending_init()) ids.push_back(id);
  // Deadlines of incarnations no longer pending (closed meanwhile) are dropped.
  std::erase_if(init_deadline_ns_, [this](const auto& entry) {
    auto it = tasks_.pending_init().find(entry.first.id);
    return it == tasks_.pending_init().end() || it->second->incarnation() != entry.first;
  });
  for (const TaskId& id : ids) {
    if (init_backoff_.BackingOff(id)) continue;
    Task& task = *tasks_.pending_init().at(id);
    // Exactly once: the thread's producer initialises its transactions before its first active
    // task does (Kafka's RecordCollectorImpl.initialize), which aborts a transaction a crashed
    // predecessor of this transactional.id left open on the changelogs about to be restored.
    if (config_.exactly_once && task.effective_type() == TaskType::kActive) {
      if (absl::Status s = producer_.InitTransactionIfNeeded(); !s.ok()) {
        errors_.push_back(s);  // retried next round, the task still pending
        continue;
      }
    }
    StateManager& sm = task.state_manager();
    absl::Status s = sm.RegisterStores();
    // Mutation damaged-store-retried: the damaged store is retried as it is, forever.
    if (absl::IsDataLoss(s) && !RS_MUTANT(kDamagedStoreRetried)) {
      // A damaged local store (LogStore or RocksDB corruption): as Kafka Streams does, it is
      // wiped and restored from its changelog — never served, never retried as it is forever.
      RS_CHECK(!sm.registered(), "task {}: stores left open by a failed registration",
               task.incarnation().ToString());
      TraceMark("cover", "store damaged on open: wiped");
      stores_wiped_on_open_.fetch_add(1, std::memory_order_relaxed);
      if (absl::Status w = sm.Wipe(); w.ok()) s = sm.RegisterStores();
    }
    if (!s.ok()) {  // retried next round
      // A directory still locked by another thread's closing incarnation is expected, and
      // waited for (Kafka's LockException); any other error is retried under task.timeout.ms.
      TraceMark("cover", absl::IsAborted(s) ? "initialisation retried: directory locked"
                                            : "initialisation retried: stores failed to open");
      if (absl::IsAborted(s)) {
        ++stats_.init_attempts_locked;
        init_backoff_.NoteLocked(id);
      } else {
        errors_.push_back(s);
        if (InitTimedOut(task.incarnation())) FailInitialization(tasks_.TakePendingInit(id), s);
      }
      continue;
    }
    init_backoff_.Clear(id);
    init_deadline_ns_.erase(task.incarnation());  // progress clears the timeout
    tasks_.AddReady(tasks_.TakePendingInit(id));
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
    tasks_.AddReady(Recycle(std::move(task), *want));
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
    tasks_.AddReady(Recycle(std::move(task), *want));
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
  std::unique_ptr<Task> revived = NewTask(id, type);
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
  tasks_.AddPendingInit(NewTask(id, TaskType::kActive));
  // What it fetched and did not process is fetched again: from the last commit, or from the
  // beginning when there is none (Kafka resets a revived task's input the same way).
  rewind_uncommitted_.insert(id);
  RS_CHECK(!tasks_.running().contains(id), "{}: {} still running after its revive",
           config_.thread_name, id.ToString());
  if (absl::Status s = consumer_.Pause({input}); !s.ok()) errors_.push_back(s);
  return absl::OkStatus();
}

void TaskManager::TryStartRunning(std::unique_ptr<Task> task) {
  // Exactly once: the checkpoint restoration wrote is deleted before the task processes (none
  // may exist while it does). A disk that cannot delete it keeps the task restored, retried at
  // the next drain: never processing over a checkpoint.
  if (absl::Status s = task->state_manager().RemoveCheckpointForProcessing(); !s.ok()) {
    errors_.push_back(s);
    TraceMark("eos", "checkpoint not deleted before running: retried");
    tasks_.AddRestored(std::move(task));
    return;
  }
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
    if (auto it = committed->find(input); it != committed->end()) {
      s = consumer_.Seek(input, it->second);
    } else if (config_.exactly_once || rewind_uncommitted_.contains(task->id())) {
      // Nothing committed: from the beginning (auto.offset.reset=earliest), not from where an
      // earlier incarnation whose transaction aborted, or which was revived while running,
      // left the consumer's position (past what it fetched and never processed).
      s = consumer_.Seek(input, 0);
    }
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
    tasks_.AddRestored(std::move(task));
    return;
  }
  start_deadline_ns_.erase(task->id());  // progress clears the timeout
  rewind_uncommitted_.erase(task->id());
  StartRunning(std::move(task));
}

bool TaskManager::StartTimedOut(TaskId id, const absl::Status& cause) {
  RS_CHECK(IsRetryable(cause));
  bool started = false;
  const bool passed =
      TimeoutPassed(start_deadline_ns_, id, config_.task_timeout_ns, config_.clock, started);
  if (started) TraceMark("cover", "task timeout started before running");
  return passed;
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
  RS_CHECK(!tasks_.Where(id).has_value(), "failed task {} still held", id.ToString());
  SendClose(task->incarnation(), task->state_manager().CaptureChangelogPartitions());
  CloseOwned(std::move(task), /*clean=*/false, TaskDecision::kCloseFailed);
  if (start_failure_.ok()) start_failure_ = error;
}

bool TaskManager::InitTimedOut(const TaskIncarnation& who) {
  RS_CHECK(tasks_.pending_init().contains(who.id), "{}: {} is not pending initialisation",
           config_.thread_name, who.ToString());
  bool started = false;
  return TimeoutPassed(init_deadline_ns_, who, config_.task_timeout_ns, config_.clock, started);
}

void TaskManager::FailInitialization(std::unique_ptr<Task> task, const absl::Status& cause) {
  RS_CHECK(task->state() == TaskState::kCreated && !task->state_manager().registered(),
           "task {} failed initialisation in {}", task->incarnation().ToString(),
           TaskStateName(task->state()));
  init_deadline_ns_.erase(task->incarnation());
  const absl::Status error = absl::DeadlineExceededError(fmt::format(
      "task {}: stores not opened within task.timeout.ms ({} ms): {}",
      task->incarnation().ToString(), config_.task_timeout_ns / kMillisecond,
      std::string(cause.message())));
  TraceMark("task", "failed: stores not opened within task.timeout.ms");
  ++stats_.failed;
  errors_.push_back(error);
  RS_OBSERVE(OnTaskFailed, config_.thread_name, task->incarnation(), error);
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
  // A deadline ends with its parked task (started, failed or closed).
  std::erase_if(start_deadline_ns_, [this](const auto& entry) {
    return !tasks_.Has(TasksRegistry::Place::kRestored, entry.first);
  });
  RS_CHECK(start_deadline_ns_.size() <= tasks_.restored().size());
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
