// UpdaterCheckpoints (Kafka's DefaultStateUpdater maybeCheckpointUpdatingTasks and its forced
// checkpoints, KAFKA-12634): when one restore thread checkpoints what it restored.
//   periodic   every checkpoint_interval_ns (commit.interval.ms), each updating task whose
//              stores moved more than checkpoint_offset_delta_min records (Kafka: 10 000);
//   forced     a task about to leave cleanly (restored, removed, paused, returned at
//              shutdown), so the stream thread never starts from less than was restored;
//   held       every updating task at a checkpoint/restore cycle's safe point (hold_point.h),
//              after which the end offsets are read again.
// A checkpoint that fails is a warning (it fails nothing: the stores keep what was flushed).
// Checkpoint time goes to the KIP-869 metrics; all time from the clock port.
//
// Thread-safety: its restore thread only.
#ifndef RESTORESIM_CORE_RUNTIME_UPDATER_CHECKPOINTS_H_
#define RESTORESIM_CORE_RUNTIME_UPDATER_CHECKPOINTS_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "core/runtime/changelog_reader.h"
#include "core/runtime/hold_point.h"
#include "core/runtime/state_updater_metrics.h"
#include "core/runtime/task.h"
#include "core/runtime/updater_tasks.h"
#include "core/sync/clock.h"

namespace restoresim {

struct UpdaterCheckpointsConfig {
  std::string restore_thread;
  TimeNs checkpoint_interval_ns = 5 * kSecond;
  int64_t checkpoint_offset_delta_min = kCheckpointOffsetDeltaMin;
  HoldPoint* hold = nullptr;  // null when off
};

class UpdaterCheckpoints {
 public:
  // `warn`: reports a checkpoint that failed, about the task it names.
  using Warn = std::function<void(const TaskIncarnation&, const absl::Status&)>;
  UpdaterCheckpoints(UpdaterCheckpointsConfig config, Clock& clock, UpdaterTasks& tasks,
                     StateUpdaterMetrics& metrics, Warn warn);

  // The loop begins with its reader: the first periodic checkpoint is one interval away.
  void Start(ChangelogReader& reader);
  // The periodic checkpoint, if due (measured).
  void MaybeCheckpoint();
  // The forced checkpoint of a task about to leave cleanly (measured).
  void BeforeHandBack(Task& task);
  // At the top of the loop: holds while the instance is frozen; after it, re-reads end offsets.
  void MaybeHold();

 private:
  void CheckpointDue();
  // A hold's preparation: flushes and checkpoints every updating task (never ahead of the
  // flushed data: StateManager::Checkpoint writes flushed positions); the first failure.
  absl::Status CheckpointOwned();

  const UpdaterCheckpointsConfig config_;
  Clock& clock_;
  UpdaterTasks& tasks_;
  StateUpdaterMetrics& metrics_;
  const Warn warn_;
  ChangelogReader* reader_ = nullptr;
  TimeNs next_checkpoint_ns_ = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_UPDATER_CHECKPOINTS_H_
