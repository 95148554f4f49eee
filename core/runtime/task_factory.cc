#include "core/runtime/task_factory.h"

#include <fmt/format.h>

#include "core/runtime/runtime_observer.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

TaskFactory::TaskFactory(const TaskManagerConfig& config, Atomic<uint64_t>& incarnations,
                         TaskManagerStats& stats)
    : config_(config), incarnations_(incarnations), stats_(stats) {
  RS_CHECK(config_.fs != nullptr && config_.open_store, "{}: task factory without fs/opener",
           config_.thread_name);
}

std::unique_ptr<Task> TaskFactory::Create(TaskId id, TaskType type) {
  StateManagerConfig sm;
  sm.application_id = config_.application_id;
  sm.task_dir = config_.state_dir + "/" + id.ToString();
  sm.exactly_once = config_.exactly_once;
  sm.fs = config_.fs;
  sm.open_store = config_.open_store;
  sm.directory = config_.directory;
  if (!config_.store_names.empty()) sm.store_names = config_.store_names;
  ++stats_.created;
  auto task = std::make_unique<Task>(TaskIncarnation{id, NextIncarnation()},
                                     std::make_unique<StateManager>(id, type, std::move(sm)),
                                     InputOf(id));
  RS_CHECK(task->state() == TaskState::kCreated && task->type() == type,
           "task {} created in {}", task->incarnation().ToString(), TaskStateName(task->state()));
  RS_OBSERVE(OnDecision, config_.thread_name, task->incarnation(), TaskDecision::kCreate, type);
  return task;
}

// Keeps the stores and offsets: only the type changes, completed by the restore thread.
std::unique_ptr<Task> TaskFactory::Recycle(std::unique_ptr<Task> task, TaskType type) {
  const TaskId id = task->id();
  RS_CHECK(task->state() == TaskState::kSuspended, "task {} recycled in {}",
           task->incarnation().ToString(), TaskStateName(task->state()));
  std::unique_ptr<StateManager> sm = task->CloseAndRecycleState();
  sm->PrepareNewTaskType(type);
  // Mutation early-type-flip: the type changes here, on the stream thread, while the old
  // incarnation may still have changelogs registered in the restore thread.
  if (RS_MUTANT(kEarlyTypeFlip)) sm->MaybeCompleteTaskTypeConversion();
  ++stats_.recycled;
  TraceMark("task", fmt::format("recycle {} -> {}", id.ToString(), TaskTypeName(type)));
  auto next = std::make_unique<Task>(TaskIncarnation{id, NextIncarnation()}, std::move(sm),
                                     InputOf(id));
  RS_CHECK(next->effective_type() == type, "recycled {} is not {}", next->incarnation().ToString(),
           TaskTypeName(type));
  RS_OBSERVE(OnDecision, config_.thread_name, next->incarnation(), TaskDecision::kRecycle, type);
  return next;
}

}  // namespace restoresim
