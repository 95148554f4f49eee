// TaskExecutor (Kafka's TaskExecutor, with the commit of TaskManager.commit and
// TaskExecutor.commitOffsetsOrTransaction): processes and commits a stream thread's running
// tasks, and keeps the running actives of a paused topology from processing (KIP-834). It
// holds no task: the running tasks are TasksRegistry's; TaskManager decides what runs.
//
// Commit, at least once: the producer is flushed (its acknowledgements move each task's
// changelog position past what it wrote), stores are flushed and checkpointed — a periodic
// commit only past checkpoint_offset_delta_min records since the last checkpoint, a close or
// recycle always — and then the input offsets are committed. Under exactly_once the stores are
// flushed and no checkpoint is written while processing.
//
// Pause (KIP-834): while its topology is paused (config.pause, read at each Process) a running
// active processes nothing — its input partition is paused on the main consumer, as Kafka's
// TaskExecutor skips the tasks of paused topologies — but it is still committed, revoked,
// recycled and closed as any other; resumed with the topology.
//
// Thread-safety: its stream thread only.
#ifndef RESTORESIM_CORE_RUNTIME_TASK_EXECUTOR_H_
#define RESTORESIM_CORE_RUNTIME_TASK_EXECUTOR_H_

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/port/clock.h"
#include "core/runtime/state_manager.h"
#include "core/runtime/tasks_registry.h"
#include "core/runtime/topology_pause.h"
#include "core/transport/transport.h"

namespace restoresim {

struct TaskExecutorConfig {
  std::string thread_name;
  bool exactly_once = false;
  TimeNs producer_flush_timeout_ns = 30 * kSecond;
  // A clean close's commit retries retryable failures for this long, backing off on `clock`
  // (null: kCloseCommitAttemptsMax attempts back to back). See TaskManagerConfig.
  Clock* clock = nullptr;
  TimeNs close_commit_timeout_ns = 60 * kSecond;
  TimeNs close_commit_backoff_ns = 100 * kMillisecond;
  int64_t checkpoint_offset_delta_min = kCheckpointOffsetDeltaMin;
  const TopologyPause* pause = nullptr;  // null: never paused
};

class TaskExecutor {
 public:
  static constexpr int kCloseCommitAttemptsMax = 1000;

  // `errors` collects what fails nothing (its task manager's error list).
  TaskExecutor(TaskExecutorConfig config, TasksRegistry& tasks, MainConsumer& consumer,
               Producer& producer, std::vector<absl::Status>& errors);

  // Hands polled records to the running tasks (records of a task not running are fetched
  // again once it runs).
  void Buffer(PollResult records);
  // Processes up to records_per_task_max buffered records of every running task that is not
  // paused; takes up the topology's pause or resume first.
  absl::StatusOr<size_t> Process(size_t records_per_task_max);
  bool HasBuffered() const;
  // The periodic commit of every running task.
  [[nodiscard]] absl::Status Commit();
  // The commit of a task closed or recycled cleanly: retries retryable failures with a
  // backoff until close_commit_timeout_ns (as Kafka's commitSync and producer flush do).
  [[nodiscard]] absl::Status CommitForClose(Task& task);

  // Whether `task` (this incarnation) is a running active held paused.
  bool IsPausedRunning(const Task& task) const;
  std::set<TaskId> paused_running() const;

 private:
  // `enforce_checkpoint`: a close or recycle; else a periodic commit.
  absl::Status CommitTasks(const std::vector<Task*>& tasks, bool enforce_checkpoint);
  // Moves each task's changelog position past what the producer acknowledged.
  absl::Status FlushProducer(const std::vector<Task*>& tasks);
  void ApplyTopologyPause();
  void PauseRunning();
  void ResumeRunning();

  const TaskExecutorConfig config_;
  TasksRegistry& tasks_;
  MainConsumer& consumer_;
  Producer& producer_;
  std::vector<absl::Status>& errors_;
  // Running actives paused (their input paused on the consumer), by the incarnation paused.
  std::map<TaskId, TaskIncarnation> paused_running_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_EXECUTOR_H_
