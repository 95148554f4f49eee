// TaskReviver (Kafka's TaskManager.handleCorruption and closeDirtyAndRevive, with the stream
// thread's catch of TaskCorruptedException; in org.apache.kafka.streams.processor.internals):
// what a stream thread does with a task whose state is corrupted.
//   reported by the restore thread   all reports of one drain together: a task still wanted
//                                    as its type is closed dirty, wiped and revived (a new
//                                    incarnation pending initialisation, restoring from the
//                                    changelog's beginning); one no longer wanted is closed
//                                    dirty and wiped; if the drain fails the thread, none is
//                                    revived;
//   found while processing           a running task whose store reported data loss: under at
//                                    least once what it sent is flushed first; closed dirty,
//                                    wiped, revived with its input paused and rewound to the
//                                    last commit.
// Whether an active was corrupted is kept for the stream thread (KAFKA-12486's rebalance under
// exactly once). The mutation revived-not-readded parks the revived incarnation here, where
// nothing hands it over.
//
// Thread-safety: its stream thread only.
#ifndef RESTORESIM_CORE_RUNTIME_TASK_REVIVER_H_
#define RESTORESIM_CORE_RUNTIME_TASK_REVIVER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/runtime/task.h"
#include "core/runtime/task_closer.h"
#include "core/runtime/task_executor.h"
#include "core/runtime/task_factory.h"
#include "core/runtime/task_manager_config.h"
#include "core/runtime/task_manager_stats.h"
#include "core/runtime/task_starter.h"
#include "core/runtime/tasks_registry.h"
#include "core/transport/transport.h"

namespace restoresim {

class TaskReviver {
 public:
  // What the assignment wants of a task now (its manager's policy).
  using Wanted = std::function<std::optional<TaskType>(TaskId)>;
  // The types a revive goes through: its manager's, which outlive it.
  struct Parts {
    TasksRegistry& tasks;
    TaskExecutor& executor;
    TaskFactory& factory;
    TaskStarter& starter;
    TaskCloser& closer;
    MainConsumer& consumer;
  };
  TaskReviver(const TaskManagerConfig& config, Parts parts, TaskManagerStats& stats,
              std::vector<absl::Status>& errors, Wanted wanted);

  // All corruption reports of one drain together (`corrupted`: the changelogs of each
  // incarnation; `corrupted_tasks`: those that came back with their report); revived unless
  // the drain failed the thread.
  void HandleCorrupted(std::map<TaskIncarnation, std::set<TopicPartition>>& corrupted,
                       std::map<TaskIncarnation, std::unique_ptr<Task>>& corrupted_tasks,
                       bool revive);
  // A running task whose store reported data loss while it processed: closed dirty, wiped and
  // revived (Kafka's TaskCorruptedException on the processing path). Fails (the thread's
  // error) only when at least once cannot flush what the task sent; then `id` still runs.
  // REQUIRES: `id` is running and `cause` is a DataLoss.
  [[nodiscard]] absl::Status ReviveRunning(TaskId id, const absl::Status& cause);
  // Whether an active task was found corrupted since the last call.
  bool TakeActiveCorrupted() { return std::exchange(active_corrupted_, false); }
  // Revived incarnations parked by the mutation revived-not-readded (never registered).
  std::vector<std::unique_ptr<Task>>& parked() { return parked_; }

 private:
  // Close dirty, wipe, and a new incarnation that restores from the beginning.
  void Revive(std::unique_ptr<Task> task, const std::set<TopicPartition>& corrupted);

  const TaskManagerConfig& config_;
  Parts parts_;
  TaskManagerStats& stats_;
  std::vector<absl::Status>& errors_;
  const Wanted wanted_;
  bool active_corrupted_ = false;  // see TakeActiveCorrupted
  std::vector<std::unique_ptr<Task>> parked_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_REVIVER_H_
