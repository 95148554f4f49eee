// TaskManager, part 1: tasks from assignments — rebalance callbacks, reconciling what the
// stream thread holds with what it is assigned, creating, recycling and closing tasks.
// (Hand-over to and from the restore thread: task_manager_handover.cc; shutdown and
// observation: task_manager_close.cc.)
#include "core/runtime/task_manager.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/runtime/assignment_info.h"
#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

TaskManager::TaskManager(TaskManagerConfig config, RestoreThread& restore_thread,
                         MainConsumer& consumer, StreamsProducer& producer,
                         Atomic<uint64_t>& incarnations)
    : config_(std::move(config)),
      restore_thread_(restore_thread),
      consumer_(consumer),
      producer_(producer),
      tasks_(config_.thread_name),
      executor_(TaskExecutorConfig{.thread_name = config_.thread_name,
                                   .exactly_once = config_.exactly_once,
                                   .producer_flush_timeout_ns = config_.producer_flush_timeout_ns,
                                   .clock = config_.clock,
                                   .close_commit_timeout_ns = config_.close_commit_timeout_ns,
                                   .close_commit_backoff_ns = config_.close_commit_backoff_ns,
                                   .checkpoint_offset_delta_min =
                                       config_.checkpoint_offset_delta_min,
                                   .pause = config_.pause},
                tasks_, consumer, producer, errors_),
      factory_(config_, incarnations, stats_),
      initializer_(config_, tasks_, producer, errors_, stats_,
                   [this](std::unique_ptr<Task> task, const absl::Status& error) {
                     FailTask(std::move(task), error, /*send_close=*/false);
                   }),
      starter_(config_, tasks_, consumer, errors_),
      closer_(config_, tasks_, executor_, offset_sums_, stats_, errors_, revoked_running_),
      reviver_(config_, {tasks_, executor_, factory_, starter_, closer_, consumer},
               stats_, errors_, [this](TaskId id) { return Wanted(id); }) {
  RS_CHECK(config_.fs != nullptr && config_.open_store, "task manager without fs/opener");
  RS_CHECK(producer.exactly_once() == config_.exactly_once, "{}: producer and tasks disagree on "
           "exactly once", config_.thread_name);
}

TaskManager::~TaskManager() = default;

std::optional<TaskType> TaskManager::Wanted(TaskId id) const {
  RS_CHECK(!(wanted_active_.contains(id) && wanted_standby_.contains(id)),
           "task {} wanted as active and standby", id.ToString());
  if (wanted_active_.contains(id)) return TaskType::kActive;
  if (wanted_standby_.contains(id)) return TaskType::kStandby;
  return std::nullopt;
}

// ---- rebalance callbacks ----

void TaskManager::OnPartitionsAssigned(const Assignment& assignment) {
  ++rebalances_handled_;
  absl::StatusOr<AssignmentInfo> info = AssignmentInfo::Decode(assignment.user_data);
  if (!info.ok()) {
    errors_.push_back(info.status());
    info = AssignmentInfo{};
  }
  probing_rebalance_at_ms_ = info->rebalance_at_ms;  // a new assignment replaces the schedule
  wanted_active_.clear();
  std::vector<TopicPartition> to_pause;
  for (const TopicPartition& tp : assignment.partitions) {
    if (tp.topic != config_.input_topic) {
      // A task's input is fixed (task = partition of the one source topic): a partition of
      // another topic would change some task's input partitions, which this topology cannot
      // have (docs/DESIGN.md, "Kafka fidelity": input-partition updates). Never a task.
      errors_.push_back(absl::InvalidArgumentError(fmt::format(
          "{}: assignment names {}, not a partition of the source topic '{}': a task's input "
          "partitions cannot change",
          config_.thread_name, tp.ToString(), config_.input_topic)));
      TraceMark("cover", "assignment names a partition of another topic");
      continue;
    }
    const TaskId id{0, tp.partition};
    wanted_active_.insert(id);
    // Not running yet, or running paused (its pause survives the rebalance).
    const auto running = tasks_.running().find(id);
    if (running == tasks_.running().end() || executor_.IsPausedRunning(*running->second)) {
      to_pause.push_back(tp);
    }
  }
  wanted_standby_.clear();
  for (const TaskId& id : info->standby_tasks) {
    if (!wanted_active_.contains(id)) wanted_standby_.insert(id);
  }
  // A streams group (KIP-1071) names standbys by their source partition (transport.h).
  for (const TopicPartition& tp : assignment.standby_partitions) {
    RS_CHECK(tp.topic == config_.input_topic, "{}: standby {} is not a partition of '{}'",
             config_.thread_name, tp.ToString(), config_.input_topic);
    if (!wanted_active_.contains(TaskId{0, tp.partition})) {
      wanted_standby_.insert(TaskId{0, tp.partition});
    }
  }
  // A revoked running task assigned again (a later generation in the same poll) runs on; its
  // input resumes from its commit.
  for (const TaskId& id : wanted_active_) revoked_running_.erase(id);
  ReportAssignment();
  // Input of tasks that are not running yet waits until they are restored.
  if (!to_pause.empty()) {
    if (absl::Status s = consumer_.Pause(to_pause); !s.ok()) errors_.push_back(s);
  }
  Reconcile();
}

