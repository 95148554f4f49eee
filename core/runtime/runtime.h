// Runtime: the KafkaStreams-like object. N stream threads, each with its restore thread, over
// one transport, clock and file system; lifecycle states; restore listener callbacks; metrics.
//
//   CREATED --Start--> RUNNING --Close--> PENDING_SHUTDOWN --> NOT_RUNNING
//                         \--(a thread failed)--> ERROR --Close--> NOT_RUNNING
//
// Thread-safety: Start, Close, state and metrics may be called from any thread (of the world
// the runtime runs in); the listener is called on restore threads.
#ifndef RESTORESIM_CORE_RUNTIME_RUNTIME_H_
#define RESTORESIM_CORE_RUNTIME_RUNTIME_H_

#include <memory>
#include <vector>

#include "core/port/clock.h"
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

  RuntimeState state() const;
  RuntimeMetrics Metrics() const;
  size_t thread_count() const { return threads_.size(); }
  StreamThread& thread(size_t i) { return *threads_[i]; }

 private:
  class MetricsListener;

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
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_RUNTIME_H_
