// TaskFactory (Kafka's ActiveTaskCreator and StandbyTaskCreator, with TaskManager's
// convertActiveToStandby / convertStandbyToActive): makes a stream thread's task incarnations.
// A new task gets a state manager over its directory "<state_dir>/<task id>" and the input
// partition its id names (the one source topic, partition = task); a recycled task keeps the
// stores and offsets of the suspended one and changes only its type, completed later by the
// restore thread. Every incarnation number comes from the instance's shared counter, so an
// incarnation names one task object for the whole run.
//
// Thread-safety: its stream thread only (the counter is an Atomic shared by the instance).
#ifndef RESTORESIM_CORE_RUNTIME_TASK_FACTORY_H_
#define RESTORESIM_CORE_RUNTIME_TASK_FACTORY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/state_manager.h"
#include "core/runtime/task.h"
#include "core/runtime/task_manager_config.h"
#include "core/runtime/task_manager_stats.h"
#include "core/sync/atomic.h"

namespace restoresim {

class TaskFactory {
 public:
  // `config`: its manager's, which outlives it.
  TaskFactory(const TaskManagerConfig& config, Atomic<uint64_t>& incarnations,
              TaskManagerStats& stats);

  // A new incarnation of `id` as `type`, CREATED, its stores not registered.
  std::unique_ptr<Task> Create(TaskId id, TaskType type);
  // A SUSPENDED task's next incarnation as `type`, keeping its stores and offsets.
  std::unique_ptr<Task> Recycle(std::unique_ptr<Task> task, TaskType type);
  // The input partition of `id`: fixed, for every incarnation.
  TopicPartition InputOf(TaskId id) const {
    return TopicPartition{config_.input_topic, id.partition};
  }

 private:
  uint64_t NextIncarnation() { return incarnations_.FetchAdd(1) + 1; }

  const TaskManagerConfig& config_;
  Atomic<uint64_t>& incarnations_;
  TaskManagerStats& stats_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_FACTORY_H_
