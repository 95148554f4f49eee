// TaskManager, part 3: closing everything at shutdown, and what observers and tests see.
#include <fmt/format.h>

#include "core/runtime/runtime_observer.h"
#include "core/runtime/task_manager.h"
#include "core/util/check.h"

namespace restoresim {

absl::Status TaskManager::CloseAll(bool clean) {
  const size_t errors_before = errors_.size();
  for (const TaskId& id : tasks_.RunningIds()) {
    CloseRunning(id, clean, TaskDecision::kCloseShutdown);
  }
  for (std::unique_ptr<Task>& task : tasks_.TakeAllRestored()) {
    task->TransitionTo(TaskState::kSuspended);
    CloseOwned(std::move(task), clean, TaskDecision::kCloseShutdown);
  }
  for (RestoreEvent& e : restore_thread_.DrainEvents()) {
    CheckHandedBack(e);
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
  for (std::unique_ptr<Task>& task : tasks_.TakeAllPendingInit()) {
    Decided(task->incarnation(), TaskDecision::kCloseShutdown, task->effective_type());
    task->TransitionTo(TaskState::kClosed);
  }
  initializer_.ForgetAll();
  for (std::unique_ptr<Task>& task : parked_) {  // never registered (revived-not-readded)
    Decided(task->incarnation(), TaskDecision::kCloseShutdown, task->effective_type());
    task->TransitionTo(TaskState::kClosed);
  }
  parked_.clear();
  for (std::unique_ptr<Task>& task : tasks_.TakeAllReady()) {
    // (A resumed task is SUSPENDED already: see Reconcile.)
    if (task->state() != TaskState::kSuspended) task->TransitionTo(TaskState::kSuspended);
    CloseOwned(std::move(task), clean, TaskDecision::kCloseShutdown);
  }
  tasks_.DropBookings();
  close_items_.clear();
  RS_CHECK(tasks_.Ids().empty(), "tasks still held after CloseAll");
  return errors_.size() == errors_before ? absl::OkStatus() : errors_.back();
}

// ---- observation ----

bool TaskManager::AllAssignedActivesRunning() const {
  for (const TaskId& id : wanted_active_) {
    if (!tasks_.Has(TasksRegistry::Place::kRunning, id)) return false;
  }
  return true;
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
  std::set<TaskId> revoked;
  for (const auto& [id, committed] : revoked_running_) revoked.insert(id);
  observer->OnTaskManagerView(config_.thread_name, tasks_.View(revoked));
}

absl::StatusOr<std::map<std::string, std::string>> TaskManager::RunningStoreContents(
    TaskId id, std::string_view store_name) {
  auto it = tasks_.running().find(id);
  if (it == tasks_.running().end()) {
    return absl::NotFoundError(fmt::format("task {} is not running", id.ToString()));
  }
  KeyValueStore* store = it->second->state_manager().Store(store_name);
  if (store == nullptr) return absl::NotFoundError(fmt::format("no {} store", store_name));
  return store->ReadAll();
}

}  // namespace restoresim
