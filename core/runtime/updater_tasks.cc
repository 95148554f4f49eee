#include "core/runtime/updater_tasks.h"

#include <fmt/format.h>

#include "core/runtime/runtime_observer.h"
#include "core/runtime/state_manager.h"
#include "core/util/check.h"

namespace restoresim {

void UpdaterTasks::CheckNotOwned(const TaskIncarnation& who, const char* move) const {
  const bool updating = updating_.contains(who.id);
  const bool paused = paused_.contains(who.id);
  RS_INVARIANT("single_owner", who.ToString(), !updating && !paused,
               "restore thread '{}': {} {} while it owns a{} incarnation of task {}", name_, move,
               who.ToString(), updating ? "n updating" : " paused", who.id.ToString());
}

Task& UpdaterTasks::Receive(std::unique_ptr<Task> task, Place place) {
  RS_CHECK(task != nullptr, "restore thread '{}' received an empty task", name_);
  const TaskIncarnation who = task->incarnation();
  CheckNotOwned(who, "receiving");
  RS_OBSERVE(OnHandOff, name_, who, TaskHolder::kToRestore, TaskHolder::kRestoreThread);
  RS_CHECK(!deadlines_ns_.contains(who.id), "new incarnation {} inherits a task timeout",
           who.ToString());
  Task& received = *task;
  PlaceOf(place).emplace(who.id, std::move(task));
  return received;
}

std::unique_ptr<Task> UpdaterTasks::Take(const TaskIncarnation& who) {
  for (OwnedTasks* tasks : {&updating_, &paused_}) {
    auto it = tasks->find(who.id);
    if (it == tasks->end() || it->second->incarnation() != who) continue;
    if (tasks == &paused_) TraceMark("cover", "paused task leaves the restore thread");
    std::unique_ptr<Task> task = std::move(it->second);
    tasks->erase(it);
    deadlines_ns_.erase(who.id);
    RS_INVARIANT("single_owner", who.ToString(), !Owns(who),
                 "{} owned twice by restore thread '{}'", who.ToString(), name_);
    return task;
  }
  return nullptr;
}

std::unique_ptr<Task> UpdaterTasks::TakeUpdating(TaskId id) {
  auto it = updating_.find(id);
  RS_CHECK(it != updating_.end() && it->second != nullptr,
           "restore thread '{}' takes {}, which is not updating", name_, id.ToString());
  std::unique_ptr<Task> task = std::move(it->second);
  updating_.erase(it);
  deadlines_ns_.erase(id);
  RS_INVARIANT("single_owner", task->incarnation().ToString(), !paused_.contains(id),
               "restore thread '{}': task {} updating and paused", name_, id.ToString());
  return task;
}

std::vector<std::unique_ptr<Task>> UpdaterTasks::TakeAllPaused() {
  std::vector<std::unique_ptr<Task>> tasks;
  for (auto& [id, task] : paused_) {
    RS_CHECK(!updating_.contains(id) && !deadlines_ns_.contains(id));
    tasks.push_back(std::move(task));
  }
  paused_.clear();
  return tasks;
}

Task& UpdaterTasks::Move(OwnedTasks& from, OwnedTasks& to, TaskId id, const char* move) {
  auto it = from.find(id);
  RS_CHECK(it != from.end() && it->second != nullptr, "restore thread '{}': {} of {}, not there",
           name_, move, id.ToString());
  RS_INVARIANT("single_owner", it->second->incarnation().ToString(), !to.contains(id),
               "restore thread '{}': task {} both paused and updating", name_, id.ToString());
  Task& task = *it->second;
  to.emplace(id, std::move(it->second));
  from.erase(it);
  return task;
}

Task& UpdaterTasks::Pause(TaskId id) {
  deadlines_ns_.erase(id);  // task.timeout.ms starts afresh after a pause
  return Move(updating_, paused_, id, "pause");
}

Task& UpdaterTasks::Resume(TaskId id) { return Move(paused_, updating_, id, "resume"); }

bool UpdaterTasks::Owns(const TaskIncarnation& who) const {
  for (const OwnedTasks* tasks : {&updating_, &paused_}) {
    auto it = tasks->find(who.id);
    if (it != tasks->end() && it->second->incarnation() == who) return true;
  }
  return false;
}

Task* UpdaterTasks::Updating(const TaskIncarnation& who) {
  auto it = updating_.find(who.id);
  return it != updating_.end() && it->second->incarnation() == who ? it->second.get() : nullptr;
}

std::optional<TimeNs> UpdaterTasks::Deadline(TaskId id) const {
  auto it = deadlines_ns_.find(id);
  if (it == deadlines_ns_.end()) return std::nullopt;
  return it->second;
}

void UpdaterTasks::StartDeadline(TaskId id, TimeNs deadline_ns) {
  RS_CHECK(updating_.contains(id), "restore thread '{}': a deadline for {}, not updating", name_,
           id.ToString());
  RS_CHECK(!deadlines_ns_.contains(id));
  deadlines_ns_[id] = deadline_ns;
}

// Paused tasks too (found by RealBugsTest.PublishedOffsetSumsIncludePausedTasks: without them
// the member reported a paused task's sum at hand-over, stale by what it restored since).
std::map<TaskIncarnation, int64_t> UpdaterTasks::OffsetSums() const {
  std::map<TaskIncarnation, int64_t> sums;
  for (const OwnedTasks* tasks : {&updating_, &paused_}) {
    for (const auto& [id, task] : *tasks) {
      int64_t sum = 0;
      for (const auto& [tp, offset] : task->state_manager().pending_offsets()) sum += offset;
      sums[task->incarnation()] = sum;
    }
  }
  RS_CHECK_EQ(sums.size(), updating_.size() + paused_.size());
  return sums;
}

std::pair<int64_t, int64_t> UpdaterTasks::PausedCounts() const {
  std::pair<int64_t, int64_t> counts{0, 0};
  for (const auto& [id, task] : paused_) {
    ++(task->type() == TaskType::kActive ? counts.first : counts.second);
  }
  RS_CHECK_EQ(counts.first + counts.second, static_cast<int64_t>(paused_.size()),
              "paused counts of '{}'", name_);
  return counts;
}

UpdaterTaskCounts UpdaterTasks::Counts() const {
  UpdaterTaskCounts counts;
  const auto [active_paused, standby_paused] = PausedCounts();
  counts.active_paused = active_paused;
  counts.standby_paused = standby_paused;
  for (const auto& [id, task] : updating_) {
    RS_CHECK(task != nullptr, "restore thread owns an empty slot for {}", id.ToString());
    ++(task->type() == TaskType::kActive ? counts.active_restoring : counts.standby_updating);
  }
  RS_CHECK_LE(counts.active_restoring + counts.standby_updating,
              static_cast<int64_t>(updating_.size()));
  return counts;
}

bool UpdaterTasks::AnyStandbyUpdating() const {
  for (const auto& [id, task] : updating_) {
    if (task->type() == TaskType::kStandby) return true;
  }
  return false;
}

}  // namespace restoresim
