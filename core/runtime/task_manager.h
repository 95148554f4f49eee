// TaskManager: a stream thread's tasks. It turns assignments (through the main consumer's
// rebalance callbacks) into tasks to create, close, recycle or resume; hands tasks to the
// restore thread and takes them back; handles corruption; processes and commits the running
// tasks.
//
// Single ownership: every open task of this stream thread is in exactly one of
//   running_        active tasks the stream thread processes (RUNNING), owned here;
//   restored_       restored, waiting to read their input's committed offset (a retryable
//                   failure of that read is retried at the next drain), owned here;
//   pending_init_   created here, stores not yet registered, owned here;
//   ready_          initialised, to be sent to the restore thread this round, owned here;
//   in_restore_     owned by the restore thread (bookkeeping only: incarnation and type);
// and a CLOSE sent for a task the restore thread owns is remembered in awaiting_ until the
// task comes back (removed, restored or corrupted) — whatever the assignment says by then
// decides what happens to it.
//
// Revocation, as Kafka Streams' handleRevocation/handleAssignment do it: a running active
// whose partition is revoked commits at once (its partition is still owned) and its fate waits
// for the assignment that follows in the same poll — closed if nothing of it is wanted,
// recycled in place if a standby of it is (its CLOSE and its standby's CREATE then share one
// round), kept if it is assigned again.
//
// Pause (KIP-834; task_manager_pause.cc): while its topology is paused (config.pause, read at
// each Process) a running active processes nothing — its input partition is paused on the main
// consumer, as Kafka's TaskExecutor skips the tasks of paused topologies — but it is still
// committed, revoked, recycled and closed as any other. (Its restore thread pauses the tasks
// it owns.)
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

#include "core/runtime/restore_thread.h"
#include "core/runtime/runtime_observer.h"
#include "core/runtime/state_manager.h"
#include "core/runtime/task.h"
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
  int64_t stale_reports = 0;  // about incarnations no longer wanted: not revived
  int64_t restore_errors = 0;  // warnings from the restore thread (nothing failed)
  int64_t init_attempts_locked = 0;  // initialisations refused: the directory was locked
  int64_t failed = 0;          // tasks handed back failed, closed dirty
};

class TaskManager final : public RebalanceListener {
 public:
  static constexpr int kCloseCommitAttemptsMax = 1000;

  TaskManager(TaskManagerConfig config, RestoreThread& restore_thread, MainConsumer& consumer,
              Producer& producer, Atomic<uint64_t>& incarnations);
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
  void Buffer(PollResult records);
  // Processes up to records_per_task_max buffered records of every running task.
  absl::StatusOr<size_t> Process(size_t records_per_task_max);
  // Whether a running task has input buffered that the next Process would take.
  bool HasBuffered() const;
  // Flushes the producer, advances changelog offsets, flushes stores, checkpoints (at least
  // once) and commits the input offsets.
  [[nodiscard]] absl::Status Commit();
  // Closes every task: running ones here, the others once the restore thread (already shut
  // down) returned them through its events.
  [[nodiscard]] absl::Status CloseAll(bool clean);

  // ---- observation (oracle, tests) ----
  std::set<TaskId> running() const;
  // Running actives it holds paused (processing nothing), as of the last Process.
  std::set<TaskId> paused_running() const;
  std::set<TaskId> in_restore() const;
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
  bool RestoreThreadHoldsActives() const;

  // ---- the Streams assignor's inputs and outputs (task_manager_offsets.cc) ----
  // Kafka's TaskManager.getTaskOffsetSums: per task this thread has state for, the sum of its
  // changelog positions — kLatestOffset for a running active; the restore thread's published
  // sums for the tasks it owns (restoring actives and standbys are never left out), their
  // sums at hand-over until it published; and for task directories it does not own, the
  // checkpoint found at ScanStateDirectory or the sum a task had when this thread last held it.
  std::map<TaskId, int64_t> TaskOffsetSums();
  // Reads the checkpoints of the task directories under state_dir (once, before joining).
  void ScanStateDirectory();
  // When the last assignment asked this member to trigger a probing rebalance (clock ms).
  std::optional<int64_t> probing_rebalance_at_ms() const { return probing_rebalance_at_ms_; }
  void ClearProbingRebalance() { probing_rebalance_at_ms_.reset(); }

