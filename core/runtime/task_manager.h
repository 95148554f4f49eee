// TaskManager: a stream thread's policy for its tasks (Kafka's TaskManager). It turns
// assignments (through the main consumer's rebalance callbacks) into tasks to create, close,
// recycle or resume; hands tasks to the restore thread and takes them back; handles
// corruption and failures. It decides; it holds nothing itself:
//   TasksRegistry (tasks_registry.h)  where every task is, moved only by named moves that
//                                     assert the one-owner rule;
//   TaskExecutor (task_executor.h)    processing and committing the running tasks, and the
//                                     pause of a paused topology's running actives (KIP-834);
//   OffsetSums (offset_sums.h)        the task offset sums its member reports;
//   TaskFactory (task_factory.h)      new and recycled incarnations;
//   TaskInitializer (task_initializer.h)  registering new tasks' stores: the backoff of a
//                                     locked directory, the wipe of a damaged store, and
//                                     task.timeout.ms for stores that fail to open;
//   TaskStarter (task_starter.h)      a restored task's committed-offset read and seek before
//                                     it runs, under task.timeout.ms, and its start;
//   TaskCloser (task_closer.h)        closing a task it decided to close (commit, stores,
//                                     wipe), the CLOSE items of each round, and the shutdown's
//                                     close of everything;
//   TaskReviver (task_reviver.h)      corrupted tasks, reported by the restore thread or found
//                                     while processing: closed dirty, wiped and revived.
// A CLOSE sent for a task the restore thread owns leaves it awaiting until the task comes
// back (removed, restored or corrupted) — whatever the assignment says by then decides what
// happens to it.
//
// Revocation, as Kafka Streams' handleRevocation/handleAssignment do it: a running active
// whose partition is revoked commits at once (its partition is still owned) and its fate waits
// for the assignment that follows in the same poll — closed if nothing of it is wanted,
// recycled in place if a standby of it is (its CLOSE and its standby's CREATE then share one
// round), kept if it is assigned again.
//
// Input partitions (Kafka's updateInputPartitions): a task's input is fixed — the topology has
// one source topic and a task per partition — so no assignment can change it; a partition of
// any other topic in an assignment is an error, never a task.
//
// Thread-safety: the stream thread only (rebalance callbacks run inside its consumer poll).
#ifndef RESTORESIM_CORE_RUNTIME_TASK_MANAGER_H_
#define RESTORESIM_CORE_RUNTIME_TASK_MANAGER_H_

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/runtime/offset_sums.h"
#include "core/runtime/restore_thread.h"
#include "core/runtime/runtime_observer.h"
#include "core/runtime/state_manager.h"
#include "core/runtime/streams_producer.h"
#include "core/runtime/task.h"
#include "core/runtime/task_closer.h"
#include "core/runtime/task_executor.h"
#include "core/runtime/task_factory.h"
#include "core/runtime/task_initializer.h"
#include "core/runtime/task_manager_config.h"
#include "core/runtime/task_manager_stats.h"
#include "core/runtime/task_reviver.h"
#include "core/runtime/task_starter.h"
#include "core/runtime/tasks_registry.h"
#include "core/runtime/topology_pause.h"
#include "core/sync/atomic.h"

namespace restoresim {

class TaskManager final : public RebalanceListener {
 public:
  static constexpr int kCloseCommitAttemptsMax = TaskExecutor::kCloseCommitAttemptsMax;

  TaskManager(TaskManagerConfig config, RestoreThread& restore_thread, MainConsumer& consumer,
              StreamsProducer& producer, Atomic<uint64_t>& incarnations);
  ~TaskManager() override;

  // ---- rebalance callbacks (inside MainConsumer::Poll) ----
  void OnPartitionsRevoked(const std::vector<TopicPartition>& partitions) override;
  void OnPartitionsAssigned(const Assignment& assignment) override;
  void OnPartitionsLost(const std::vector<TopicPartition>& partitions) override;

