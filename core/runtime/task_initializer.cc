#include "core/runtime/task_initializer.h"

#include <fmt/format.h>

#include "core/runtime/task_timeout.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

TaskInitializer::TaskInitializer(const TaskManagerConfig& config, TasksRegistry& tasks,
                                 StreamsProducer& producer, std::vector<absl::Status>& errors,
                                 TaskManagerStats& stats, Fail fail)
    : config_(config),
      tasks_(tasks),
      producer_(producer),
      errors_(errors),
      stats_(stats),
      fail_(std::move(fail)),
      backoff_(config_.clock, config_.init_backoff_ns, config_.init_backoff_ns_max) {
  RS_CHECK(fail_ != nullptr, "{}: task initializer without a failure sink", config_.thread_name);
}

void TaskInitializer::InitializePending() {
  std::vector<TaskId> ids;
  for (const auto& [id, task] : tasks_.pending_init()) ids.push_back(id);
  // Deadlines of incarnations no longer pending (closed meanwhile) are dropped.
  std::erase_if(deadlines_ns_, [this](const auto& entry) {
    auto it = tasks_.pending_init().find(entry.first.id);
    return it == tasks_.pending_init().end() || it->second->incarnation() != entry.first;
  });
  RS_CHECK(deadlines_ns_.size() <= ids.size(), "{}: initialisation deadlines outlive their tasks",
           config_.thread_name);
  for (const TaskId& id : ids) {
    if (backoff_.BackingOff(id)) continue;
    Task& task = *tasks_.pending_init().at(id);
    // Exactly once: the thread's producer initialises its transactions before its first active
    // task does (Kafka's RecordCollectorImpl.initialize), which aborts a transaction a crashed
    // predecessor of this transactional.id left open on the changelogs about to be restored.
    if (config_.exactly_once && task.effective_type() == TaskType::kActive) {
      if (absl::Status s = producer_.InitTransactionIfNeeded(); !s.ok()) {
        errors_.push_back(s);  // retried next round, the task still pending
        continue;
      }
    }
    if (absl::Status s = Register(task); !s.ok()) {
      Retry(id, s);  // retried next round
      continue;
    }
    backoff_.Clear(id);
    deadlines_ns_.erase(task.incarnation());  // progress clears the timeout
    tasks_.AddReady(tasks_.TakePendingInit(id));
  }
}

absl::Status TaskInitializer::Register(Task& task) {
  StateManager& sm = task.state_manager();
  absl::Status s = sm.RegisterStores();
  // Mutation damaged-store-retried: the damaged store is retried as it is, forever.
  if (absl::IsDataLoss(s) && !RS_MUTANT(kDamagedStoreRetried)) {
    // A damaged local store (LogStore or RocksDB corruption): as Kafka Streams does, it is
    // wiped and restored from its changelog — never served, never retried as it is forever.
    RS_CHECK(!sm.registered(), "task {}: stores left open by a failed registration",
             task.incarnation().ToString());
    TraceMark("cover", "store damaged on open: wiped");
    stores_wiped_on_open_.fetch_add(1, std::memory_order_relaxed);
    if (absl::Status w = sm.Wipe(); w.ok()) s = sm.RegisterStores();
  }
  return s;
}

void TaskInitializer::Retry(TaskId id, const absl::Status& s) {
  RS_CHECK(!s.ok() && tasks_.Has(TasksRegistry::Place::kPendingInit, id),
           "{}: retry of {} after {}", config_.thread_name, id.ToString(), s.ToString());
  // A directory still locked by another thread's closing incarnation is expected, and
  // waited for (Kafka's LockException); any other error is retried under task.timeout.ms.
  TraceMark("cover", absl::IsAborted(s) ? "initialisation retried: directory locked"
                                        : "initialisation retried: stores failed to open");
  if (absl::IsAborted(s)) {
    ++stats_.init_attempts_locked;
    backoff_.NoteLocked(id);
    return;
  }
  errors_.push_back(s);
  const TaskIncarnation who = tasks_.pending_init().at(id)->incarnation();
  if (!TimedOut(who)) return;
  std::unique_ptr<Task> task = tasks_.TakePendingInit(id);
  RS_CHECK(task->state() == TaskState::kCreated && !task->state_manager().registered(),
           "task {} failed initialisation in {}", task->incarnation().ToString(),
           TaskStateName(task->state()));
  deadlines_ns_.erase(task->incarnation());
  const absl::Status error = absl::DeadlineExceededError(fmt::format(
      "task {}: stores not opened within task.timeout.ms ({} ms): {}",
      task->incarnation().ToString(), config_.task_timeout_ns / kMillisecond,
      std::string(s.message())));
  TraceMark("task", "failed: stores not opened within task.timeout.ms");
  fail_(std::move(task), error);
}

// task.timeout.ms for a task's stores that fail to open (a transient I/O error, anything but
// damage and a locked directory): its first failure starts the task's deadline, a success
// clears it; whether the deadline passed.
bool TaskInitializer::TimedOut(const TaskIncarnation& who) {
  RS_CHECK(tasks_.pending_init().contains(who.id), "{}: {} is not pending initialisation",
           config_.thread_name, who.ToString());
  bool started = false;
  return TaskTimeoutPassed(deadlines_ns_, who, config_.task_timeout_ns, config_.clock, started);
}

}  // namespace restoresim
