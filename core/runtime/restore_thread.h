// RestoreThread (the seed's StateRestoreThread, the later state updater): restores active tasks
// and updates standby tasks on a thread of its own, so the stream thread processes the tasks
// that are ready while others still restore.
//
// It owns the ChangelogReader and every task it restores or updates. The stream thread talks to
// it only through queues and a published snapshot:
//   in   rounds of TaskItems, applied in the order they were sent; within a round every CLOSE
//        is applied before any CREATE, so a task closed and created again in one round
//        (revive, recycle) is unregistered before it registers. A CREATE completes a prepared
//        type conversion between the two.
//   out  RestoreEvents: a restored active task (handed back to be RUNNING), a removed task
//        (handed back to be closed), a corrupted task with its changelogs (handed back to be
//        closed dirty and revived), a failed task with its error (handed back to be closed
//        dirty; the stream thread then fails: Kafka's exceptions-and-failed-tasks), or a
//        warning (an error that fails nothing: a checkpoint it could not write). Tasks move
//        with the events: every open task has exactly one owner. (restore_handover.h: the
//        items and events, asserted by both ends; updater_tasks.h: the tasks it owns, moved
//        only by moves that assert it.)
//   snapshot  the completed changelogs, republished after each step.
// Failures (Kafka's DefaultStateUpdater; docs/DESIGN.md, "Kafka fidelity"; updater_failures.h):
// a task-scoped error fails that task only; a retryable error that holds a task back starts its
// task.timeout.ms (task_timeout_ns; 0: the first such error fails it), progress clears it, and
// a task still held back past it fails with kDeadlineExceeded; a fatal task-less error (the
// reader's step failed: IsFatalStepError; any other is a warning, retried) fails every task it
// owns — reported once even when it owns none — while the thread itself goes on (its stream
// thread fails on the report).
// Pause (KIP-834, Kafka's DefaultStateUpdater pausedTasks; updater_pause.h): while its
// topology is paused (config.pause, read once per iteration) every task it owns — and every
// task a CREATE brings — is paused: its changelogs leave the reader, its stores stay open, it
// is checkpointed, and it stays owned here (a CLOSE, a failure or the shutdown hands it back
// as any other); once resumed it registers again from its positions.
// It checkpoints what it restored every checkpoint_interval_ns (commit.interval.ms) for tasks
// that moved more than checkpoint_offset_delta_min records (Kafka: 10 000), and before it
// hands a task back cleanly (restored, removed, returned at shutdown: Kafka's forced checkpoint,
// KAFKA-12634), so the stream thread never starts from less than was restored; its shutdown
// takes a timeout and always returns (updater_checkpoints.h).
// It decides; it holds little itself:
//   RestoreHandover (restore_handover.h)        the queues in and out, with the hand-offs;
//   UpdaterTasks (updater_tasks.h)              the tasks it owns, moved only by named moves;
//   UpdaterPause (updater_pause.h)              the pause of its tasks and its gauges;
//   UpdaterCheckpoints (updater_checkpoints.h)  periodic, forced and held checkpoints;
//   UpdaterSnapshots (updater_snapshots.h)      what it publishes after each step;
//   UpdaterFailures (updater_failures.h)        the failure model: failed, timed-out and
//                                               task-less failures handed back.
//
// Thread-safety: AddItems, DrainEvents, CompletedChangelogs and Shutdown are for the stream
// thread; everything else runs on the restore thread itself.
#ifndef RESTORESIM_CORE_RUNTIME_RESTORE_THREAD_H_
#define RESTORESIM_CORE_RUNTIME_RESTORE_THREAD_H_

#include <map>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/runtime/changelog_reader.h"
#include "core/runtime/hold_point.h"
#include "core/runtime/restore_handover.h"
#include "core/runtime/state_updater_metrics.h"
#include "core/runtime/task.h"
#include "core/runtime/topology_pause.h"
#include "core/runtime/updater_checkpoints.h"
#include "core/runtime/updater_failures.h"
#include "core/runtime/updater_pause.h"
#include "core/runtime/updater_snapshots.h"
#include "core/runtime/updater_tasks.h"
#include "core/sync/atomic.h"
#include "core/sync/clock.h"
#include "core/sync/shared_cell.h"
#include "core/sync/thread.h"

