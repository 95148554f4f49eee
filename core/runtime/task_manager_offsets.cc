// TaskManager, part 4: the task offset sums a member reports in its subscription (Kafka's
// TaskManager.getTaskOffsetSums), and the probing rebalance its assignment may schedule.
#include <fmt/format.h>

#include "core/runtime/assignment_info.h"
#include "core/runtime/task_manager.h"
#include "core/state/checkpoint_file.h"
#include "core/util/check.h"

namespace restoresim {
namespace {

// Kafka pins an overflowing sum to Long.MAX_VALUE; so do we.
int64_t SumOf(const CheckpointOffsets& offsets) {
  int64_t sum = 0;
  for (const auto& [tp, offset] : offsets) {
    RS_CHECK_GE(offset, 0, "changelog {} at a negative position", tp.ToString());
    if (__builtin_add_overflow(sum, offset, &sum)) return INT64_MAX;
  }
  return sum;
}

// Tasks not running: what their stores hold, if registered.
std::optional<int64_t> StoreSum(const Task& task) {
  if (!task.state_manager().registered()) return std::nullopt;
  return SumOf(task.state_manager().pending_offsets());
}

}  // namespace

void TaskManager::NoteHandedOver(const Task& task) {
  if (std::optional<int64_t> sum = StoreSum(task)) {
    handed_over_sums_[task.id()] = {task.incarnation(), *sum};
  }
}

std::map<TaskId, int64_t> TaskManager::TaskOffsetSums() {
  std::map<TaskId, int64_t> sums;
  for (const auto& [id, task] : running_) sums[id] = kLatestOffset;
  auto add = [&](const Task& task) {
    if (std::optional<int64_t> sum = StoreSum(task)) sums.emplace(task.id(), *sum);
  };
  for (const auto& [id, task] : restored_) add(*task);
  for (const auto& [id, task] : pending_init_) add(*task);
  for (const std::unique_ptr<Task>& task : ready_) add(*task);
  // Tasks the restore thread owns: its published sums, else their sums at hand-over.
  const std::shared_ptr<const std::map<TaskIncarnation, int64_t>> owned =
      restore_thread_.OwnedOffsetSums();
  auto add_owned = [&](TaskId id, const TaskIncarnation& who) {
    if (auto it = owned->find(who); it != owned->end()) {
      sums.emplace(id, it->second);
    } else if (auto h = handed_over_sums_.find(id);
               h != handed_over_sums_.end() && h->second.first == who) {
      sums.emplace(id, h->second.second);
    }
  };
  for (const auto& [id, held] : in_restore_) add_owned(id, held.first);
  for (const auto& [id, who] : awaiting_) add_owned(id, who);
  std::erase_if(handed_over_sums_, [&](const auto& entry) {
    return !in_restore_.contains(entry.first) && !awaiting_.contains(entry.first);
  });
  // Task directories it holds nothing of: the last sum known (a checkpoint read at start, or
  // what the task had when this thread last held it).
  for (const auto& [id, sum] : sums) {
    if (sum != kLatestOffset) last_known_sums_[id] = sum;
  }
  for (const auto& [id, sum] : last_known_sums_) sums.emplace(id, sum);
  RS_CHECK_LE(sums.size(), SubscriptionInfo::kTasksMax, "{} tasks to report", sums.size());
  return sums;
}

void TaskManager::ScanStateDirectory() {
  absl::StatusOr<std::vector<std::string>> entries = config_.fs->ListDir(config_.state_dir);
  if (!entries.ok()) return;  // no state directory yet: nothing to report
  size_t scanned = 0;
  for (const std::string& name : *entries) {
    std::optional<TaskId> id = TaskId::Parse(name);
    if (!id || ++scanned > SubscriptionInfo::kTasksMax) continue;
    absl::StatusOr<CheckpointOffsets> offsets =
        ReadCheckpoint(*config_.fs, config_.state_dir + "/" + name + "/.checkpoint");
    // A missing or damaged checkpoint: restored from scratch, so nothing to report (Kafka).
    if (offsets.ok()) last_known_sums_[*id] = SumOf(*offsets);
  }
}

}  // namespace restoresim