  // ---- the stream thread's loop ----
  // Initialises new tasks and sends this round's CLOSE items, then CREATE items, atomically.
  [[nodiscard]] absl::Status HandOver();
  // Takes back what the restore thread returned: restored tasks start RUNNING, removed ones
  // are recycled, resumed or closed, corrupted ones are closed dirty and revived (all of one
  // drain handled together). Failed ones are closed dirty, and then the first failure is
  // returned (Kafka's handleExceptionsFromStateUpdater rethrowing): the stream thread fails.
  [[nodiscard]] absl::Status HandleRestoreEvents();
  void Buffer(PollResult records) { executor_.Buffer(std::move(records)); }
  // Processes up to records_per_task_max buffered records of every running task; a task whose
  // store reported data loss meanwhile is revived (TaskReviver::ReviveRunning).
  absl::StatusOr<size_t> Process(size_t records_per_task_max);
  // Whether a running task has input buffered that the next Process would take.
  bool HasBuffered() const { return executor_.HasBuffered(); }
  // Flushes the producer, advances changelog offsets, flushes stores, checkpoints (at least
  // once) and commits the input offsets.
  [[nodiscard]] absl::Status Commit() { return executor_.Commit(); }
  // Exactly once: whether the thread's transaction was lost (a commit or send failed for
  // good, or a running task closed dirty with a transaction in flight).
  bool transaction_lost() const { return executor_.transaction_lost(); }
  // Whether an active task was found corrupted (and revived or closed) since the last call:
  // under exactly once its thread then enforces a rebalance (KAFKA-12486).
  bool TakeActiveCorrupted() { return reviver_.TakeActiveCorrupted(); }
  // Kafka's handleLostAll under EOS v2 after a TaskMigratedException, and its abort of an
  // abortable transaction: the transaction is aborted (a fenced producer is replaced by a new,
  // initialised one, which aborts it on the broker), every running task is closed dirty — its
  // store holds writes the aborted transaction took back, so it is wiped — and the tasks
  // still assigned are created again, to restore from their changelogs and reprocess from the
  // last committed offsets. REQUIRES: transaction_lost().
  void HandleTransactionLost();
  // Closes every task: running ones here, the others once the restore thread (already shut
  // down) returned them through its events.
  [[nodiscard]] absl::Status CloseAll(bool clean);

  // ---- observation (oracle, tests) ----
  std::set<TaskId> running() const { return tasks_.RunningIds(); }
  // Running actives it holds paused (processing nothing), as of the last Process.
  std::set<TaskId> paused_running() const { return executor_.paused_running(); }
  std::set<TaskId> in_restore() const { return tasks_.InRestoreIds(); }
  const TasksRegistry& tasks() const { return tasks_; }
  std::set<TaskId> wanted_active() const { return wanted_active_; }
  std::set<TaskId> wanted_standby() const { return wanted_standby_; }
  const TaskManagerStats& stats() const { return stats_; }
  // Store contents of a running task (tests): its counts store, or the store named.
  absl::StatusOr<std::map<std::string, std::string>> RunningStoreContents(
      TaskId id, std::string_view store = "counts") {
    return tasks_.RunningStoreContents(id, store);
  }
  const std::vector<absl::Status>& errors() const { return errors_; }
  // Task directories whose stores were damaged when opened, wiped and restored from scratch.
  // Any thread may read it (a relaxed atomic, not a scheduling point, as metrics are).
  int64_t stores_wiped_on_open() const { return initializer_.stores_wiped_on_open(); }
  // Rebalance callbacks handled so far (the stream thread's state follows them).
  int64_t rebalances_handled() const { return rebalances_handled_; }
  // Whether every active task it is assigned runs (none restores or waits to be initialised or
  // handed over): the condition for its thread to be RUNNING.
  bool AllAssignedActivesRunning() const;
  // Whether its restore thread holds an active task (restoring it).
  bool RestoreThreadHoldsActives() const { return tasks_.RestoreThreadHoldsActives(); }