 private:
  std::optional<TaskType> Wanted(TaskId id) const;
  std::unique_ptr<Task> NewTask(TaskId id, TaskType type);
  std::unique_ptr<Task> Recycle(std::unique_ptr<Task> task, TaskType type);
  void Reconcile();
  void ReconcileRunning(TaskId id, std::optional<TaskType> want);
  // Decides revoked running actives still waiting for the assignment (there was none).
  void SettleRevoked();
  // `decision` says why, for observers (kClose, kCloseLost, kCloseStale, kRevive, ...).
  void CloseRunning(TaskId id, bool clean, TaskDecision decision, bool commit = true);
  void CloseOwned(std::unique_ptr<Task> task, bool clean, TaskDecision decision,
                  bool wipe = false);
  // `promoted`: a standby closed to become an active (its update listener hears PROMOTED).
  void SendClose(const TaskIncarnation& who, std::vector<TopicPartition> changelogs,
                 bool promoted = false);
  void TakeBack(std::unique_ptr<Task> task);
  void TakeBackRestored(std::unique_ptr<Task> task, bool close_sent);
  void TakeBackRestoredAfterClose(std::unique_ptr<Task> task);
  void Revive(std::unique_ptr<Task> task, const std::set<TopicPartition>& corrupted);
  void StartRunning(std::unique_ptr<Task> task);
  // Reads the input's committed offset (Kafka initialises a task's offsets from it) and starts
  // the task, or parks it in restored_ when the read fails.
  void TryStartRunning(std::unique_ptr<Task> task);
  // Retries parked restored tasks still wanted; closes the others.
  void RetryRestored();
  // task.timeout.ms for the committed-offset read before a task runs: starts the task's
  // deadline at its first retryable error; true once it passed (or at once with 0).
  bool StartTimedOut(TaskId id, const absl::Status& cause);
  void FailBeforeRunning(std::unique_ptr<Task> task, const absl::Status& cause);
  void CloseRestored(TaskId id);
  absl::Status CommitTask(Task& task);
  // CommitTask for a clean close or recycle: retries retryable failures (see
  // TaskManagerConfig::close_commit_timeout_ns).
  absl::Status CommitForClose(Task& task);
  // `enforce_checkpoint`: a close or recycle (always checkpointed under at-least-once); else
  // a periodic commit (checkpointed only past checkpoint_offset_delta_min).
  absl::Status CommitTasks(const std::vector<Task*>& tasks, bool enforce_checkpoint);
  TopicPartition InputOf(TaskId id) const;
  // Observation: the assignment, a decision, every task held (no-ops without an observer).
  void ReportAssignment() const;
  void Decided(const TaskIncarnation& who, TaskDecision decision, TaskType type) const;
  void ReportView() const;
  // task_manager_pause.cc: takes up the topology's pause (or resume) for the running actives.
  void ApplyTopologyPause();
  bool IsPausedRunning(const Task& task) const;

  const TaskManagerConfig config_;
  RestoreThread& restore_thread_;
  MainConsumer& consumer_;
  Producer& producer_;
  Atomic<uint64_t>& incarnations_;

  std::set<TaskId> wanted_active_;
  std::set<TaskId> wanted_standby_;
  std::map<TaskId, std::unique_ptr<Task>> running_;
  std::map<TaskId, std::unique_ptr<Task>> restored_;
  // Parked in restored_ after retryable committed-offset errors: when task.timeout.ms runs out.
  std::map<TaskId, TimeNs> start_deadline_ns_;
  absl::Status start_failure_;  // a task timed out before running, for the drain to return
  std::map<TaskId, std::unique_ptr<Task>> pending_init_;
  // Per task waiting for a locked directory: when to try again, and the backoff used last.
  struct InitBackoff {
    TimeNs next_attempt_ns = 0;
    TimeNs backoff_ns = 0;
  };
  std::map<TaskId, InitBackoff> init_backoff_;
  // Whether `id`'s initialisation waits out its backoff; NoteLocked starts or doubles it.
  bool InitBackingOff(TaskId id) const;
  void NoteLocked(TaskId id);
  std::vector<std::unique_ptr<Task>> ready_;
  std::map<TaskId, std::pair<TaskIncarnation, TaskType>> in_restore_;
  std::map<TaskId, TaskIncarnation> awaiting_;
  std::vector<TaskItem> close_items_;
  // Offset sums: of tasks at hand-over (until the restore thread publishes theirs), and the
  // last known of every task directory (task_manager_offsets.cc).
  std::map<TaskId, std::pair<TaskIncarnation, int64_t>> handed_over_sums_;
  std::map<TaskId, int64_t> last_known_sums_;
  std::optional<int64_t> probing_rebalance_at_ms_;
  void NoteHandedOver(const Task& task);
  // Running actives whose partition was revoked, committed (true) or not (the commit failed:
  // they close dirty), waiting for the assignment of the same rebalance.
  std::map<TaskId, bool> revoked_running_;
  // Running actives paused (their input paused on the consumer), by the incarnation paused.
  std::map<TaskId, TaskIncarnation> paused_running_;
  bool in_revocation_ = false;
  // Mutation revived-not-readded: revived incarnations parked where nothing hands them over.
  std::vector<std::unique_ptr<Task>> parked_;
  int64_t rebalances_handled_ = 0;
  TaskManagerStats stats_;
  std::vector<absl::Status> errors_;
  std::atomic<int64_t> stores_wiped_on_open_{0};
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_MANAGER_H_
