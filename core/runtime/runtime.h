// Runtime: the KafkaStreams-like object. N stream threads, each with its restore thread, over
// one transport, clock and file system; lifecycle states; restore listener callbacks; metrics.
//
// States (runtime_state.h, Kafka's KafkaStreams.State): Start enters REBALANCING; the threads'
// states move it between REBALANCING and RUNNING (RUNNING: every thread RUNNING, so no
// assigned active restores); Close: PENDING_SHUTDOWN -> NOT_RUNNING once every thread stopped (a
// close that times out returns DEADLINE_EXCEEDED and leaves PENDING_SHUTDOWN; a later close
// waits for the threads again, as Kafka's close(timeout) returning false). A stream thread that
// fails (its loop stopped on an error: a failed task, a fatal client error) closes its own
// tasks dirty, and the uncaught-exception handler answers (default SHUTDOWN_CLIENT, as Kafka
// 4.x's default handler):
//   REPLACE_THREAD        a new thread (a fresh index) takes the dead one's place and joins the
//                         group; the client stays REBALANCING/RUNNING. Not while checkpoint/
//                         restore is on (its hold points are fixed at Start): SHUTDOWN_CLIENT.
//   SHUTDOWN_CLIENT       PENDING_ERROR; every other thread is shut down (by the dying thread,
//                         where Kafka uses a helper thread); then ERROR. Close from PENDING_ERROR
//                         waits for ERROR and only joins; ERROR stays ERROR.
//   SHUTDOWN_APPLICATION  as SHUTDOWN_CLIENT on this instance only: the fake group coordinator
//                         carries no shutdown request to the other members (docs/DESIGN.md,
//                         "Kafka fidelity": a departure).
// Once a client is PENDING_SHUTDOWN, PENDING_ERROR or ERROR its threads begin no processing.
//
// Checkpoint/restore (opt-in, EnableCheckpointRestore before Start; docs/DESIGN.md,
// "Checkpoint and restore"): Checkpoint() brings the instance to a safe point and freezes it
// (threads held, stores flushed and checkpointed, connections closed), Restore() resumes it
// with a fresh identity. Close waits while a checkpoint/restore cycle is in progress; a
// checkpoint of an instance that is not RUNNING is refused (abandoned).
//
// Pause (KIP-834; Kafka's KafkaStreams.pause/resume/isPaused and the named-topology
// pauseTopology/resumeTopology): PauseTopology(name) pauses the tasks of the runtime's topology
// (config topology_name; "" the unnamed one) — restoring actives and updating standbys leave
// their restore threads' readers (stores kept, checkpointed), running actives process nothing
// but are still committed — and ResumeTopology resumes them where they left off. Pause and
// Resume do it for every topology (here: the one). Callable in any state, before Start too
// (the threads start paused). A name the runtime does not have is NOT_FOUND.
//
// Thread-safety: Start, Close, Checkpoint, Restore, pause, state and metrics may be called from any
// thread (of the world the runtime runs in); the listener is called on restore threads.
#ifndef RESTORESIM_CORE_RUNTIME_RUNTIME_H_
#define RESTORESIM_CORE_RUNTIME_RUNTIME_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/port/checkpoint_context.h"
#include "core/port/file_system.h"
#include "core/port/random.h"
#include "core/runtime/kafka_metrics.h"
#include "core/runtime/restore_listener.h"
#include "core/runtime/runtime_config.h"
#include "core/runtime/runtime_state.h"
#include "core/runtime/standby_update_listener.h"
#include "core/runtime/stream_thread.h"
#include "core/runtime/topology_pause.h"
#include "core/sync/clock.h"

