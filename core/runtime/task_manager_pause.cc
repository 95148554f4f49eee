// TaskManager, part 4: pause and resume of the running actives (KIP-834; task_manager.h states
// the rules). Kafka's TaskExecutor does not process a task of a paused topology and leaves its
// input to the consumer's back-pressure (a partition whose buffer is full is paused); here the
// input partition of a paused running active is paused on the main consumer at once, so
// nothing piles up while it waits, and resumed when the topology is. It is committed as any
// other (Commit takes every running task).
#include <fmt/format.h>

#include "core/runtime/runtime_observer.h"
#include "core/runtime/task_manager.h"
#include "core/util/check.h"

namespace restoresim {

bool TaskManager::IsPausedRunning(const Task& task) const {
  auto it = paused_running_.find(task.id());
  return it != paused_running_.end() && it->second == task.incarnation();
}

void TaskManager::ApplyTopologyPause() {
  const bool paused = config_.pause != nullptr && config_.pause->paused();
  // Entries of incarnations that stopped running since (closed, recycled, lost) go: whatever
  // runs next under that id is paused anew.
  for (auto it = paused_running_.begin(); it != paused_running_.end();) {
    auto run = running_.find(it->first);
    const bool stale = run == running_.end() || run->second->incarnation() != it->second;
    it = stale ? paused_running_.erase(it) : std::next(it);
  }
  if (!paused && paused_running_.empty()) return;
  if (paused) {
    for (auto& [id, task] : running_) {
      if (IsPausedRunning(*task)) continue;
      RS_CHECK(task->state() == TaskState::kRunning, "pausing {} in {}",
               task->incarnation().ToString(), TaskStateName(task->state()));
      if (absl::Status s = consumer_.Pause({task->input()}); !s.ok()) errors_.push_back(s);
      paused_running_.emplace(id, task->incarnation());
      TraceMark("task", "paused " + task->incarnation().ToString());
      TraceMark("cover", "running active paused");
      RS_OBSERVE(OnTaskPaused, config_.thread_name, task->incarnation(), /*paused=*/true);
    }
    RS_CHECK_EQ(paused_running_.size(), running_.size(), "{}: running actives left unpaused",
                config_.thread_name);
    return;
  }
  for (const auto& [id, who] : paused_running_) {
    Task& task = *running_.at(id);
    if (absl::Status s = consumer_.Resume({task.input()}); !s.ok()) errors_.push_back(s);
    TraceMark("task", "resumed " + who.ToString());
    TraceMark("cover", "running active resumed");
    RS_OBSERVE(OnTaskPaused, config_.thread_name, who, /*paused=*/false);
  }
  paused_running_.clear();
}

std::set<TaskId> TaskManager::paused_running() const {
  std::set<TaskId> ids;
  for (const auto& [id, who] : paused_running_) ids.insert(id);
  return ids;
}

}  // namespace restoresim
