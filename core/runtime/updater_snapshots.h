// UpdaterSnapshots (what Kafka's DefaultStateUpdater exposes to the stream thread through
// getTasks / restoredActiveTasks and StoreChangelogReader's completedChangelogs, and the
// changelog offsets TaskManager.getTaskOffsetSums reads of the tasks it owns): the values one
// restore thread publishes after each step for other threads to read as snapshots —
//   completed changelogs;
//   records remaining over the active changelogs still restoring (with a trace counter);
//   records written to standby stores so far;
//   per owned task, the sum of its changelog positions (only with publish_offset_sums: each
//   publish is a scheduling point, and a run that never reports them makes none).
//
// Thread-safety: Publish on its restore thread only; the readers any thread (snapshots).
#ifndef RESTORESIM_CORE_RUNTIME_UPDATER_SNAPSHOTS_H_
#define RESTORESIM_CORE_RUNTIME_UPDATER_SNAPSHOTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "core/runtime/changelog_reader.h"
#include "core/runtime/task.h"
#include "core/runtime/updater_tasks.h"
#include "core/sync/shared_cell.h"

namespace restoresim {

class UpdaterSnapshots {
 public:
  UpdaterSnapshots(std::string restore_thread, bool publish_offset_sums);

  // After a step that restored `step_records` records.
  void Publish(const ChangelogReader& reader, const UpdaterTasks& tasks, int64_t step_records);

  std::shared_ptr<const std::set<TopicPartition>> CompletedChangelogs() const {
    return completed_.Snapshot();
  }
  int64_t RemainingRecords() const { return *remaining_.Snapshot(); }
  std::shared_ptr<const std::map<TaskIncarnation, int64_t>> OwnedOffsetSums() const {
    return owned_offset_sums_.Snapshot();
  }
  int64_t StandbyRecordsUpdated() const { return *standby_updated_.Snapshot(); }

 private:
  const std::string name_;
  const bool publish_offset_sums_;
  int64_t last_remaining_ = 0;  // restore thread only
  int64_t standby_published_ = 0;  // restore thread only: the cell's value, for the observer
  SharedCell<std::set<TopicPartition>> completed_{{}, "completed_changelogs"};
  SharedCell<int64_t> remaining_{0, "remaining_records"};
  SharedCell<int64_t> standby_updated_{0, "standby_records_updated"};
  SharedCell<std::map<TaskIncarnation, int64_t>> owned_offset_sums_{{}, "owned_offset_sums"};
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_UPDATER_SNAPSHOTS_H_
