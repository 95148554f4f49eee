// TaskManager, part 3: closing everything at shutdown (TaskCloser does it), and what observers
// and tests see.
#include "core/runtime/runtime_observer.h"
#include "core/runtime/task_manager.h"
#include "core/util/check.h"

namespace restoresim {

absl::Status TaskManager::CloseAll(bool clean) {
  initializer_.ForgetAll();  // its backoffs end with the tasks pending initialisation
  absl::Status closed = closer_.CloseAll(clean, restore_thread_, reviver_.parked());
  RS_CHECK(reviver_.parked().empty() && tasks_.running().empty(), "{}: tasks left after CloseAll",
           config_.thread_name);
  return closed;
}

// ---- observation ----

bool TaskManager::AllAssignedActivesRunning() const {
  for (const TaskId& id : wanted_active_) {
    if (!tasks_.Has(TasksRegistry::Place::kRunning, id)) return false;
  }
  return true;
}

void TaskManager::ReportAssignment(bool revocation) const {
  RS_OBSERVE(OnAssignment, config_.thread_name, wanted_active_, wanted_standby_, revocation);
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

}  // namespace restoresim
