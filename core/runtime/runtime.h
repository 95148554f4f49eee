// Runtime: the KafkaStreams-like object. N stream threads, each with its restore thread, over
// one transport, clock and file system; lifecycle states; restore listener callbacks; metrics.
//
//   CREATED --Start--> RUNNING --Close--> PENDING_SHUTDOWN --> NOT_RUNNING
//                         \--(a thread failed)--> ERROR --Close--> NOT_RUNNING
//
// Checkpoint/restore (opt-in, EnableCheckpointRestore before Start; docs/DESIGN.md,
// "Checkpoint and restore"): Checkpoint() brings the instance to a safe point and freezes it
// (threads held, stores flushed and checkpointed, connections closed), Restore() resumes it
// with a fresh identity. Close waits while a checkpoint/restore cycle is in progress; a
// checkpoint of an instance that is not RUNNING is refused (abandoned).
//
// Thread-safety: Start, Close, Checkpoint, Restore, state and metrics may be called from any
// thread (of the world the runtime runs in); the listener is called on restore threads.
#ifndef RESTORESIM_CORE_RUNTIME_RUNTIME_H_
#define RESTORESIM_CORE_RUNTIME_RUNTIME_H_

#include <memory>
#include <vector>

#include "core/port/checkpoint_context.h"
#include "core/port/clock.h"
#include "core/port/random.h"
#include "core/port/file_system.h"
#include "core/runtime/restore_listener.h"
#include "core/runtime/runtime_config.h"
#include "core/runtime/stream_thread.h"

namespace restoresim {

enum class RuntimeState { kCreated, kRunning, kPendingShutdown, kNotRunning, kError };
std::string_view RuntimeStateName(RuntimeState state);

struct RuntimeMetrics {
  int64_t records_restored = 0;
  int64_t restore_batches = 0;
  int64_t restores_started = 0;
  int64_t restores_ended = 0;
  int64_t restores_suspended = 0;
  int64_t remaining_records = 0;      // still to restore, over all restore threads
  double restore_rate_per_second = 0;  // records restored per second of (virtual) time
  double restore_ratio = 1.0;          // restored / (restored + remaining)
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

  // REQUIRES: config valid (checked: an invalid config is an error, nothing starts).
  [[nodiscard]] absl::Status Start();
  // Stops every thread within timeout_ns in all (always returns); closes tasks cleanly.
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
  CheckpointContext& checkpoint_context() { return context_; }

  RuntimeState state() const;
  RuntimeMetrics Metrics() const;
  size_t thread_count() const { return threads_.size(); }
  StreamThread& thread(size_t i) { return *threads_[i]; }

 private:
  class MetricsListener;
  class Lifecycle;
  std::string ThreadName(int32_t i) const;
  std::string Label() const;
  std::string DrawProcessId();
  absl::Status RegisterResources();

  const RuntimeConfig config_;
  Transport& transport_;
  Clock& clock_;
  FileSystem& fs_;
  StoreOpener open_store_;
  std::unique_ptr<MetricsListener> listener_;
  Atomic<uint64_t> incarnations_{0, "incarnations"};
  StateDirectory directory_;
  std::vector<std::unique_ptr<StreamThread>> threads_;
  mutable Mutex mu_{"runtime_mu"};
  RuntimeState state_ ABSL_GUARDED_BY(mu_) = RuntimeState::kCreated;
  TimeNs started_ns_ ABSL_GUARDED_BY(mu_) = 0;
  // Checkpoint/restore: on when enabled_.
  bool enabled_ = false;
  CheckpointOptions checkpoint_;
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
