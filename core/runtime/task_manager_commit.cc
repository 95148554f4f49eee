// TaskManager, part 3: processing and committing the running tasks, closing everything at
// shutdown, and what observers and tests see.
#include <fmt/format.h>

#include "core/runtime/count_topology.h"
#include "core/runtime/runtime_observer.h"
#include "core/runtime/task_manager.h"
#include "core/util/check.h"

namespace restoresim {

void TaskManager::Buffer(PollResult records) {
  for (PartitionRecords& batch : records.partitions) {
    auto it = running_.find(TaskId{0, batch.partition.partition});
    if (it != running_.end()) {
      it->second->Buffer(std::move(batch.records));
    } else if (!batch.records.empty()) {
      // Fetched just before the partition was paused: fetch it again once the task runs.
      if (absl::Status s = consumer_.Seek(batch.partition, batch.records.front().offset);
          !s.ok()) {
        errors_.push_back(s);
      }
    }
  }
}

absl::StatusOr<size_t> TaskManager::Process(size_t records_per_task_max) {
  ApplyTopologyPause();  // task_manager_pause.cc
  size_t total = 0;
  for (auto& [id, task] : running_) {
    RS_CHECK(task->state() == TaskState::kRunning && task->type() == TaskType::kActive,
             "task {} in the running registry is {} {}", task->incarnation().ToString(),
             TaskTypeName(task->type()), TaskStateName(task->state()));
    if (IsPausedRunning(*task)) continue;  // its topology is paused: nothing processed
    absl::StatusOr<size_t> n = task->Process(producer_, records_per_task_max);
    if (!n.ok()) return n.status();
    RS_CHECK(*n <= records_per_task_max, "task {} processed {} records, more than {}",
             task->incarnation().ToString(), *n, records_per_task_max);
    total += *n;
  }
  return total;
}

bool TaskManager::HasBuffered() const {
  for (const auto& [id, task] : running_) {
    if (task->buffered() > 0 && !IsPausedRunning(*task)) return true;
  }
  return false;
}

// Waits for the producer's acknowledgements and moves each task's changelog position past what
// it wrote; only then may a checkpoint name those offsets (after the stores flushed).
absl::Status TaskManager::CommitTasks(const std::vector<Task*>& tasks, bool enforce_checkpoint) {
  absl::StatusOr<std::map<TopicPartition, int64_t>> acked =
      producer_.Flush(config_.producer_flush_timeout_ns);
  if (!acked.ok()) return acked.status();
  for (const auto& [changelog, last] : *acked) {
    const TaskId id{0, changelog.partition};
    Task* owner = nullptr;
    for (Task* t : tasks) {
      if (t->id() == id) owner = t;
    }
    if (owner == nullptr) {
      auto it = running_.find(id);
      if (it == running_.end()) continue;  // closed since: its close committed it
      owner = it->second.get();
    }
    owner->state_manager().Advance(changelog, last + 1);
  }
  std::map<TopicPartition, int64_t> offsets;
  for (Task* task : tasks) {
    StateManager& sm = task->state_manager();
    // At-least-once, as Kafka's StreamTask.postCommit: a periodic commit flushes and
    // checkpoints a task only once its stores moved more than checkpoint_offset_delta_min
    // records since its last checkpoint (a close or recycle enforces it); the input offsets
    // are committed either way, since the changelog holds every acknowledged write.
    const bool checkpoint =
        !config_.exactly_once &&
        sm.CheckpointNeeded(enforce_checkpoint, config_.checkpoint_offset_delta_min);
    if (config_.exactly_once || checkpoint) {
      if (absl::Status s = sm.Flush(); !s.ok()) return s;
    }
    if (checkpoint) {
      // As Kafka's ProcessorStateManager: a checkpoint that cannot be written is a warning —
      // the last one written stays, behind the data, and the commit goes on.
      if (absl::Status s = sm.Checkpoint(); !s.ok()) errors_.push_back(s);
    }
    if (task->consumed_offset().has_value()) offsets[task->input()] = *task->consumed_offset();
  }
  if (offsets.empty()) return absl::OkStatus();
  return consumer_.CommitSync(offsets);
}

absl::Status TaskManager::CommitTask(Task& task) {
  return CommitTasks({&task}, /*enforce_checkpoint=*/true);
}

// A task closed or recycled cleanly commits once more, retrying what the transport says may be
// retried, with a backoff, until close_commit_timeout_ns (as Kafka's commitSync and producer
// flush retry internally until their timeout): a single transient disconnect or a leader
// election used to turn the close dirty, leaving processed but uncommitted input to be counted
// twice and a store with writes its changelog did not have yet for the next incarnation to
// open (found by scenario.swarm under broker faults). Retrying is safe: a failed flush keeps
// the producer's queue and a failed commit changes nothing.
absl::Status TaskManager::CommitForClose(Task& task) {
  Clock* clock = config_.clock;
  const TimeNs deadline =
      clock == nullptr ? 0 : DeadlineAfter(clock->NowNs(), config_.close_commit_timeout_ns);
  absl::Status s;
  for (int attempt = 0; attempt < kCloseCommitAttemptsMax; ++attempt) {
    s = CommitTask(task);
    if (s.ok() || !IsRetryable(s)) return s;
    if (clock == nullptr) continue;
    if (clock->NowNs() >= deadline) return s;
    clock->SleepFor(config_.close_commit_backoff_ns);
  }
  return s;
}

absl::Status TaskManager::Commit() {
  std::vector<Task*> tasks;
  for (auto& [id, task] : running_) tasks.push_back(task.get());
  return CommitTasks(tasks, /*enforce_checkpoint=*/false);
}

absl::Status TaskManager::CloseAll(bool clean) {
  const size_t errors_before = errors_.size();
  std::vector<TaskId> ids;
  for (const auto& [id, task] : running_) ids.push_back(id);
  for (const TaskId& id : ids) CloseRunning(id, clean, TaskDecision::kCloseShutdown);
  while (!restored_.empty()) {
    std::unique_ptr<Task> task = std::move(restored_.begin()->second);
    restored_.erase(restored_.begin());
    task->TransitionTo(TaskState::kSuspended);
    CloseOwned(std::move(task), clean, TaskDecision::kCloseShutdown);
  }
  for (RestoreEvent& e : restore_thread_.DrainEvents()) {
    if (e.task == nullptr) continue;
    // A corruption report drained at shutdown: closed dirty and wiped, as the corruption path
    // would have. Closing it cleanly wrote a checkpoint naming the corrupted changelog — found
    // by scenario.clone_restore (pct:3 seed 8: a clone's copied checkpoint fell below the
    // retention of the freeze, and the report arrived during the tail's shutdown).
    if (e.kind == RestoreEvent::Kind::kCorrupted) {
      TraceMark("cover", "corruption report drained at shutdown");
      CloseOwned(std::move(e.task), /*clean=*/false, TaskDecision::kCloseShutdown, /*wipe=*/true);
      continue;
    }
    if (e.kind == RestoreEvent::Kind::kFailed) {  // as a drain would: closed dirty
      TraceMark("cover", "failed task drained at shutdown");
      CloseOwned(std::move(e.task), /*clean=*/false, TaskDecision::kCloseFailed);
      continue;
    }
    CloseOwned(std::move(e.task), clean, TaskDecision::kCloseShutdown);
  }
  for (auto& [id, task] : pending_init_) {
    Decided(task->incarnation(), TaskDecision::kCloseShutdown, task->effective_type());
    task->TransitionTo(TaskState::kClosed);
  }
  pending_init_.clear();
  init_backoff_.clear();
  for (std::unique_ptr<Task>& task : parked_) {  // never registered (revived-not-readded)
    Decided(task->incarnation(), TaskDecision::kCloseShutdown, task->effective_type());
    task->TransitionTo(TaskState::kClosed);
  }
  parked_.clear();
  for (std::unique_ptr<Task>& task : ready_) {
    // (A resumed task is SUSPENDED already: see Reconcile.)
    if (task->state() != TaskState::kSuspended) task->TransitionTo(TaskState::kSuspended);
    CloseOwned(std::move(task), clean, TaskDecision::kCloseShutdown);
  }
  ready_.clear();
  in_restore_.clear();
  awaiting_.clear();
  close_items_.clear();
  RS_CHECK(running_.empty(), "tasks still running after CloseAll");
  return errors_.size() == errors_before ? absl::OkStatus() : errors_.back();
}

// ---- observation ----

bool TaskManager::AllAssignedActivesRunning() const {
  for (const TaskId& id : wanted_active_) {
    if (!running_.contains(id)) return false;
  }
  return true;
}

bool TaskManager::RestoreThreadHoldsActives() const {
  for (const auto& [id, entry] : in_restore_) {
    if (entry.second == TaskType::kActive) return true;
  }
  return false;
}

void TaskManager::ReportAssignment() const {
  RS_OBSERVE(OnAssignment, config_.thread_name, wanted_active_, wanted_standby_);
}

void TaskManager::Decided(const TaskIncarnation& who, TaskDecision decision,
                          TaskType type) const {
  RS_OBSERVE(OnDecision, config_.thread_name, who, decision, type);
}

void TaskManager::ReportView() const {
  RuntimeObserver* observer = CurrentObserver();
  if (observer == nullptr) return;
  std::vector<TaskView> view;
  for (const auto& [id, t] : running_) {
    view.push_back({t->incarnation(), t->effective_type(),
                    revoked_running_.contains(id) ? TaskView::Where::kRevoked
                                                  : TaskView::Where::kRunning});
  }
  for (const auto& [id, t] : restored_) {
    view.push_back({t->incarnation(), t->effective_type(), TaskView::Where::kRestored});
  }
  for (const auto& [id, t] : pending_init_) {
    view.push_back({t->incarnation(), t->effective_type(), TaskView::Where::kPendingInit});
  }
  for (const std::unique_ptr<Task>& t : ready_) {
    view.push_back({t->incarnation(), t->effective_type(), TaskView::Where::kReady});
  }
  for (const auto& [id, entry] : in_restore_) {
    view.push_back({entry.first, entry.second, TaskView::Where::kInRestore});
  }
  for (const auto& [id, who] : awaiting_) {
    view.push_back({who, TaskType::kActive, TaskView::Where::kAwaiting});
  }
  observer->OnTaskManagerView(config_.thread_name, view);
}

std::set<TaskId> TaskManager::running() const {
  std::set<TaskId> ids;
  for (const auto& [id, task] : running_) ids.insert(id);
  return ids;
}

std::set<TaskId> TaskManager::in_restore() const {
  std::set<TaskId> ids;
  for (const auto& [id, entry] : in_restore_) ids.insert(id);
  return ids;
}

absl::StatusOr<std::map<std::string, std::string>> TaskManager::RunningStoreContents(
    TaskId id, std::string_view store_name) {
  auto it = running_.find(id);
  if (it == running_.end()) {
    return absl::NotFoundError(fmt::format("task {} is not running", id.ToString()));
  }
  KeyValueStore* store = it->second->state_manager().Store(store_name);
  if (store == nullptr) return absl::NotFoundError(fmt::format("no {} store", store_name));
  return store->ReadAll();
}

}  // namespace restoresim