void TaskManager::OnPartitionsRevoked(const std::vector<TopicPartition>& partitions) {
  ++rebalances_handled_;
  for (const TopicPartition& tp : partitions) {
    if (tp.topic != config_.input_topic) continue;
    const TaskId id{0, tp.partition};
    wanted_active_.erase(id);
    auto it = tasks_.running().find(id);
    if (it == tasks_.running().end()) continue;
    // Commit while the partition is still owned; what becomes of the task is decided by the
    // assignment that follows (close, recycle to a standby, or keep).
    absl::Status s = executor_.CommitForClose(*it->second);
    if (!s.ok()) errors_.push_back(s);
    it->second->DropBuffered();
    revoked_running_[id] = s.ok();
    TraceMark("task", "revoked " + it->second->incarnation().ToString());
  }
  ReportAssignment(/*revocation=*/true);
  in_revocation_ = true;
  Reconcile();  // everything else now; the revoked running tasks at the assignment
  in_revocation_ = false;
}

void TaskManager::OnPartitionsLost(const std::vector<TopicPartition>& partitions) {
  ++rebalances_handled_;
  for (const TopicPartition& tp : partitions) {
    if (tp.topic != config_.input_topic) continue;
    const TaskId id{0, tp.partition};
    wanted_active_.erase(id);
  }
  ReportAssignment();
  for (const TopicPartition& tp : partitions) {
    const TaskId id{0, tp.partition};
    revoked_running_.erase(id);
    if (tp.topic == config_.input_topic && tasks_.Has(TasksRegistry::Place::kRunning, id)) {
      // Dirty, no commit: not owned.
      closer_.CloseRunning(id, /*clean=*/false, TaskDecision::kCloseLost, /*commit=*/false,
                           /*wipe=*/false);
    }
  }
  Reconcile();
}

// ---- reconciling owned tasks with the assignment ----

void TaskManager::Reconcile() {
  using Place = TasksRegistry::Place;
  // A snapshot of the ids (the loop adds and removes tasks), sorted and distinct as a set's.
  std::vector<TaskId> ids(wanted_active_.begin(), wanted_active_.end());
  ids.insert(ids.end(), wanted_standby_.begin(), wanted_standby_.end());
  tasks_.AppendIds(ids);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (const TaskId& id : ids) {
    const std::optional<TaskType> want = Wanted(id);
    const std::optional<Place> where = tasks_.Where(id);
    if (!where.has_value()) {
      if (want) tasks_.AddPendingInit(factory_.Create(id, *want));
      continue;
    }
    switch (*where) {
      case Place::kAwaiting: break;  // decided when the task comes back
      case Place::kRestored:
        if (want == TaskType::kActive) break;  // retried at the next drain
        CloseRestored(id);
        if (want) tasks_.AddPendingInit(factory_.Create(id, *want));
        break;
      case Place::kRunning:
        // A revoked running task waits for the assignment of its rebalance.
        // Mutation revoked-closed-at-revocation (KAFKA-7672's eager close): decided on the
        // revocation's partial view, before the assignment that may want it again.
        if (!(in_revocation_ && revoked_running_.contains(id)) ||
            RS_MUTANT(kRevokedClosedAtRevocation)) {
          ReconcileRunning(id, want);
        }
        break;
      case Place::kPendingInit: ReconcilePendingInit(id, want); break;
      case Place::kInRestore: ReconcileInRestore(id, want); break;
      case Place::kReady: ReconcileReady(id, want); break;
    }
  }
  ReportView();
}

void TaskManager::ReconcilePendingInit(TaskId id, std::optional<TaskType> want) {
  const Task& held = *tasks_.pending_init().at(id);
  if (want == held.effective_type()) return;
  std::unique_ptr<Task> task = tasks_.TakePendingInit(id);
  Decided(task->incarnation(), TaskDecision::kClose, task->effective_type());
  task->TransitionTo(TaskState::kClosed);  // never registered: nothing to close
  task.reset();  // (destroyed before its successor is created, as the trace hashes have it)
  initializer_.Forget(id);  // a new incarnation starts without a backoff
  if (want) tasks_.AddPendingInit(factory_.Create(id, *want));
}

void TaskManager::ReconcileInRestore(TaskId id, std::optional<TaskType> want) {
  const TaskType held = tasks_.in_restore().at(id).second;
  if (want == held) return;
  const auto [who, type] = tasks_.AwaitClose(id);
  RS_CHECK(type == held);
  Decided(who, TaskDecision::kSendClose, type);
  closer_.SendClose(who, {}, /*promoted=*/type == TaskType::kStandby && want == TaskType::kActive);
}