namespace restoresim {

using StreamsUncaughtExceptionHandler =
    std::function<StreamThreadExceptionResponse(const absl::Status& error)>;

struct RuntimeMetrics {
  int64_t records_restored = 0;
  int64_t restore_batches = 0;
  int64_t restores_started = 0;
  int64_t restores_ended = 0;
  int64_t restores_suspended = 0;
  int64_t remaining_records = 0;      // still to restore, over all restore threads
  double restore_rate_per_second = 0;  // records restored per second of (virtual) time
  // (Kafka's ratios and rates, under Kafka's names, are in Runtime::KafkaMetrics.)
  int64_t standby_records_updated = 0;  // written to standby stores, over all restore threads
  double update_rate_per_second = 0;    // standby records updated per second of (virtual) time
  int64_t records_processed = 0;         // input records processed, over all stream threads
  TimeNs first_processed_ns = -1;        // the clock's time of the first one (-1: none yet)
  int64_t stores_wiped_on_open = 0;  // damaged local stores wiped and restored from scratch
};

struct CheckpointOptions {
  // Names the threads "<instance>-StreamThread-<n>" (instances in one world: clones); empty:
  // "<application.id>-StreamThread-<n>". Not part of the identity on the wire.
  std::string instance;
  // The image's process identity (wire client ids: suspendable_transport.h); empty: drawn.
  std::string process_id;
  // Where fresh identities are drawn from; null: a generator seeded by the OS anew at every
  // restore (production: the restored image must not replay the original's draws).
  RandomSource* random = nullptr;
  // Started from an image (a clone): the threads hold and nothing connects until Restore().
  bool from_image = false;
  // Instances sharing one simulated world number their task incarnations apart (the oracle
  // tells incarnations by number); local, never on the wire.
  uint64_t first_incarnation = 0;
};

class SuspendableTransport;
class HoldPoint;
class HoldResource;

class Runtime {
 public:
  // `listener` (may be null) is told about active restoration, on restore threads.
  Runtime(RuntimeConfig config, Transport& transport, Clock& clock, FileSystem& fs,
          StoreOpener open_store, StateRestoreListener* listener = nullptr);
  ~Runtime();

  // REQUIRES: config valid (checked: an invalid config is an error, nothing starts). Locks
  // "<state.dir>/<application.id>/.lock" first: another instance holding it (in this process
  // or another) is kFailedPrecondition naming the directory, and nothing starts.
  [[nodiscard]] absl::Status Start();
  // Stops every thread within timeout_ns in all (always returns); closes tasks cleanly, then
  // releases the state directory's lock (kept if a thread did not stop in time).
  [[nodiscard]] absl::Status Close(TimeNs timeout_ns);

  // REQUIRES: before Start. Registers the transport, every restore thread and stream thread
  // with this instance's CheckpointContext.
  absl::Status EnableCheckpointRestore(CheckpointOptions options);
  // CRaC's notifications: OK means frozen (nothing runs, nothing reaches the broker) until
  // Restore. ABORTED: abandoned, every resource already restored. FAILED_PRECONDITION: off,
  // not started, or a cycle already in progress.
  [[nodiscard]] absl::Status Checkpoint();
  [[nodiscard]] absl::Status Restore();
  bool frozen() const;
  std::string process_id() const;
  const std::string& instance() const { return checkpoint_.instance; }
  // The process id it gives the assignor or the streams group (Kafka Streams' processId): the
  // checkpoint identity (process_id() above), or the process file's (on real threads, after
  // Start), or the state directory's path made an id.
  std::string group_process_id() const { return AssignorProcessId(); }
  CheckpointContext& checkpoint_context() { return context_; }

  // REQUIRES: before Start (as Kafka: only in CREATED). Null: the default, SHUTDOWN_CLIENT.
  absl::Status SetUncaughtExceptionHandler(StreamsUncaughtExceptionHandler handler);
  // REQUIRES: before Start. Called with (new, old) on every state change (runtime_state.h).
  absl::Status SetStateListener(RuntimeStateListener listener);

  // REQUIRES: before Start (as Kafka's setStandbyUpdateListener). Told about standby tasks'
  // updates (KIP-988) on restore threads; null: none. It must outlive the runtime's threads.
  absl::Status SetStandbyUpdateListener(StandbyUpdateListener* listener);
  // KIP-834 (runtime_pause.cc). Each takes effect at every thread's next loop iteration.
  absl::Status PauseTopology(std::string_view topology);
  absl::Status ResumeTopology(std::string_view topology);
  absl::StatusOr<bool> IsTopologyPaused(std::string_view topology) const;
  void Pause();   // every topology
  void Resume();
  bool IsPaused() const;  // whether every topology is paused

  RuntimeState state() const;
  RuntimeMetrics Metrics() const;
  // KIP-869 metrics (Kafka's KafkaStreams.metrics(), the state updater and task restoration
  // part): every restore thread's, replaced threads' included, measured now
  // (state_updater_metrics.h lists the names, groups and tags).
  std::vector<KafkaMetric> KafkaMetrics() const;
  // Every thread it started, replaced ones (DEAD) included, in the order they were made.
  size_t thread_count() const;
  StreamThread& thread(size_t i);
  // Threads that failed while the client ran (not while it failed or closed already), and
  // threads made to replace them.
  int64_t threads_failed() const;
  int64_t threads_replaced() const;

