// TaskExecutor (Kafka's TaskExecutor, with the commit of TaskManager.commit and
// TaskExecutor.commitOffsetsOrTransaction): processes and commits a stream thread's running
// tasks, and keeps the running actives of a paused topology from processing (KIP-834). It
// holds no task: the running tasks are TasksRegistry's; TaskManager decides what runs.
//
// Commit, at least once: the producer is flushed (its acknowledgements move each task's
// changelog position past what it wrote), stores are flushed and checkpointed — a periodic
// commit only past checkpoint_offset_delta_min records since the last checkpoint, a close or
// recycle always — and then the input offsets are committed.
//
// Commit, exactly_once_v2 (Kafka's commitOffsetsOrTransaction with the thread's one
// StreamsProducer): every running task shares the thread's transaction, so every commit — the
// periodic one, a revocation's, a close's — commits all of them: the producer is flushed, the
// stores are flushed (no checkpoint while processing), and the input offsets of every running
// task go into the transaction with the main consumer's group metadata before it commits. A
// transaction begins before the first record processed after a commit. A retryable failure
// leaves the transaction open (the next commit retries it); any other failure (fenced,
// abortable, the member left the generation) means the transaction is lost: the executor
// processes and commits nothing more until its task manager closed every running task dirty
// and ended the transaction (TaskManager::HandleTransactionLost).
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
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/runtime/state_manager.h"
#include "core/runtime/streams_producer.h"
#include "core/runtime/tasks_registry.h"
#include "core/runtime/topology_pause.h"
#include "core/sync/clock.h"
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
               StreamsProducer& producer, std::vector<absl::Status>& errors);

  // Hands polled records to the running tasks (records of a task not running are fetched
  // again once it runs).
  void Buffer(PollResult records);
  // Processes up to records_per_task_max buffered records of every running task that is not
  // paused; takes up the topology's pause or resume first.
  absl::StatusOr<size_t> Process(size_t records_per_task_max);
  bool HasBuffered() const;
  // Running tasks whose store reported data loss (DataLoss: a corrupted block found at a read,
  // as RocksDB finds it) while the last Process ran them, with the cause; the caller revives
  // them. Only stores report DataLoss: the producer's errors are of other codes.
  std::vector<std::pair<TaskId, absl::Status>> TakeCorrupted() {
    return std::exchange(corrupted_, {});
  }
  // The periodic commit of every running task.
  [[nodiscard]] absl::Status Commit();
  // The commit of a task closed or recycled cleanly: retries retryable failures with a
  // backoff until close_commit_timeout_ns (as Kafka's commitSync and producer flush do).
  [[nodiscard]] absl::Status CommitForClose(Task& task);
  // At least once: waits, with CommitForClose's retries and timeout, until the producer
  // acknowledged every record sent so far, so that what a task about to close dirty sent is
  // in its changelogs before a new incarnation reads their end (Kafka's handleCorruption
  // commits the other tasks first, which flushes the thread's producer).
  [[nodiscard]] absl::Status FlushSends();

  // ---- exactly_once_v2: the thread's transaction ----
  // Whether the transaction was lost (see above); the cause. Cleared by its task manager once
  // the running tasks are closed and the transaction ended.
  bool transaction_lost() const { return !lost_cause_.ok(); }
  const absl::Status& transaction_lost_cause() const { return lost_cause_; }
  void MarkTransactionLost(absl::Status cause);
  // Ends the lost transaction before its running tasks are closed dirty: a fenced producer is
  // replaced by a new, initialised one (which aborts it on the broker), an abortable one is
  // aborted; the cause, and a failure to end it, go to the errors. It stays lost until
  // ClearTransactionLost.
  void EndLostTransaction();
  void ClearTransactionLost() { lost_cause_ = absl::OkStatus(); }
  bool transaction_in_flight() const {
    return producer_.exactly_once() && producer_.transaction_in_flight();
  }

  // Whether `task` (this incarnation) is a running active held paused.
  bool IsPausedRunning(const Task& task) const;
  std::set<TaskId> paused_running() const;

 private:
  // `enforce_checkpoint`: a close or recycle; else a periodic commit.
  absl::Status CommitTasks(const std::vector<Task*>& tasks, bool enforce_checkpoint);
  // Exactly once: the commit of the thread's transaction, `tasks` and every running task.
  absl::Status CommitTransaction(const std::vector<Task*>& tasks);
  // Exactly once: begins the transaction before `task` processes; false when it may not
  // process now (a retryable failure, or the transaction was lost).
  bool BeginTransactionFor(const Task& task);
  // Moves each task's changelog position past what the producer acknowledged.
  absl::Status FlushProducer(const std::vector<Task*>& tasks);
  // Runs `attempt_once` until it succeeds, fails for good, or close_commit_timeout_ns passed.
  absl::Status WithCloseRetries(const std::function<absl::Status()>& attempt_once);
  void ApplyTopologyPause();
  void PauseRunning();
  void ResumeRunning();

  const TaskExecutorConfig config_;
  TasksRegistry& tasks_;
  MainConsumer& consumer_;
  StreamsProducer& producer_;
  std::vector<absl::Status>& errors_;
  absl::Status lost_cause_;  // exactly once: why the transaction was lost (OK: it was not)
  std::vector<std::pair<TaskId, absl::Status>> corrupted_;  // see TakeCorrupted
  // Exactly once: the input offset last committed per running incarnation, so a commit sends
  // only offsets that moved (Kafka's commitNeeded) and an idle thread opens no transaction.
  std::map<TaskIncarnation, int64_t> committed_offsets_;
  // Running actives paused (their input paused on the consumer), by the incarnation paused.
  std::map<TaskId, TaskIncarnation> paused_running_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_EXECUTOR_H_
