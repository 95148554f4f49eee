#include "core/runtime/task_executor.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

TaskExecutor::TaskExecutor(TaskExecutorConfig config, TasksRegistry& tasks,
                           MainConsumer& consumer, StreamsProducer& producer,
                           std::vector<absl::Status>& errors)
    : config_(std::move(config)),
      tasks_(tasks),
      consumer_(consumer),
      producer_(producer),
      errors_(errors) {
  RS_CHECK(config_.close_commit_timeout_ns >= 0 && config_.close_commit_backoff_ns >= 0,
           "{}: negative commit timeouts", config_.thread_name);
}

void TaskExecutor::Buffer(PollResult records) {
  for (PartitionRecords& batch : records.partitions) {
    auto it = tasks_.running().find(TaskId{0, batch.partition.partition});
    if (it != tasks_.running().end()) {
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

absl::StatusOr<size_t> TaskExecutor::Process(size_t records_per_task_max) {
  ApplyTopologyPause();
  size_t total = 0;
  for (auto& [id, task] : tasks_.running()) {
    RS_CHECK(task->state() == TaskState::kRunning && task->type() == TaskType::kActive,
             "task {} in the running registry is {} {}", task->incarnation().ToString(),
             TaskTypeName(task->type()), TaskStateName(task->state()));
    if (IsPausedRunning(*task)) continue;  // its topology is paused: nothing processed
    if (config_.exactly_once && !BeginTransactionFor(*task)) break;
    absl::StatusOr<size_t> n = task->Process(producer_.producer(), records_per_task_max);
    // Mutation corruption-fails-thread: the data loss is returned, and the thread fails.
    if (absl::IsDataLoss(n.status()) && !RS_MUTANT(kCorruptionFailsThread)) {
      // Its store lost data: the task is corrupted, not the thread. Under exactly once its
      // dirty close ends the transaction of every running task: nothing more processes.
      corrupted_.emplace_back(id, n.status());
      if (config_.exactly_once) break;
      continue;
    }
    if (!n.ok() && config_.exactly_once && !IsRetryable(n.status())) {
      // Fenced or abortable while sending: the transaction is lost, not the thread.
      MarkTransactionLost(n.status());
      break;
    }
    if (!n.ok()) return n.status();
    RS_CHECK(*n <= records_per_task_max, "task {} processed {} records, more than {}",
             task->incarnation().ToString(), *n, records_per_task_max);
    total += *n;
  }
  return total;
}

bool TaskExecutor::HasBuffered() const {
  for (const auto& [id, task] : tasks_.running()) {
    if (task->buffered() > 0 && !IsPausedRunning(*task)) return true;
  }
  return false;
}

// Waits for the producer's acknowledgements and moves each task's changelog position past what
// it wrote; only then may a checkpoint name those offsets (after the stores flushed).
absl::Status TaskExecutor::FlushProducer(const std::vector<Task*>& tasks) {
  absl::StatusOr<std::map<TopicPartition, int64_t>> acked =
      producer_.producer().Flush(config_.producer_flush_timeout_ns);
  if (!acked.ok()) return acked.status();
  for (const auto& [changelog, last] : *acked) {
    const TaskId id{0, changelog.partition};
    Task* owner = nullptr;
    for (Task* t : tasks) {
      if (t->id() == id) owner = t;
    }
    if (owner == nullptr) {
      auto it = tasks_.running().find(id);
      if (it == tasks_.running().end()) continue;  // closed since: its close committed it
      owner = it->second.get();
    }
    RS_CHECK(last >= 0, "producer acknowledged {} at offset {}", changelog.ToString(), last);
    owner->state_manager().Advance(changelog, last + 1);
  }
  return absl::OkStatus();
}

bool TaskExecutor::BeginTransactionFor(const Task& task) {
  if (transaction_lost()) return false;
  if (task.buffered() == 0) return true;  // nothing to send
  absl::Status s = producer_.MaybeBeginTransaction();
  if (s.ok()) return true;
  if (IsRetryable(s)) {
    errors_.push_back(s);  // processed at the next loop
  } else {
    MarkTransactionLost(s);
  }
  return false;
}

void TaskExecutor::MarkTransactionLost(absl::Status cause) {
  RS_CHECK(config_.exactly_once && !cause.ok(), "{}: transaction lost under at least once",
           config_.thread_name);
  if (transaction_lost()) return;  // the first cause is the one reported
  TraceMark("eos", fmt::format("{} transaction lost: {}", config_.thread_name, cause.ToString()));
  lost_cause_ = std::move(cause);
}

void TaskExecutor::EndLostTransaction() {
  RS_CHECK(config_.exactly_once && transaction_lost(), "{}: no lost transaction to end",
           config_.thread_name);
  const absl::Status cause = lost_cause_;
  // (A fenced producer is rare — the drawn fatal faults — so not a coverage mark.)
  TraceMark(absl::IsAborted(cause) ? "eos" : "cover",
            absl::IsAborted(cause) ? "transaction lost: producer fenced"
                                   : "eos transaction lost: aborted");
  // A fenced producer can do nothing more: a new one (its InitTransactions aborts what the old
  // one left open). An abortable transaction is aborted and the producer goes on.
  absl::Status ended = producer_.exactly_once() && absl::IsAborted(cause)
                           ? producer_.Reset()
                           : producer_.AbortOrReset();
  if (!ended.ok()) errors_.push_back(ended);  // the next transaction initialises it again
  errors_.push_back(cause);
  RS_CHECK(!transaction_in_flight(), "{}: a lost transaction still in flight once ended",
           config_.thread_name);
}

// Every running task is in the thread's transaction: whichever task a commit is for, all of
// them commit together (Kafka under EOS v2 commits all tasks at a revocation for this reason).
absl::Status TaskExecutor::CommitTransaction(const std::vector<Task*>& tasks) {
  if (transaction_lost()) return lost_cause_;
  std::vector<Task*> all = tasks;
  for (auto& [id, task] : tasks_.running()) {
    if (std::find(all.begin(), all.end(), task.get()) == all.end()) all.push_back(task.get());
  }
  absl::Status s = FlushProducer(all);
  std::map<TopicPartition, int64_t> offsets;
  for (Task* task : all) {
    if (!s.ok()) break;
    s = task->state_manager().Flush();  // no checkpoint: none exists while it processes
    const std::optional<int64_t> consumed = task->consumed_offset();
    auto committed = committed_offsets_.find(task->incarnation());
    if (consumed && (committed == committed_offsets_.end() || committed->second != *consumed)) {
      offsets[task->input()] = *consumed;
    }
  }
  if (s.ok()) s = producer_.CommitTransaction(offsets, consumer_.GroupMetadata());
  if (!s.ok()) {
    if (!IsRetryable(s)) MarkTransactionLost(s);
    return s;
  }
  std::map<TaskIncarnation, int64_t> now;  // only the incarnations of this commit stay
  for (Task* task : all) {
    if (task->consumed_offset()) now[task->incarnation()] = *task->consumed_offset();
  }
  committed_offsets_ = std::move(now);
  return s;
}

absl::Status TaskExecutor::CommitTasks(const std::vector<Task*>& tasks, bool enforce_checkpoint) {
  if (config_.exactly_once) return CommitTransaction(tasks);
  if (absl::Status s = FlushProducer(tasks); !s.ok()) return s;
  std::map<TopicPartition, int64_t> offsets;
  for (Task* task : tasks) {
    StateManager& sm = task->state_manager();
    // At-least-once, as Kafka's StreamTask.postCommit: a periodic commit flushes and
    // checkpoints a task only once its stores moved more than checkpoint_offset_delta_min
    // records since its last checkpoint (a close or recycle enforces it); the input offsets
    // are committed either way, since the changelog holds every acknowledged write.
    const bool checkpoint =
        sm.CheckpointNeeded(enforce_checkpoint, config_.checkpoint_offset_delta_min);
    if (checkpoint) {
      if (absl::Status s = sm.Flush(); !s.ok()) return s;
    }
    if (checkpoint) {
      // As Kafka's ProcessorStateManager: a checkpoint that cannot be written is a warning —
      // the last one written stays, behind the data, and the commit goes on.
      if (absl::Status s = sm.Checkpoint(); !s.ok()) errors_.push_back(s);
    }
    if (task->consumed_offset().has_value()) offsets[task->input()] = *task->consumed_offset();
  }
  if (offsets.empty()) return absl::OkStatus();
  return consumer_.CommitSync(offsets);
}

// A single transient disconnect or a leader election used to turn a close dirty, leaving
// processed but uncommitted input to be counted twice and a store with writes its changelog did
// not have yet for the next incarnation to open (found by scenario.swarm under broker faults).
// Retrying is safe: a failed flush keeps the producer's queue and a failed commit changes
// nothing.
absl::Status TaskExecutor::CommitForClose(Task& task) {
  return WithCloseRetries([&] { return CommitTasks({&task}, /*enforce_checkpoint=*/true); });
}

absl::Status TaskExecutor::FlushSends() {
  RS_CHECK(!config_.exactly_once, "{}: sends flushed outside a transaction under exactly once",
           config_.thread_name);
  return WithCloseRetries([&] { return FlushProducer({}); });
}

absl::Status TaskExecutor::WithCloseRetries(const std::function<absl::Status()>& attempt_once) {
  Clock* clock = config_.clock;
  const TimeNs deadline =
      clock == nullptr ? 0 : DeadlineAfter(clock->NowNs(), config_.close_commit_timeout_ns);
  absl::Status s;
  for (int attempt = 0; attempt < kCloseCommitAttemptsMax; ++attempt) {
    s = attempt_once();
    if (s.ok() || !IsRetryable(s)) return s;
    if (clock == nullptr) continue;
    if (clock->NowNs() >= deadline) return s;
    clock->SleepFor(config_.close_commit_backoff_ns);
  }
  return s;
}

absl::Status TaskExecutor::Commit() {
  std::vector<Task*> tasks;
  for (auto& [id, task] : tasks_.running()) tasks.push_back(task.get());
  return CommitTasks(tasks, /*enforce_checkpoint=*/false);
}

// ---- pause and resume of the running actives (KIP-834) ----

bool TaskExecutor::IsPausedRunning(const Task& task) const {
  auto it = paused_running_.find(task.id());
  return it != paused_running_.end() && it->second == task.incarnation();
}

std::set<TaskId> TaskExecutor::paused_running() const {
  std::set<TaskId> ids;
  for (const auto& [id, who] : paused_running_) ids.insert(id);
  return ids;
}

void TaskExecutor::ApplyTopologyPause() {
  const bool paused = config_.pause != nullptr && config_.pause->paused();
  // Entries of incarnations that stopped running since (closed, recycled, lost) go: whatever
  // runs next under that id is paused anew.
  for (auto it = paused_running_.begin(); it != paused_running_.end();) {
    auto run = tasks_.running().find(it->first);
    const bool stale = run == tasks_.running().end() || run->second->incarnation() != it->second;
    it = stale ? paused_running_.erase(it) : std::next(it);
  }
  if (paused) {
    PauseRunning();
  } else if (!paused_running_.empty()) {
    ResumeRunning();
  }
}

void TaskExecutor::PauseRunning() {
  for (auto& [id, task] : tasks_.running()) {
    if (IsPausedRunning(*task)) continue;
    RS_CHECK(task->state() == TaskState::kRunning, "pausing {} in {}",
             task->incarnation().ToString(), TaskStateName(task->state()));
    if (absl::Status s = consumer_.Pause({task->input()}); !s.ok()) errors_.push_back(s);
    paused_running_.emplace(id, task->incarnation());
    TraceMark("task", "paused " + task->incarnation().ToString());
    TraceMark("cover", "running active paused");
    RS_OBSERVE(OnTaskPaused, config_.thread_name, task->incarnation(), /*paused=*/true);
  }
  RS_CHECK_EQ(paused_running_.size(), tasks_.running().size(),
              "{}: running actives left unpaused", config_.thread_name);
}

void TaskExecutor::ResumeRunning() {
  for (const auto& [id, who] : paused_running_) {
    Task& task = *tasks_.running().at(id);
    RS_CHECK(task.incarnation() == who, "{}: resuming {} as {}", config_.thread_name,
             task.incarnation().ToString(), who.ToString());
    if (absl::Status s = consumer_.Resume({task.input()}); !s.ok()) errors_.push_back(s);
    TraceMark("task", "resumed " + who.ToString());
    TraceMark("cover", "running active resumed");
    RS_OBSERVE(OnTaskPaused, config_.thread_name, who, /*paused=*/false);
  }
  paused_running_.clear();
}

}  // namespace restoresim
