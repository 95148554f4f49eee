#include "core/runtime/task_manager.h"

#include <fmt/format.h>

#include "core/runtime/assignment_info.h"
#include "core/runtime/mutation.h"
#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"

namespace restoresim {

TaskManager::TaskManager(TaskManagerConfig config, RestoreThread& restore_thread,
                         MainConsumer& consumer, Producer& producer,
                         Atomic<uint64_t>& incarnations)
    : config_(std::move(config)),
      restore_thread_(restore_thread),
      consumer_(consumer),
      producer_(producer),
      incarnations_(incarnations) {}

TaskManager::~TaskManager() = default;

TopicPartition TaskManager::InputOf(TaskId id) const {
  return TopicPartition{config_.input_topic, id.partition};
}

std::optional<TaskType> TaskManager::Wanted(TaskId id) const {
  if (wanted_active_.contains(id)) return TaskType::kActive;
  if (wanted_standby_.contains(id)) return TaskType::kStandby;
  return std::nullopt;
}

std::unique_ptr<Task> TaskManager::NewTask(TaskId id, TaskType type) {
  StateManagerConfig sm;
  sm.application_id = config_.application_id;
  sm.task_dir = config_.state_dir + "/" + id.ToString();
  sm.exactly_once = config_.exactly_once;
  sm.fs = config_.fs;
  sm.open_store = config_.open_store;
  sm.directory = config_.directory;
  ++stats_.created;
  return std::make_unique<Task>(TaskIncarnation{id, incarnations_.FetchAdd(1) + 1},
                                std::make_unique<StateManager>(id, type, std::move(sm)),
                                InputOf(id));
}

// Keeps the stores and offsets: only the type changes, completed by the restore thread.
std::unique_ptr<Task> TaskManager::Recycle(std::unique_ptr<Task> task, TaskType type) {
  const TaskId id = task->id();
  std::unique_ptr<StateManager> sm = task->CloseAndRecycleState();
  sm->PrepareNewTaskType(type);
  ++stats_.recycled;
  TraceMark("task", fmt::format("recycle {} -> {}", id.ToString(), TaskTypeName(type)));
  return std::make_unique<Task>(TaskIncarnation{id, incarnations_.FetchAdd(1) + 1},
                                std::move(sm), InputOf(id));
}

// ---- rebalance callbacks ----

void TaskManager::OnPartitionsAssigned(const Assignment& assignment) {
  absl::StatusOr<AssignmentInfo> info = AssignmentInfo::Decode(assignment.user_data);
  if (!info.ok()) {
    errors_.push_back(info.status());
    info = AssignmentInfo{};
  }
  wanted_active_.clear();
  std::vector<TopicPartition> to_pause;
  for (const TopicPartition& tp : assignment.partitions) {
    if (tp.topic != config_.input_topic) continue;
    const TaskId id{0, tp.partition};
    wanted_active_.insert(id);
    if (!running_.contains(id)) to_pause.push_back(tp);
  }
  wanted_standby_.clear();
  for (const TaskId& id : info->standby_tasks) {
    if (!wanted_active_.contains(id)) wanted_standby_.insert(id);
  }
  // Input of tasks that are not running yet waits until they are restored.
  if (!to_pause.empty()) {
    if (absl::Status s = consumer_.Pause(to_pause); !s.ok()) errors_.push_back(s);
  }
  Reconcile();
}

void TaskManager::OnPartitionsRevoked(const std::vector<TopicPartition>& partitions) {
  for (const TopicPartition& tp : partitions) {
    if (tp.topic == config_.input_topic) wanted_active_.erase(TaskId{0, tp.partition});
  }
  Reconcile();  // running tasks commit and close while their partitions are still owned
}

void TaskManager::OnPartitionsLost(const std::vector<TopicPartition>& partitions) {
  for (const TopicPartition& tp : partitions) {
    if (tp.topic != config_.input_topic) continue;
    const TaskId id{0, tp.partition};
    wanted_active_.erase(id);
    if (running_.contains(id)) CloseRunning(id, /*clean=*/false);  // no commit: not owned
  }
  Reconcile();
}

// ---- reconciling owned tasks with the assignment ----

void TaskManager::Reconcile() {
  std::set<TaskId> ids(wanted_active_.begin(), wanted_active_.end());
  ids.insert(wanted_standby_.begin(), wanted_standby_.end());
  for (const auto& [id, t] : running_) ids.insert(id);
  for (const auto& [id, t] : pending_init_) ids.insert(id);
  for (const auto& [id, t] : in_restore_) ids.insert(id);
  for (const std::unique_ptr<Task>& t : ready_) ids.insert(t->id());
  for (const TaskId& id : ids) {
    const std::optional<TaskType> want = Wanted(id);
    if (awaiting_.contains(id)) continue;  // decided when the task comes back
    if (running_.contains(id)) {
      ReconcileRunning(id, want);
      continue;
    }
    if (auto it = pending_init_.find(id); it != pending_init_.end()) {
      if (want == it->second->effective_type()) continue;
      it->second->TransitionTo(TaskState::kClosed);  // never registered: nothing to close
      pending_init_.erase(it);
      if (want) pending_init_[id] = NewTask(id, *want);
      continue;
    }
    if (auto it = in_restore_.find(id); it != in_restore_.end()) {
      if (want == it->second.second) continue;
      SendClose(it->second.first, {});
      awaiting_[id] = it->second.first;
      in_restore_.erase(it);
      continue;
    }
    auto ready = std::find_if(ready_.begin(), ready_.end(),
                              [&](const std::unique_ptr<Task>& t) { return t->id() == id; });
    if (ready != ready_.end()) {
      if (want == (*ready)->effective_type()) continue;
      std::unique_ptr<Task> task = std::move(*ready);
      ready_.erase(ready);
      // A task resumed by TakeBack waits here SUSPENDED already (found by
      // scenario.two_rebalances_between_polls: "illegal transition SUSPENDED -> SUSPENDED" when
      // the next poll's generation changed its type before the hand-over).
      if (task->state() != TaskState::kSuspended) task->TransitionTo(TaskState::kSuspended);
      if (want) {
        ready_.push_back(Recycle(std::move(task), *want));
      } else {
        CloseOwned(std::move(task), /*clean=*/true);
      }
      continue;
    }
    if (want) pending_init_[id] = NewTask(id, *want);
  }
}

void TaskManager::ReconcileRunning(TaskId id, std::optional<TaskType> want) {
  if (want == TaskType::kActive) return;
  if (!want) {
    CloseRunning(id, /*clean=*/true);
    return;
  }
  // Active -> standby: commit, suspend, and recycle keeping the stores; the CLOSE of the old
  // incarnation and the CREATE of the new one travel in the same round.
  std::unique_ptr<Task> task = std::move(running_.at(id));
  running_.erase(id);
  if (absl::Status s = CommitForClose(*task); !s.ok()) errors_.push_back(s);
  task->TransitionTo(TaskState::kSuspended);
  const TaskIncarnation old = task->incarnation();
  std::vector<TopicPartition> captured = task->state_manager().CaptureChangelogPartitions();
  ready_.push_back(Recycle(std::move(task), TaskType::kStandby));
  SendClose(old, std::move(captured));
}

void TaskManager::CloseRunning(TaskId id, bool clean) {
  std::unique_ptr<Task> task = std::move(running_.at(id));
  running_.erase(id);
  if (clean) {
    if (absl::Status s = CommitForClose(*task); !s.ok()) {
      errors_.push_back(s);
      clean = false;
    }
  }
  task->TransitionTo(TaskState::kSuspended);
  const TaskIncarnation who = task->incarnation();
  // Materialise the changelogs before Clear() forgets them: the restore thread needs them.
  std::vector<TopicPartition> captured = task->state_manager().CaptureChangelogPartitions();
  // Mutation late-partition-capture: read after Clear(), the list is empty.
  if (RS_MUTANT(kLatePartitionCapture)) captured.clear();
  CloseOwned(std::move(task), clean);
  SendClose(who, std::move(captured));
}

void TaskManager::CloseOwned(std::unique_ptr<Task> task, bool clean, bool wipe) {
  if (task->state() == TaskState::kRestoring || task->state() == TaskState::kRunning) {
    task->TransitionTo(TaskState::kSuspended);  // suspended before closed, always
  }
  StateManager& sm = task->state_manager();
  if (sm.registered()) {
    absl::Status s = sm.Close(clean);
    if (!s.ok()) {
      errors_.push_back(s);
      clean = false;
    }
    if (wipe) {
      if (absl::Status w = sm.Wipe(); !w.ok()) errors_.push_back(w);
    }
  }
  sm.Clear();
  task->TransitionTo(TaskState::kClosed);
  ++(clean ? stats_.closed_clean : stats_.closed_dirty);
  TraceMark("task", fmt::format("close {} {}{}", task->incarnation().ToString(),
                                clean ? "clean" : "dirty", wipe ? " and wipe" : ""));
}

void TaskManager::SendClose(const TaskIncarnation& who, std::vector<TopicPartition> changelogs) {
  TaskItem item;
  item.kind = TaskItem::Kind::kClose;
  item.incarnation = who;
  item.changelogs = std::move(changelogs);
  close_items_.push_back(std::move(item));
}

// ---- hand-over to and from the restore thread ----

absl::Status TaskManager::HandOver() {
  for (auto it = pending_init_.begin(); it != pending_init_.end();) {
    absl::Status s = it->second->state_manager().RegisterStores();
    if (!s.ok()) {  // retried next round
      // A directory still locked by another thread's closing incarnation is expected.
      if (!absl::IsAborted(s)) errors_.push_back(s);
      ++it;
      continue;
    }
    ready_.push_back(std::move(it->second));
    it = pending_init_.erase(it);
  }
  std::vector<TaskItem> round = std::move(close_items_);
  close_items_.clear();
  for (std::unique_ptr<Task>& task : ready_) {
    in_restore_[task->id()] = {task->incarnation(), task->effective_type()};
    TaskItem item;
    item.kind = TaskItem::Kind::kCreate;
    item.incarnation = task->incarnation();
    item.task = std::move(task);
    round.push_back(std::move(item));
  }
  ready_.clear();
  if (round.empty()) return absl::OkStatus();
  std::vector<TaskItem> refused;
  if (!restore_thread_.AddItems(std::move(round), &refused)) {
    for (TaskItem& item : refused) {
      if (item.task == nullptr) continue;
      in_restore_.erase(item.task->id());
      CloseOwned(std::move(item.task), /*clean=*/true);
    }
    return absl::CancelledError("the restore thread is shutting down");
  }
  return absl::OkStatus();
}

absl::Status TaskManager::HandleRestoreEvents() {
  std::map<TaskIncarnation, std::set<TopicPartition>> corrupted;
  std::map<TaskIncarnation, std::unique_ptr<Task>> corrupted_tasks;
  for (RestoreEvent& e : restore_thread_.DrainEvents()) {
    const TaskId id = e.incarnation.id;
    if (auto it = in_restore_.find(id); it != in_restore_.end() &&
                                        it->second.first == e.incarnation) {
      in_restore_.erase(it);
    }
    bool close_sent = false;
    if (auto it = awaiting_.find(id); it != awaiting_.end() && it->second == e.incarnation) {
      awaiting_.erase(it);
      close_sent = true;
    }
    switch (e.kind) {
      case RestoreEvent::Kind::kRestored:
        if (close_sent) {
          // Restored before the restore thread saw its CLOSE: restored to the end offset of
          // its registration, which may be stale — the partition may have had another owner
          // meanwhile who processed and wrote to the changelog. The incarnation is over (its
          // CLOSE is on its way); a new one keeps the stores and restores on to the current
          // end, or the task closes. Found by scenario.two_rebalances_between_polls: it ran
          // on a stale store.
          e.task->TransitionTo(TaskState::kSuspended);
          if (const std::optional<TaskType> want = Wanted(id)) {
            ready_.push_back(Recycle(std::move(e.task), *want));
          } else {
            CloseOwned(std::move(e.task), /*clean=*/true);
          }
        } else if (Wanted(id) == TaskType::kActive && e.task->type() == TaskType::kActive) {
          StartRunning(std::move(e.task));
        } else {
          e.task->TransitionTo(TaskState::kSuspended);
          SendClose(e.incarnation, e.task->state_manager().CaptureChangelogPartitions());
          CloseOwned(std::move(e.task), /*clean=*/true);
        }
        break;
      case RestoreEvent::Kind::kRemoved:
        TakeBack(std::move(e.task));
        break;
      case RestoreEvent::Kind::kCorrupted:
        ++stats_.corrupted_reports;
        // Several reports about one incarnation merge by union.
        corrupted[e.incarnation].insert(e.corrupted_changelogs.begin(),
                                        e.corrupted_changelogs.end());
        if (e.task != nullptr) corrupted_tasks[e.incarnation] = std::move(e.task);
        break;
      case RestoreEvent::Kind::kError:
        ++stats_.restore_errors;
        errors_.push_back(e.error);
        break;
    }
  }
  // All corruption of this drain together.
  for (auto& [who, task] : corrupted_tasks) {
    RS_OBSERVE(OnCorruptionHandled, who, task.get());
    if (Wanted(who.id) == task->type()) {
      Revive(std::move(task), corrupted[who]);
    } else {
      ++stats_.stale_reports;  // no longer ours to revive: close it, apply nothing
      CloseOwned(std::move(task), /*clean=*/false);
    }
  }
  for (const auto& [who, changelogs] : corrupted) {
    if (!corrupted_tasks.contains(who)) RS_OBSERVE(OnCorruptionHandled, who, nullptr);
  }
  Reconcile();
  return absl::OkStatus();
}

void TaskManager::TakeBack(std::unique_ptr<Task> task) {
  const std::optional<TaskType> want = Wanted(task->id());
  if (!want) {
    CloseOwned(std::move(task), /*clean=*/true);  // checkpoints what it restored
  } else if (*want == task->type()) {
    ready_.push_back(std::move(task));  // revoked and assigned again meanwhile: resume it
  } else {
    ready_.push_back(Recycle(std::move(task), *want));
  }
}

// Close dirty, wipe, and a new incarnation that restores from the beginning. Wiping under
// at-least-once too: a store restored from a truncated changelog over its old contents would
// not be the fold of any changelog (see docs/DESIGN.md).
void TaskManager::Revive(std::unique_ptr<Task> task, const std::set<TopicPartition>& corrupted) {
  const TaskId id = task->id();
  const TaskType type = task->type();
  TraceMark("task", fmt::format("revive {} ({} corrupted changelogs)",
                                task->incarnation().ToString(), corrupted.size()));
  CloseOwned(std::move(task), /*clean=*/false, /*wipe=*/true);
  ++stats_.revived;
  pending_init_[id] = NewTask(id, type);
}

void TaskManager::StartRunning(std::unique_ptr<Task> task) {
  task->TransitionTo(TaskState::kRunning);
  if (absl::Status s = task->state_manager().RemoveCheckpointForProcessing(); !s.ok()) {
    errors_.push_back(s);
  }
  if (absl::Status s = consumer_.Resume({task->input()}); !s.ok()) errors_.push_back(s);
  TraceMark("task", "running " + task->incarnation().ToString());
  running_[task->id()] = std::move(task);
}

// ---- processing and committing ----

void TaskManager::Buffer(PollResult records) {
  for (PartitionRecords& batch : records.partitions) {
    auto it = running_.find(TaskId{0, batch.partition.partition});
    if (it != running_.end()) {
      it->second->Buffer(std::move(batch.records));
    } else if (!batch.records.empty()) {
      // Fetched just before the partition was paused: fetch it again once the task runs.
      if (absl::Status s = consumer_.Seek(batch.partition, batch.records.front().offset);
          !s.ok()) {
        errors_.push_back(s);
      }
    }
  }
}

absl::StatusOr<size_t> TaskManager::Process(size_t records_per_task_max) {
  size_t total = 0;
  for (auto& [id, task] : running_) {
    absl::StatusOr<size_t> n = task->Process(producer_, records_per_task_max);
    if (!n.ok()) return n.status();
    total += *n;
  }
  return total;
}

// Waits for the producer's acknowledgements and moves each task's changelog position past what
// it wrote; only then may a checkpoint name those offsets (after the stores flushed).
absl::Status TaskManager::CommitTasks(const std::vector<Task*>& tasks) {
  absl::StatusOr<std::map<TopicPartition, int64_t>> acked =
      producer_.Flush(config_.producer_flush_timeout_ns);
  if (!acked.ok()) return acked.status();
  for (const auto& [changelog, last] : *acked) {
    const TaskId id{0, changelog.partition};
    Task* owner = nullptr;
    for (Task* t : tasks) {
      if (t->id() == id) owner = t;
    }
    if (owner == nullptr) {
      auto it = running_.find(id);
      if (it == running_.end()) continue;  // closed since: its close committed it
      owner = it->second.get();
    }
    owner->state_manager().Advance(changelog, last + 1);
  }
  std::map<TopicPartition, int64_t> offsets;
  for (Task* task : tasks) {
    StateManager& sm = task->state_manager();
    if (absl::Status s = sm.Flush(); !s.ok()) return s;
    if (!config_.exactly_once) {
      if (absl::Status s = sm.Checkpoint(); !s.ok()) return s;
    }
    if (task->consumed_offset().has_value()) offsets[task->input()] = *task->consumed_offset();
  }
  if (offsets.empty()) return absl::OkStatus();
  return consumer_.CommitSync(offsets);
}

absl::Status TaskManager::CommitTask(Task& task) { return CommitTasks({&task}); }

// A task closed or recycled cleanly commits once more, retrying what the transport says may be
// retried, with a backoff, until close_commit_timeout_ns (as Kafka's commitSync and producer
// flush retry internally until their timeout): a single transient disconnect or a leader
// election used to turn the close dirty, leaving processed but uncommitted input to be counted
// twice and a store with writes its changelog did not have yet for the next incarnation to
// open (found by scenario.swarm under broker faults). Retrying is safe: a failed flush keeps
// the producer's queue and a failed commit changes nothing.
absl::Status TaskManager::CommitForClose(Task& task) {
  Clock* clock = config_.clock;
  const TimeNs deadline =
      clock == nullptr ? 0 : DeadlineAfter(clock->NowNs(), config_.close_commit_timeout_ns);
  absl::Status s;
  for (int attempt = 0; attempt < kCloseCommitAttemptsMax; ++attempt) {
    s = CommitTask(task);
    if (s.ok() || !IsRetryable(s)) return s;
    if (clock == nullptr) continue;
    if (clock->NowNs() >= deadline) return s;
    clock->SleepFor(config_.close_commit_backoff_ns);
  }
  return s;
}

absl::Status TaskManager::Commit() {
  std::vector<Task*> tasks;
  for (auto& [id, task] : running_) tasks.push_back(task.get());
  return CommitTasks(tasks);
}

absl::Status TaskManager::CloseAll(bool clean) {
  const size_t errors_before = errors_.size();
  std::vector<TaskId> ids;
  for (const auto& [id, task] : running_) ids.push_back(id);
  for (const TaskId& id : ids) CloseRunning(id, clean);
  for (RestoreEvent& e : restore_thread_.DrainEvents()) {
    if (e.task != nullptr) CloseOwned(std::move(e.task), clean);
  }
  for (auto& [id, task] : pending_init_) task->TransitionTo(TaskState::kClosed);
  pending_init_.clear();
  for (std::unique_ptr<Task>& task : ready_) {
    // (A resumed task is SUSPENDED already: see Reconcile.)
    if (task->state() != TaskState::kSuspended) task->TransitionTo(TaskState::kSuspended);
    CloseOwned(std::move(task), clean);
  }
  ready_.clear();
  in_restore_.clear();
  awaiting_.clear();
  close_items_.clear();
  return errors_.size() == errors_before ? absl::OkStatus() : errors_.back();
}

std::set<TaskId> TaskManager::running() const {
  std::set<TaskId> ids;
  for (const auto& [id, task] : running_) ids.insert(id);
  return ids;
}

std::set<TaskId> TaskManager::in_restore() const {
  std::set<TaskId> ids;
  for (const auto& [id, entry] : in_restore_) ids.insert(id);
  return ids;
}

absl::StatusOr<std::map<std::string, std::string>> TaskManager::RunningStoreContents(TaskId id) {
  auto it = running_.find(id);
  if (it == running_.end()) {
    return absl::NotFoundError(fmt::format("task {} is not running", id.ToString()));
  }
  KeyValueStore* store = it->second->state_manager().Store("counts");
  if (store == nullptr) return absl::NotFoundError("no counts store");
  return store->ReadAll();
}

}  // namespace restoresim