 private:
  class MetricsListener;
  class Lifecycle;
  std::string ThreadName(int32_t i) const;
  std::string Label() const;
  // runtime_lifecycle.cc: the state machine and the handler.
  std::unique_ptr<StreamThread> NewThread(int32_t index);
  std::string AssignorProcessId() const;
  // application.id and state.dir, made a process id (what Kafka keeps in its state directory).
  std::string StateDirProcessId() const;
  // The process file's id (process_file.h) once Start read it, else StateDirProcessId().
  std::string StableProcessId() const;
  // Start, under the state directory's lock: reads or writes the process file (real threads,
  // unlabelled instances only).
  absl::Status LoadProcessId();
  // The transactional.id of stream thread `index` under exactly once (runtime.cc).
  std::string TransactionalId(int32_t index) const;
  void SetStateLocked(RuntimeState next) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Close's work, by `deadline` (runtime.cc).
  absl::Status CloseUntil(TimeNs deadline, TimeNs timeout_ns, RuntimeState& at_return);
  absl::Status ShutdownThreads(TimeNs deadline, std::vector<std::string>& running);
  void OnThreadState(StreamThread& thread, StreamThreadState from, StreamThreadState to);
  void OnThreadFailed(StreamThread& thread, const absl::Status& error);
  void ReplaceThread(StreamThread& dead);
  void ShutdownClientAfterFailure(StreamThread& dead);
  // Closes every thread's processing gate (no processing begins from now on).
  void StopProcessingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<StreamThread*> ThreadsSnapshot() const;
  // Pauses or resumes the topology, naming every stream and restore thread to observers.
  void SetPaused(bool paused);
  std::string DrawProcessId();
  absl::Status RegisterResources();
  absl::StatusOr<std::unique_ptr<FileLock>> LockStateDirectory() ABSL_LOCKS_EXCLUDED(mu_);

  const RuntimeConfig config_;
  Transport& transport_;
  Clock& clock_;
  FileSystem& fs_;
  StoreOpener open_store_;
  std::unique_ptr<MetricsListener> listener_;
  Atomic<uint64_t> incarnations_{0, "incarnations"};
  TopologyPause pause_;  // its one topology's (config_.topology_name)
  StateDirectory directory_;
  mutable Mutex mu_{"runtime_mu"};
  std::vector<std::unique_ptr<StreamThread>> threads_ ABSL_GUARDED_BY(mu_);
  RuntimeState state_ ABSL_GUARDED_BY(mu_) = RuntimeState::kCreated;
  // Every live thread's last state, by name (Kafka's StreamStateListener.threadState).
  std::map<std::string, StreamThreadState> thread_states_ ABSL_GUARDED_BY(mu_);
  StreamsUncaughtExceptionHandler handler_;
  RuntimeStateListener state_listener_;
  StandbyUpdateListener* standby_listener_ = nullptr;  // set before Start, read after
  int32_t next_thread_index_ ABSL_GUARDED_BY(mu_) = 0;
  int32_t replacing_ ABSL_GUARDED_BY(mu_) = 0;  // replacements being started
  int64_t threads_failed_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t threads_replaced_ ABSL_GUARDED_BY(mu_) = 0;
  // "<state.dir>/<application.id>/.lock", held from Start until Close stopped every thread.
  std::unique_ptr<FileLock> directory_lock_ ABSL_GUARDED_BY(mu_);
  CondVar state_cv_{"runtime_state_cv"};  // state_ changed, or a replacement started
  TimeNs started_ns_ ABSL_GUARDED_BY(mu_) = 0;
  // Checkpoint/restore: on when enabled_.
  bool enabled_ = false;
  CheckpointOptions checkpoint_;
  // Written once by Start before any thread exists (LoadProcessId); read by NewThread.
  std::string process_file_id_;
  CheckpointContext context_;
  std::unique_ptr<SuspendableTransport> suspendable_;
  std::vector<std::unique_ptr<HoldPoint>> holds_;
  std::vector<std::unique_ptr<CheckpointResource>> resources_;
  CondVar cycle_cv_{"runtime_cycle_cv"};
  bool cycle_ ABSL_GUARDED_BY(mu_) = false;   // a checkpoint/restore cycle in progress
  bool frozen_ ABSL_GUARDED_BY(mu_) = false;  // checkpointed, not yet restored
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_RUNTIME_H_
