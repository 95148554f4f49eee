// TaskManagerConfig: how a stream thread manages its tasks (the task-management part of
// Kafka's StreamsConfig that TaskManager and its task creators read: state.dir,
// processing.guarantee, task.timeout.ms, commit and close timeouts). One per stream thread,
// owned by its TaskManager and read by the types it decides with (task_factory.h,
// task_initializer.h, task_starter.h).
//
// Thread-safety: a plain value, read only once the manager is built.
#ifndef RESTORESIM_CORE_RUNTIME_TASK_MANAGER_CONFIG_H_
#define RESTORESIM_CORE_RUNTIME_TASK_MANAGER_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/port/file_system.h"
#include "core/runtime/state_directory.h"
#include "core/runtime/state_manager.h"
#include "core/runtime/topology_pause.h"
#include "core/sync/clock.h"

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

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_MANAGER_CONFIG_H_
