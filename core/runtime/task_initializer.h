// TaskInitializer (Kafka's TaskManager initialising new tasks before it adds them to the state
// updater: StreamTask/StandbyTask.initializeIfNeeded, which locks the task directory and
// registers the stores, backing off on a LockException): registers the stores of a stream
// thread's tasks pending initialisation and moves those that succeed to ready.
//   locked     another thread's incarnation still closes the directory: expected, retried
//              after a per-task backoff (init_backoff.h), never an error;
//   damaged    a store reports data loss on open: wiped and registered again, restored from
//              its changelog — never served, never retried as it is forever;
//   other      a transient I/O error: recorded and retried each round under task.timeout.ms;
//              past it the task fails (the manager closes it, its thread fails).
// Under exactly once the thread's producer initialises its transactions before its first
// active task does.
//
// Thread-safety: its stream thread only; stores_wiped_on_open any thread (a relaxed atomic).
#ifndef RESTORESIM_CORE_RUNTIME_TASK_INITIALIZER_H_
#define RESTORESIM_CORE_RUNTIME_TASK_INITIALIZER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/runtime/init_backoff.h"
#include "core/runtime/streams_producer.h"
#include "core/runtime/task.h"
#include "core/runtime/task_manager_config.h"
#include "core/runtime/task_manager_stats.h"
#include "core/runtime/tasks_registry.h"
#include "core/sync/clock.h"

namespace restoresim {

class TaskInitializer {
 public:
  // `fail`: a task whose stores did not open within task.timeout.ms, taken out of
  // pending_init, with its error; the manager closes it and fails its thread.
  using Fail = std::function<void(std::unique_ptr<Task>, const absl::Status&)>;
  // `config`: its manager's, which outlives it.
  TaskInitializer(const TaskManagerConfig& config, TasksRegistry& tasks,
                  StreamsProducer& producer, std::vector<absl::Status>& errors,
                  TaskManagerStats& stats, Fail fail);

  // Registers the stores of the tasks pending initialisation (not backing off); those that
  // succeed become ready.
  void InitializePending();
  // `id`'s incarnation pending initialisation is gone: a new one starts without a backoff.
  void Forget(TaskId id) { backoff_.Clear(id); }
  void ForgetAll() { backoff_.ClearAll(); }
  // Task directories whose stores were damaged when opened, wiped and restored from scratch.
  int64_t stores_wiped_on_open() const {
    return stores_wiped_on_open_.load(std::memory_order_relaxed);
  }

 private:
  // Registers `task`'s stores, wiping damaged ones once.
  absl::Status Register(Task& task);
  // A failed registration: backs off (locked) or counts against task.timeout.ms.
  void Retry(TaskId id, const absl::Status& s);
  // Whether `who`'s stores have failed to open for longer than task.timeout.ms.
  bool TimedOut(const TaskIncarnation& who);

  const TaskManagerConfig& config_;
  TasksRegistry& tasks_;
  StreamsProducer& producer_;
  std::vector<absl::Status>& errors_;
  TaskManagerStats& stats_;
  const Fail fail_;
  InitBackoff backoff_;
  // Tasks pending initialisation whose stores failed to open: when task.timeout.ms runs out.
  std::map<TaskIncarnation, TimeNs> deadlines_ns_;
  std::atomic<int64_t> stores_wiped_on_open_{0};
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_INITIALIZER_H_
