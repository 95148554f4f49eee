// TaskStarter (Kafka's StreamTask.initializeMetadata and completeRestoration, as TaskManager
// runs them for a task the state updater returned restored): prepares a restored active task
// to run. Under exactly once the checkpoint restoration wrote is deleted first (none may exist
// while a task processes); then its input's committed offset is read and the main consumer
// seeks there — to 0 when nothing is committed and the position cannot be trusted (exactly
// once, or a task revived while running). A retryable failure parks the task restored, under
// task.timeout.ms from its first one; anything else, or the timeout, fails it. A prepared task
// starts RUNNING: its input resumes on the main consumer (Kafka's transitRestoredTaskToRunning).
//
// Thread-safety: its stream thread only.
#ifndef RESTORESIM_CORE_RUNTIME_TASK_STARTER_H_
#define RESTORESIM_CORE_RUNTIME_TASK_STARTER_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/runtime/task.h"
#include "core/runtime/task_manager_config.h"
#include "core/runtime/tasks_registry.h"
#include "core/sync/clock.h"
#include "core/transport/transport.h"

namespace restoresim {

class TaskStarter {
 public:
  enum class Outcome { kStart, kRetry, kFail };
  // `config` and `tasks`: its manager's, which outlive it.
  TaskStarter(const TaskManagerConfig& config, TasksRegistry& tasks, MainConsumer& consumer,
              std::vector<absl::Status>& errors);

  // Prepares a restored active `task`, which its manager wants as an active, and moves it on:
  // kStart, it runs (registry: running); kRetry, it is parked restored (retried at the next
  // drain); kFail, `task` stays with the caller to be failed, and `*error` says why.
  Outcome Start(std::unique_ptr<Task>& task, absl::Status* error);
  // A task revived while running: when nothing is committed, its next incarnation's input
  // restarts from the beginning, not from the consumer's position.
  void RewindUncommitted(TaskId id) { rewind_uncommitted_.insert(id); }
  // Deadlines end with their parked tasks (started, failed or closed).
  void DropDeadlinesNotRestored(const TasksRegistry& tasks);

 private:
  // kStart (its input positioned), kRetry or kFail (`*error` says why).
  Outcome Prepare(Task& task, absl::Status* error);
  // A prepared task starts RUNNING: its input resumes, and it joins the running tasks.
  void Run(std::unique_ptr<Task> task);
  // Reads the committed offset of `task`'s input and seeks to it (or to 0).
  absl::Status PositionInput(Task& task, bool& fatal);
  // Starts `id`'s deadline at its first retryable error; true once it passed.
  bool TimedOut(TaskId id, const absl::Status& cause);
  // The failure to report (its deadline ends with it).
  absl::Status FailureOf(const Task& task, const absl::Status& cause);

  const TaskManagerConfig& config_;
  TasksRegistry& tasks_;
  MainConsumer& consumer_;
  std::vector<absl::Status>& errors_;
  // Restored tasks parked after retryable committed-offset errors: when task.timeout.ms runs
  // out.
  std::map<TaskId, TimeNs> deadlines_ns_;
  std::set<TaskId> rewind_uncommitted_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_STARTER_H_
