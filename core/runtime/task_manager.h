// TaskManager: a stream thread's policy for its tasks (Kafka's TaskManager). It turns
// assignments (through the main consumer's rebalance callbacks) into tasks to create, close,
// recycle or resume; hands tasks to the restore thread and takes them back; handles
// corruption and failures. It decides; it holds nothing itself:
//   TasksRegistry (tasks_registry.h)  where every task is, moved only by named moves that
//                                     assert the one-owner rule;
//   TaskExecutor (task_executor.h)    processing and committing the running tasks, and the
//                                     pause of a paused topology's running actives (KIP-834);
//   OffsetSums (offset_sums.h)        the task offset sums its member reports;
//   InitBackoff (init_backoff.h)      the backoff of tasks whose directory is locked.
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

#include "core/runtime/init_backoff.h"
#include "core/runtime/offset_sums.h"
#include "core/runtime/restore_thread.h"
#include "core/runtime/runtime_observer.h"
#include "core/runtime/state_manager.h"
#include "core/runtime/streams_producer.h"
#include "core/runtime/task.h"
#include "core/runtime/task_executor.h"
#include "core/runtime/tasks_registry.h"
#include "core/runtime/topology_pause.h"
#include "core/sync/atomic.h"

namespace restoresim {

struct TaskManagerConfig {
  std::string thread_name;  // its stream thread's, for observers
  std::string application_id;
  std::string input_topic;
  std::string state_dir;  // "<state.dir>/<application.id>"
  bool exactly_once = false;
  FileSystem* fs = nullptr;
  StoreOpener open_store;
  StateDirectory* directory = nullptr;  // shared by the instance's stream threads
  std::vector<std::string> store_names;  // the topology's stores (empty: StateManager's default)
  TimeNs producer_flush_timeout_ns = 30 * kSecond;
  // A clean close's commit retries retryable failures for this long (Kafka's commitSync: up to
  // default.api.timeout.ms; longer than one request timeout), backing off between attempts on
  // `clock` (the stream thread sets it; null: kCloseCommitAttemptsMax attempts back to back).
  Clock* clock = nullptr;
  TimeNs close_commit_timeout_ns = 60 * kSecond;
  TimeNs close_commit_backoff_ns = 100 * kMillisecond;
  // A task whose directory is locked (another thread's incarnation still closes it) is retried
  // after a backoff that doubles from init_backoff_ns up to init_backoff_ns_max (Kafka backs
  // off task initialisation exponentially); without `clock`, every round.
  TimeNs init_backoff_ns = 10 * kMillisecond;
  TimeNs init_backoff_ns_max = 1 * kSecond;
  // A periodic commit checkpoints a running task only once its stores moved more than this
  // many records since its last checkpoint (Kafka's 10 000: state_manager.h).
  int64_t checkpoint_offset_delta_min = kCheckpointOffsetDeltaMin;
  // task.timeout.ms for reading a restored task's committed offset before it runs (Kafka
  // applies it there as in the state updater); needs `clock` to expire.
  TimeNs task_timeout_ns = 300 * kSecond;
  const TopologyPause* pause = nullptr;  // its topology's pause (KIP-834); null: never paused
};

// Counts of what the manager did, for metrics and tests.
struct TaskManagerStats {
  int64_t created = 0;
  int64_t recycled = 0;
  int64_t revived = 0;
  int64_t closed_clean = 0;
  int64_t closed_dirty = 0;
  int64_t corrupted_reports = 0;
  int64_t corrupted_while_processing = 0;  // a store's data loss found by processing: revived
  int64_t stale_reports = 0;  // about incarnations no longer wanted: not revived
  int64_t restore_errors = 0;  // warnings from the restore thread (nothing failed)
  int64_t init_attempts_locked = 0;  // initialisations refused: the directory was locked
  int64_t failed = 0;          // tasks handed back failed, closed dirty
};

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
  // store reported data loss meanwhile is revived (ReviveCorruptedRunning).
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
  bool TakeActiveCorrupted() { return std::exchange(active_corrupted_, false); }
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
      TaskId id, std::string_view store = "counts");
  const std::vector<absl::Status>& errors() const { return errors_; }
  // Task directories whose stores were damaged when opened, wiped and restored from scratch.
  // Any thread may read it (a relaxed atomic, not a scheduling point, as metrics are).
  int64_t stores_wiped_on_open() const {
    return stores_wiped_on_open_.load(std::memory_order_relaxed);
  }
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
  std::unique_ptr<Task> NewTask(TaskId id, TaskType type);
  std::unique_ptr<Task> Recycle(std::unique_ptr<Task> task, TaskType type);
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
  // `decision` says why, for observers (kClose, kCloseLost, kCloseStale, kRevive, ...).
  // `wipe`: its state directory is wiped after the close (a corrupted task's).
  void CloseRunning(TaskId id, bool clean, TaskDecision decision, bool commit = true,
                    bool wipe = false);
  void CloseOwned(std::unique_ptr<Task> task, bool clean, TaskDecision decision,
                  bool wipe = false);
  // `promoted`: a standby closed to become an active (its update listener hears PROMOTED).
  void SendClose(const TaskIncarnation& who, std::vector<TopicPartition> changelogs,
                 bool promoted = false);
  // Registers the stores of the tasks pending initialisation (not backing off); those that
  // succeed become ready.
  void InitializePending();
  void TakeBack(std::unique_ptr<Task> task);
  void TakeBackRestored(std::unique_ptr<Task> task, bool close_sent);
  void TakeBackRestoredAfterClose(std::unique_ptr<Task> task);
  // One drained event: its task taken back and handled; corruption collected for the drain's
  // end, the last failure kept in `failure`.
  void HandleRestoreEvent(RestoreEvent& e, absl::Status& failure);
  // All corruption reports of one drain together; revived unless the drain failed the thread.
  void HandleCorrupted(std::map<TaskIncarnation, std::set<TopicPartition>>& corrupted,
                       std::map<TaskIncarnation, std::unique_ptr<Task>>& corrupted_tasks,
                       bool revive);
  void Revive(std::unique_ptr<Task> task, const std::set<TopicPartition>& corrupted);
  // A running task whose store reported data loss while it processed: closed dirty, wiped and
  // revived (Kafka's TaskCorruptedException on the processing path).
  // Fails (the thread's error) only when at least once cannot flush what the task sent.
  [[nodiscard]] absl::Status ReviveCorruptedRunning(TaskId id, const absl::Status& cause);
  void StartRunning(std::unique_ptr<Task> task);
  // Reads the input's committed offset (Kafka initialises a task's offsets from it) and starts
  // the task, or parks it restored when the read fails.
  void TryStartRunning(std::unique_ptr<Task> task);
  // Retries parked restored tasks still wanted; closes the others.
  void RetryRestored();
  // task.timeout.ms for the committed-offset read before a task runs: starts the task's
  // deadline at its first retryable error; true once it passed (or at once with 0).
  bool StartTimedOut(TaskId id, const absl::Status& cause);
  void FailBeforeRunning(std::unique_ptr<Task> task, const absl::Status& cause);
  // task.timeout.ms for a task's stores that fail to open (a transient I/O error, anything
  // but damage and a locked directory): its first failure starts the task's deadline, a
  // success clears it; whether the deadline passed.
  bool InitTimedOut(const TaskIncarnation& who);
  // The stores did not open within task.timeout.ms: the task fails as one failing before
  // running does (closed dirty; the drain returns the failure and the thread fails).
  void FailInitialization(std::unique_ptr<Task> task, const absl::Status& cause);
  void CloseRestored(TaskId id);
  TopicPartition InputOf(TaskId id) const;
  // Observation: the assignment, a decision, every task held (no-ops without an observer).
  void ReportAssignment() const;
  void Decided(const TaskIncarnation& who, TaskDecision decision, TaskType type) const;
  void ReportView() const;

  const TaskManagerConfig config_;
  RestoreThread& restore_thread_;
  MainConsumer& consumer_;
  StreamsProducer& producer_;
  Atomic<uint64_t>& incarnations_;

  std::set<TaskId> wanted_active_;
  std::set<TaskId> wanted_standby_;
  TasksRegistry tasks_;
  std::vector<absl::Status> errors_;
  TaskExecutor executor_;
  OffsetSums offset_sums_;
  InitBackoff init_backoff_;
  // Restored tasks parked after retryable committed-offset errors: when task.timeout.ms runs
  // out.
  std::map<TaskId, TimeNs> start_deadline_ns_;
  // Tasks revived while running: when nothing is committed, their input restarts from the
  // beginning, not from the consumer's position (TryStartRunning).
  std::set<TaskId> rewind_uncommitted_;
  bool active_corrupted_ = false;  // see TakeActiveCorrupted
  // Tasks pending initialisation whose stores failed to open: when task.timeout.ms runs out.
  std::map<TaskIncarnation, TimeNs> init_deadline_ns_;
  absl::Status start_failure_;  // a task timed out before running, for the drain to return
  std::vector<TaskItem> close_items_;
  std::optional<int64_t> probing_rebalance_at_ms_;
  // Running actives whose partition was revoked, committed (true) or not (the commit failed:
  // they close dirty), waiting for the assignment of the same rebalance.
  std::map<TaskId, bool> revoked_running_;
  bool in_revocation_ = false;
  // Mutation revived-not-readded: revived incarnations parked where nothing hands them over.
  std::vector<std::unique_ptr<Task>> parked_;
  int64_t rebalances_handled_ = 0;
  TaskManagerStats stats_;
  std::atomic<int64_t> stores_wiped_on_open_{0};
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_MANAGER_H_
