#include "core/runtime/offset_sums.h"

#include <fmt/format.h>

#include "core/runtime/assignment_info.h"
#include "core/state/checkpoint_file.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {
namespace {

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

void OffsetSums::NoteClosed(const StateManager& state) {
  RS_CHECK(state.registered(), "task {}: closed sums of stores never registered",
           state.id().ToString());
  // Without a file (exactly-once deleted it and no clean close wrote one) Kafka reports
  // nothing. At-least-once with no file ever read or written reports 0: the assignor takes it
  // as it takes no sum, the whole changelog to restore.
  // Mutation offset-sums-stale: the sum reported while the task was held stays.
  if (RS_MUTANT(kOffsetSumsStale)) return;
  if (state.checkpoint_on_disk()) {
    last_known_[state.id()] = SumOf(state.last_checkpoint());
  } else {
    last_known_.erase(state.id());
  }
}

void OffsetSums::NoteHandedOver(const Task& task) {
  if (std::optional<int64_t> sum = StoreSum(task)) {
    handed_over_[task.id()] = {task.incarnation(), *sum};
  }
}

std::map<TaskId, int64_t> OffsetSums::Compute(const TasksRegistry& tasks,
                                              const RestoreThread& restore) {
  std::map<TaskId, int64_t> sums;
  for (const auto& [id, task] : tasks.running()) sums[id] = kLatestOffset;
  auto add = [&](const Task& task) {
    if (std::optional<int64_t> sum = StoreSum(task)) sums.emplace(task.id(), *sum);
  };
  for (const auto& [id, task] : tasks.restored()) add(*task);
  for (const auto& [id, task] : tasks.pending_init()) add(*task);
  for (const std::unique_ptr<Task>& task : tasks.ready()) add(*task);
  // Tasks the restore thread owns: its published sums, else their sums at hand-over.
  const std::shared_ptr<const std::map<TaskIncarnation, int64_t>> owned =
      restore.OwnedOffsetSums();
  auto add_owned = [&](TaskId id, const TaskIncarnation& who) {
    if (auto it = owned->find(who); it != owned->end()) {
      sums.emplace(id, it->second);
    } else if (auto h = handed_over_.find(id); h != handed_over_.end() && h->second.first == who) {
      sums.emplace(id, h->second.second);
    }
  };
  for (const auto& [id, held] : tasks.in_restore()) add_owned(id, held.first);
  for (const auto& [id, who] : tasks.awaiting()) add_owned(id, who);
  std::erase_if(handed_over_, [&](const auto& entry) {
    return !tasks.in_restore().contains(entry.first) && !tasks.awaiting().contains(entry.first);
  });
  // Task directories it holds nothing of: what their checkpoint names, as read at the scan or
  // noted when this thread closed their task (NoteClosed). It used to remember the sums it
  // reported here, which understated a task that ran after (offset_sums, random seed 1 of
  // scenario.standbys_placed_by_assignor: 90 reported, 132 in the checkpoint).
  if (RS_MUTANT(kOffsetSumsStale)) {
    for (const auto& [id, sum] : sums) {
      if (sum != kLatestOffset) last_known_[id] = sum;
    }
  }
  for (const auto& [id, sum] : last_known_) sums.emplace(id, sum);
  RS_CHECK_LE(sums.size(), SubscriptionInfo::kTasksMax, "{} tasks to report", sums.size());
  return sums;
}

void OffsetSums::ScanStateDirectory(FileSystem& fs, const std::string& state_dir) {
  absl::StatusOr<std::vector<std::string>> entries = fs.ListDir(state_dir);
  if (!entries.ok()) return;  // no state directory yet: nothing to report
  size_t scanned = 0;
  for (const std::string& name : *entries) {
    std::optional<TaskId> id = TaskId::Parse(name);
    if (!id || ++scanned > SubscriptionInfo::kTasksMax) continue;
    absl::StatusOr<CheckpointOffsets> offsets =
        ReadCheckpoint(fs, state_dir + "/" + name + "/.checkpoint");
    // A missing or damaged checkpoint: restored from scratch, so nothing to report (Kafka).
    if (offsets.ok()) last_known_[*id] = SumOf(*offsets);
  }
  RS_CHECK_LE(last_known_.size(), SubscriptionInfo::kTasksMax);
}

}  // namespace restoresim