void TaskManager::ReconcileReady(TaskId id, std::optional<TaskType> want) {
  auto ready = std::find_if(tasks_.ready().begin(), tasks_.ready().end(),
                            [&](const std::unique_ptr<Task>& t) { return t->id() == id; });
  RS_CHECK(ready != tasks_.ready().end(), "task {} not ready", id.ToString());
  if (want == (*ready)->effective_type()) return;
  std::unique_ptr<Task> task = tasks_.TakeReady(id);
  // A task resumed by TakeBack waits here SUSPENDED already (found by
  // scenario.two_rebalances_between_polls: "illegal transition SUSPENDED -> SUSPENDED" when
  // the next poll's generation changed its type before the hand-over).
  if (task->state() != TaskState::kSuspended) task->TransitionTo(TaskState::kSuspended);
  if (want) {
    tasks_.AddReady(factory_.Recycle(std::move(task), *want));
  } else {
    closer_.CloseOwned(std::move(task), /*clean=*/true, TaskDecision::kClose);
  }
}

void TaskManager::ReconcileRunning(TaskId id, std::optional<TaskType> want) {
  // Revoked: committed already (true), or its commit failed (false: it closes dirty).
  std::optional<bool> revoked;
  if (auto it = revoked_running_.find(id); it != revoked_running_.end()) {
    revoked = it->second;
    revoked_running_.erase(it);
  }
  if (want == TaskType::kActive) return;
  if (!want || revoked == false) {
    closer_.CloseRunning(id, /*clean=*/revoked.value_or(true), TaskDecision::kClose,
                         /*commit=*/!revoked.has_value(), /*wipe=*/false);
    // Its revocation's commit failed, so it was not recycled: the standby the assignment
    // wants is a new incarnation (found under exactly once, where a stale generation fails
    // the revocation's commit: the standby was never created).
    if (want) tasks_.AddPendingInit(factory_.Create(id, *want));
    return;
  }
  // Active -> standby: commit, suspend, and recycle keeping the stores; the CLOSE of the old
  // incarnation and the CREATE of the new one travel in the same round.
  std::unique_ptr<Task> task = tasks_.TakeRunning(id);
  bool committed = revoked.has_value();  // here: its revocation's commit succeeded
  if (!revoked.has_value()) {
    absl::Status s = executor_.CommitForClose(*task);
    if (!s.ok()) errors_.push_back(s);
    committed = s.ok();
  }
  task->TransitionTo(TaskState::kSuspended);
  if (config_.exactly_once && committed) CheckpointCommittedSuspended(*task);
  const TaskIncarnation old = task->incarnation();
  std::vector<TopicPartition> captured = task->state_manager().CaptureChangelogPartitions();
  TraceMark("cover", "running active recycled to a standby");
  tasks_.AddReady(factory_.Recycle(std::move(task), TaskType::kStandby));
  closer_.SendClose(old, std::move(captured));
}

// Exactly once: a running active committed and suspended for a recycle writes the checkpoint
// of what its commit flushed, as Kafka's postCommit with enforceCheckpoint does under EOS too
// (only periodic commits skip it there). Without it the standby it becomes held committed data
// with no checkpoint, and if it left the restore thread before its first restored batch, the
// checkpoint on disk was an older one (found by the exactly-once broker-faults property,
// RC_PARAMS=seed=4: "[invariant:checkpoint_progress] ... leaves instance-a-restore removed with
// app-counts-changelog-1 at 1, but its checkpoint names 0").
void TaskManager::CheckpointCommittedSuspended(Task& task) {
  RS_CHECK(config_.exactly_once && task.state() == TaskState::kSuspended,
           "{}: checkpoint of {} in {}", config_.thread_name, task.incarnation().ToString(),
           TaskStateName(task.state()));
  // A checkpoint that cannot be written is a warning, as at any commit.
  if (absl::Status s = task.state_manager().Checkpoint(); !s.ok()) errors_.push_back(s);
}

void TaskManager::SettleRevoked() {
  while (!revoked_running_.empty()) {
    const TaskId id = revoked_running_.begin()->first;
    ReconcileRunning(id, Wanted(id));
  }
}

void TaskManager::HandleTransactionLost() {
  RS_CHECK(config_.exactly_once && executor_.transaction_lost(),
           "{}: no lost transaction to handle", config_.thread_name);
  executor_.EndLostTransaction();
  std::vector<TopicPartition> inputs;
  for (const TaskId& id : tasks_.RunningIds()) {
    inputs.push_back(InputOf(id));
    closer_.CloseRunning(id, /*clean=*/false, TaskDecision::kCloseLost, /*commit=*/false,
                         /*wipe=*/false);
  }
  // Their input waits for the new incarnations, which seek it back to the last commit.
  if (!inputs.empty()) {
    if (absl::Status s = consumer_.Pause(inputs); !s.ok()) errors_.push_back(s);
  }
  executor_.ClearTransactionLost();
  RS_CHECK(tasks_.running().empty(), "{}: running tasks left after a lost transaction",
           config_.thread_name);
  Reconcile();  // what is still assigned is created again
}

}  // namespace restoresim
