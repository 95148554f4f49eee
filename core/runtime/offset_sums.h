// OffsetSums (Kafka's TaskManager.getTaskOffsetSums): per task a stream thread has state for,
// the sum of its changelog positions, which the member reports in its subscription for the
// Streams assignor to place tasks where their state is:
//   a running active          kLatestOffset;
//   a task the restore thread owns   the restore thread's published sums (keyed by
//                                    incarnation, so a stale entry is never taken), else its
//                                    sum when it was handed over, until the thread publishes;
//   any other task it holds   what its registered stores hold;
//   task directories it holds nothing of   what their checkpoint names: read at
//                                    ScanStateDirectory, or noted when this thread closed
//                                    their task without wiping it (NoteClosed).
// Kafka pins an overflowing sum to Long.MAX_VALUE; so does this.
//
// Thread-safety: its stream thread only (the restore thread's sums come through a snapshot).
#ifndef RESTORESIM_CORE_RUNTIME_OFFSET_SUMS_H_
#define RESTORESIM_CORE_RUNTIME_OFFSET_SUMS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "core/port/file_system.h"
#include "core/runtime/restore_thread.h"
#include "core/runtime/tasks_registry.h"

namespace restoresim {

class OffsetSums {
 public:
  // A task goes to the restore thread: its sum now, until the restore thread publishes one.
  void NoteHandedOver(const Task& task);
  // The sums to report now.
  std::map<TaskId, int64_t> Compute(const TasksRegistry& tasks, const RestoreThread& restore);
  // A task whose stores it closes without wiping them: from now on its directory's sum is
  // what the checkpoint on disk names (Kafka reads that file for a directory it holds no task
  // of), not what it reported while the task restored. REQUIRES: registered, not yet cleared.
  void NoteClosed(const StateManager& state);
  // The task's directory was wiped: no sum of its is known any more.
  void Forget(TaskId id) {
    last_known_.erase(id);
    handed_over_.erase(id);
  }
  // Reads the checkpoints of the task directories under state_dir (once, before joining).
  void ScanStateDirectory(FileSystem& fs, const std::string& state_dir);

 private:
  std::map<TaskId, std::pair<TaskIncarnation, int64_t>> handed_over_;
  std::map<TaskId, int64_t> last_known_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_OFFSET_SUMS_H_