namespace restoresim {

struct RestoreThreadConfig {
  std::string name = "restore-thread";
  size_t rounds_max = 1024;  // bound of the item queue, in rounds (AddItems calls)
  size_t events_max = 1024;  // bound of the event queue
  ChangelogReaderConfig reader;
  TimeNs idle_wait_ns = 100 * kMillisecond;  // wait for items when there is nothing to fetch
  // How often owned tasks are considered for a checkpoint: Kafka's state updater uses
  // commit.interval.ms (the Runtime passes it); a task is checkpointed then only if its stores
  // moved more than checkpoint_offset_delta_min records since its last checkpoint.
  TimeNs checkpoint_interval_ns = 5 * kSecond;
  int64_t checkpoint_offset_delta_min = kCheckpointOffsetDeltaMin;
  TimeNs error_backoff_ns = 100 * kMillisecond;
  // task.timeout.ms: how long a retryable error may hold a task back before it fails.
  TimeNs task_timeout_ns = 300 * kSecond;
  int32_t max_poll_records = 1000;
  // The restore consumer's isolation.level: read_committed under exactly_once_v2 (Kafka Streams
  // sets it on every consumer), so aborted changelog records are never restored.
  IsolationLevel isolation_level = IsolationLevel::kReadUncommitted;
  HoldPoint* hold = nullptr;  // checkpoint/restore: see hold_point.h; null when off
  // Publish OwnedOffsetSums after every step (its stream thread reports them to the Streams
  // assignor); off, nothing is published (no extra scheduling point).
  bool publish_offset_sums = false;
  StateUpdaterMetricsConfig metrics;  // KIP-869 metrics (state_updater_metrics.h)
  const TopologyPause* pause = nullptr;  // its topology's pause (KIP-834); null: never paused
  // restoresim.restore.share.while.processing.percent (runtime_config.h): while `processing`
  // (its stream thread has input to process) is set, the thread restores at most this share
  // of the time: after an iteration that restored records it pauses for as long as the
  // iteration took times (100 - share) / share, at most yield_max_ns. 100, or no signal: it
  // never pauses (and reads neither the clock nor the signal for it).
  int32_t share_while_processing_percent = 100;
  const Atomic<bool>* processing = nullptr;
  TimeNs yield_max_ns = 100 * kMillisecond;
};

class RestoreThread {
 public:
  RestoreThread(Transport& transport, Clock& clock, StateRestoreListener* listener,
                RestoreThreadConfig config = {});
  ~RestoreThread();  // joins (after Shutdown, or by shutting down without a deadline)

