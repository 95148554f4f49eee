// TaskCloser (Kafka's TaskManager.closeTaskClean / closeTaskDirty with StreamTask.closeClean /
// closeDirty, and the shutdown's closeAndCleanUpTasks; in org.apache.kafka.streams.processor
// .internals): closes a stream thread's tasks. TaskManager decides which task closes, how
// (clean or dirty, wiped or not) and why; TaskCloser carries it out:
//   an owned task     taken out of every place already: decided (observed), suspended, its
//                     stores closed and — dirty under exactly once, or asked to — wiped, its
//                     offset sum forgotten, CLOSED, counted;
//   a running task    taken out of running: committed first when clean (a refused commit
//                     closes it dirty; a dirty close with a transaction in flight loses the
//                     thread's transaction), its changelogs captured before its stores are
//                     cleared, closed as an owned task, and a CLOSE queued for them;
//   CLOSE items       queued for the next hand-over round (TakeCloseItems);
//   at shutdown       every task the registry holds, what the restore thread (already shut
//                     down) returned through its events, and the parked revived incarnations.
//
// Thread-safety: its stream thread only.
#ifndef RESTORESIM_CORE_RUNTIME_TASK_CLOSER_H_
#define RESTORESIM_CORE_RUNTIME_TASK_CLOSER_H_

#include <map>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "core/runtime/offset_sums.h"
#include "core/runtime/restore_handover.h"
#include "core/runtime/runtime_observer.h"
#include "core/runtime/task.h"
#include "core/runtime/task_executor.h"
#include "core/runtime/task_manager_config.h"
#include "core/runtime/task_manager_stats.h"
#include "core/runtime/tasks_registry.h"

namespace restoresim {

class RestoreThread;

class TaskCloser {
 public:
  // `config`: its manager's, which outlives it, as do the other references. `revoked_running`:
  // the running actives its manager keeps waiting as revoked (committed or not).
  TaskCloser(const TaskManagerConfig& config, TasksRegistry& tasks, TaskExecutor& executor,
             OffsetSums& offset_sums, TaskManagerStats& stats,
             std::vector<absl::Status>& errors, std::map<TaskId, bool>& revoked_running);

  // Closes `task`, held in no place. `decision` says why, for observers (kClose, kCloseLost,
  // kCloseStale, kRevive, ...); `wipe`: its state directory is wiped after the close (a
  // corrupted task's).
  void CloseOwned(std::unique_ptr<Task> task, bool clean, TaskDecision decision,
                  bool wipe = false);
  // Takes running `id` out of the registry and closes it (committing first when `clean` and
  // `commit`), then queues its CLOSE; it no longer waits as revoked. The one path by which a
  // running task closes. REQUIRES: `id` is running.
  void CloseRunning(TaskId id, bool clean, TaskDecision decision, bool commit, bool wipe);
  // Queues a CLOSE for the next round. `promoted`: a standby closed to become an active (its
  // update listener hears PROMOTED).
  void SendClose(const TaskIncarnation& who, std::vector<TopicPartition> changelogs,
                 bool promoted = false);
  // This round's CLOSE items, in the order sent; none are left queued.
  std::vector<TaskItem> TakeCloseItems();
  // Closes every task at shutdown: running ones here, the others once `restore_thread`
  // (already shut down) returned them through its events; `parked` (never registered) too.
  // Returns the last error of the closes, if any. Holds nothing after it.
  [[nodiscard]] absl::Status CloseAll(bool clean, RestoreThread& restore_thread,
                                      std::vector<std::unique_ptr<Task>>& parked);

 private:
  // What the restore thread returned at shutdown: each closed as its event says.
  void CloseDrained(bool clean, RestoreThread& restore_thread);
  // Closes a task that was never registered: nothing to close but its state.
  void CloseUnregistered(Task& task);
  void Decided(const TaskIncarnation& who, TaskDecision decision, TaskType type) const;

  const TaskManagerConfig& config_;
  TasksRegistry& tasks_;
  TaskExecutor& executor_;
  OffsetSums& offset_sums_;
  TaskManagerStats& stats_;
  std::vector<absl::Status>& errors_;
  std::map<TaskId, bool>& revoked_running_;
  std::vector<TaskItem> close_items_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_CLOSER_H_
