#include "core/runtime/updater_snapshots.h"

#include "core/runtime/runtime_observer.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

UpdaterSnapshots::UpdaterSnapshots(std::string restore_thread, bool publish_offset_sums)
    : name_(std::move(restore_thread)), publish_offset_sums_(publish_offset_sums) {}

void UpdaterSnapshots::Publish(const ChangelogReader& reader, const UpdaterTasks& tasks,
                               int64_t step_records) {
  RS_CHECK_GE(step_records, 0, "restore thread '{}': a step of {} records", name_, step_records);
  completed_.Publish(reader.Completed());
  const int64_t remaining = reader.RemainingRecords();
  if (remaining != last_remaining_ || step_records > 0) {
    last_remaining_ = remaining;
    // Restore progress on the timeline: one counter track per restore thread.
    TraceMark("counter", "restore_remaining " + name_, remaining);
    TraceMark("counter", "restored_total " + name_, reader.total_restored());
  }
  remaining_.Publish(remaining);
  if (step_records > 0) {
    standby_published_ = reader.standby_updated();
    standby_updated_.Publish(standby_published_);
  }
  // The oracle's standby_progress compares it with the standby records it saw restored.
  RS_OBSERVE(OnStandbyProgressPublished, name_, standby_published_);
  if (publish_offset_sums_) owned_offset_sums_.Publish(tasks.OffsetSums());
}

}  // namespace restoresim