  void Start();
  bool started() const { return thread_ != nullptr; }
  // Queues one round of items atomically: the restore thread sees all of them or none, so the
  // CLOSE-before-CREATE order inside a round cannot be split by a concurrent drain. Returns
  // false if the thread is shutting down (the items, and their tasks, come back in `refused`).
  bool AddItems(std::vector<TaskItem> items, std::vector<TaskItem>* refused);
  std::vector<RestoreEvent> DrainEvents();
  // Kafka's DefaultStateUpdater.signalResume: wakes the thread if it waits for work, so a
  // topology resumed while every task it owns is paused restores at once, not when its idle
  // wait runs out (an empty round; never blocks). Any thread.
  void SignalResume();
  std::shared_ptr<const std::set<TopicPartition>> CompletedChangelogs() const;
  const std::string& name() const { return config_.name; }
  // Called on the restore thread with a restored task's input partition, only under the
  // mutation resume-on-restore-thread (a confinement mistake); set before Start.
  void SetRestoredCallback(std::function<void(const TopicPartition& input)> callback) {
    on_restored_ = std::move(callback);
  }
  // Records between position and end offset over the active changelogs still restoring, as of
  // the last step.
  int64_t RemainingRecords() const { return snapshots_.RemainingRecords(); }
  // Per task it owns, the sum of its changelog positions (what its stores hold), as of the
  // last step: the task offset sums its stream thread reports for tasks the restore thread
  // owns (offset_sums.h). Keyed by incarnation, so a stale entry is never mistaken.
  std::shared_ptr<const std::map<TaskIncarnation, int64_t>> OwnedOffsetSums() const {
    return snapshots_.OwnedOffsetSums();
  }
  // Records written to standby stores so far, as of the last step.
  int64_t StandbyRecordsUpdated() const { return snapshots_.StandbyRecordsUpdated(); }
  // Its KIP-869 metrics as of its last loop iteration, measured at now_ns (any thread).
  std::vector<KafkaMetric> KafkaMetrics(TimeNs now_ns) const;
  // Paused active and standby tasks it owns, as of its last iteration (the KIP-869 gauges
  // active-paused-tasks and standby-paused-tasks).
  int64_t PausedActives() const { return pause_.PausedActives(); }
  int64_t PausedStandbys() const { return pause_.PausedStandbys(); }
  // Stops the thread, which hands every task it owns back as kRemoved events. Waits until
  // timeout_ns; returns DeadlineExceeded if the thread did not stop in time (the destructor then
  // waits for it).
  absl::Status Shutdown(TimeNs timeout_ns);

 private:
  void Run();
  void ApplyItems(std::vector<TaskItem> items);
  void CloseItem(TaskItem& item);
  void NoteSameTaskCloseAndCreate(const std::vector<TaskItem>& items);
  void CreateItem(TaskItem& item);
  void HandleStep(RestoreStep& step);
  // After a step that returned `error` (what it did before it failed is the reader's).
  void HandleFailedStep(const absl::Status& error);
  void HandOverRestored();
  // Waits for the next round while there is nothing to do; returns what it got.
  void IdleWait(std::vector<std::vector<TaskItem>>& rounds);
  void Emit(RestoreEvent event) { handover_.Emit(std::move(event)); }
  // Hands a task back to the stream thread with its event (restore_handover.h).
  void HandBack(RestoreEvent event, bool from_queue = false) {
    handover_.HandBack(std::move(event), tasks_, from_queue);
  }
  void ReturnAllTasks();
  // restore_thread_metrics.cc: the loop's timing for the KIP-869 ratios, and the gauges.
  void MeasuredIdleWait(std::vector<std::vector<TaskItem>>& rounds);
  void MeasuredErrorBackoff();
  // Records the iteration and publishes the metrics' snapshot.
  void EndIterationMetrics();
  // Gives the cores back to processing (share_while_processing_percent) after an iteration
  // that began at `began_ns` and restored `records`.
  void YieldToProcessing(TimeNs began_ns, int64_t records);

  Transport& transport_;
  Clock& clock_;
  StateRestoreListener* listener_;
  const RestoreThreadConfig config_;
  RestoreHandover handover_;
  UpdaterSnapshots snapshots_;
  SharedCell<StateUpdaterMetricsSnapshot> metrics_snapshot_;
  Atomic<bool> stop_{false, "restore_stop"};
  Mutex done_mu_{"restore_done_mu"};
  CondVar done_cv_{"restore_done_cv"};
  bool done_ ABSL_GUARDED_BY(done_mu_) = false;
  std::unique_ptr<Thread> thread_;
  std::function<void(const TopicPartition&)> on_restored_;

  // Restore thread only:
  std::unique_ptr<RestoreConsumer> consumer_;
  std::unique_ptr<Admin> admin_;
  std::unique_ptr<ChangelogReader> reader_;
  // The tasks it owns, updating or paused, with their task.timeout.ms deadlines.
  UpdaterTasks tasks_;
  StateUpdaterMetrics metrics_;
  UpdaterPause pause_;
  UpdaterCheckpoints checkpoints_;
  UpdaterFailures failures_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_RESTORE_THREAD_H_