  // ---- the Streams assignor's inputs and outputs ----
  // Kafka's TaskManager.getTaskOffsetSums (offset_sums.h).
  std::map<TaskId, int64_t> TaskOffsetSums() {
    return offset_sums_.Compute(tasks_, restore_thread_);
  }
  // Reads the checkpoints of the task directories under state_dir (once, before joining).
  void ScanStateDirectory() { offset_sums_.ScanStateDirectory(*config_.fs, config_.state_dir); }
  // When the last assignment asked this member to trigger a probing rebalance (clock ms).
  std::optional<int64_t> probing_rebalance_at_ms() const { return probing_rebalance_at_ms_; }
  void ClearProbingRebalance() { probing_rebalance_at_ms_.reset(); }

 private:
  std::optional<TaskType> Wanted(TaskId id) const;
  void Reconcile();
  // Reconcile, one task in a place: whatever is held of `id` against what is wanted.
  void ReconcilePendingInit(TaskId id, std::optional<TaskType> want);
  void ReconcileInRestore(TaskId id, std::optional<TaskType> want);
  void ReconcileReady(TaskId id, std::optional<TaskType> want);
  void ReconcileRunning(TaskId id, std::optional<TaskType> want);
  // Decides revoked running actives still waiting for the assignment (there was none).
  void SettleRevoked();
  // Exactly once: the checkpoint of a running active committed and then suspended (a recycle).
  void CheckpointCommittedSuspended(Task& task);
  void TakeBack(std::unique_ptr<Task> task);
  void TakeBackRestored(std::unique_ptr<Task> task, bool close_sent);
  void TakeBackRestoredAfterClose(std::unique_ptr<Task> task);
  // One drained event: its task taken back and handled; corruption collected for the drain's
  // end, the last failure kept in `failure`.
  void HandleRestoreEvent(RestoreEvent& e, absl::Status& failure);
  // Starts a restored task wanted as an active (TaskStarter), parks it restored, or fails it.
  void TryStartRunning(std::unique_ptr<Task> task);
  // Retries parked restored tasks still wanted; closes the others.
  void RetryRestored();
  // A task that failed before running (its stores did not open, or its committed offset was
  // not read, within task.timeout.ms): closed dirty — after a CLOSE when `send_close`, its
  // changelogs still registered — and the drain returns the failure (the thread fails).
  void FailTask(std::unique_ptr<Task> task, const absl::Status& error, bool send_close);
  void CloseRestored(TaskId id);
  TopicPartition InputOf(TaskId id) const { return factory_.InputOf(id); }
  // Observation: the assignment, a decision, every task held (no-ops without an observer).
  // `revocation`: from a revocation callback (the rebalance's assignment still to come).
  void ReportAssignment(bool revocation = false) const;
  void Decided(const TaskIncarnation& who, TaskDecision decision, TaskType type) const;
  void ReportView() const;

  const TaskManagerConfig config_;
  RestoreThread& restore_thread_;
  MainConsumer& consumer_;
  StreamsProducer& producer_;

  std::set<TaskId> wanted_active_;
  std::set<TaskId> wanted_standby_;
  TasksRegistry tasks_;
  std::vector<absl::Status> errors_;
  TaskExecutor executor_;
  OffsetSums offset_sums_;
  TaskManagerStats stats_;
  TaskFactory factory_;
  TaskInitializer initializer_;
  TaskStarter starter_;
  TaskCloser closer_;
  TaskReviver reviver_;
  absl::Status start_failure_;  // a task timed out before running, for the drain to return
  std::optional<int64_t> probing_rebalance_at_ms_;
  // Running actives whose partition was revoked, committed (true) or not (the commit failed:
  // they close dirty), waiting for the assignment of the same rebalance.
  std::map<TaskId, bool> revoked_running_;
  bool in_revocation_ = false;
  int64_t rebalances_handled_ = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_MANAGER_H_
