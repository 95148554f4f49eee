#include "core/runtime/restore_thread.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

RestoreThread::RestoreThread(Transport& transport, Clock& clock, StateRestoreListener* listener,
                             RestoreThreadConfig config)
    : transport_(transport),
      clock_(clock),
      listener_(listener),
      config_(std::move(config)),
      handover_(config_.name, config_.rounds_max, config_.events_max),
      snapshots_(config_.name, config_.publish_offset_sums),
      metrics_snapshot_(StateUpdaterMetricsSnapshot(config_.name, config_.metrics),
                        "state_updater_metrics"),
      tasks_(config_.name),
      metrics_(config_.name, config_.metrics),
      pause_(config_.name, config_.pause, tasks_,
             UpdaterPause::Hooks{
                 .checkpoint = [this](Task& task) { checkpoints_.BeforeHandBack(task); },
                 .hand_back =
                     [this](std::unique_ptr<Task> task) {
                       const TaskIncarnation who = task->incarnation();
                       HandBack(RestoreEvent{.kind = RestoreEvent::Kind::kRemoved,
                                             .incarnation = who, .task = std::move(task)});
                     }}),
      checkpoints_(UpdaterCheckpointsConfig{.restore_thread = config_.name,
                                            .checkpoint_interval_ns =
                                                config_.checkpoint_interval_ns,
                                            .checkpoint_offset_delta_min =
                                                config_.checkpoint_offset_delta_min,
                                            .hold = config_.hold},
                   clock_, tasks_, metrics_,
                   [this](const TaskIncarnation& who, const absl::Status& error) {
                     Emit(RestoreEvent{.kind = RestoreEvent::Kind::kWarning, .incarnation = who,
                                       .error = error});
                   }),
      failures_(config_.name, config_.task_timeout_ns, clock_, tasks_,
                UpdaterFailures::Hooks{
                    .changelogs_of =
                        [this](const TaskIncarnation& who) { return reader_->ChangelogsOf(who); },
                    .unregister =
                        [this](const std::vector<TopicPartition>& changelogs) {
                          reader_->Unregister(changelogs);
                        },
                    .hand_back = [this](RestoreEvent event) { HandBack(std::move(event)); },
                    .emit = [this](RestoreEvent event) { Emit(std::move(event)); },
                    .publish_counts = [this]() { pause_.PublishCounts(); }}) {}

RestoreThread::~RestoreThread() {
  if (thread_ == nullptr) return;
  SimNoAbortScope no_abort;  // a destructor that joins: see core/util/sim_hooks.h
  stop_.Store(true);
  handover_.Close();
  if (!thread_->joined()) thread_->Join();
}

void RestoreThread::Start() {
  RS_CHECK(thread_ == nullptr, "restore thread started twice");
  thread_ = std::make_unique<Thread>(config_.name, [this]() { Run(); });
}

bool RestoreThread::AddItems(std::vector<TaskItem> items, std::vector<TaskItem>* refused) {
  return handover_.AddItems(std::move(items), refused);
}

// An empty round wakes an idle wait (found by RealBugsTest.AResumeWakesARestoreThreadWhose
// TasksAreAllPaused: before it, the restoration began when idle_wait_ns ran out, 5 s after the
// resume). A full queue has a round to wake it already.
void RestoreThread::SignalResume() {
  if (thread_ == nullptr) return;  // not started: its first iteration reads the pause anyway
  // Mutation resume-without-wakeup (KAFKA-14299): no wake-up; an idle wait runs out first.
  if (RS_MUTANT(kResumeWithoutWakeup)) return;
  handover_.Wake();
}

std::vector<RestoreEvent> RestoreThread::DrainEvents() { return handover_.DrainEvents(); }

std::shared_ptr<const std::set<TopicPartition>> RestoreThread::CompletedChangelogs() const {
  return snapshots_.CompletedChangelogs();
}

absl::Status RestoreThread::Shutdown(TimeNs timeout_ns) {
  if (thread_ == nullptr) return absl::OkStatus();
  stop_.Store(true);
  RS_OBSERVE(OnRestoreShutdownRequested, config_.name);  // from here no iteration begins
  handover_.Close();
  const TimeNs deadline = DeadlineAfter(clock_.NowNs(), timeout_ns);
  {
    MutexLock lock(done_mu_);
    while (!done_) {
      if (!done_cv_.WaitUntil(done_mu_, clock_, deadline)) break;
      // Mutation wait-without-predicate (KAFKA-17929): one wait, the predicate not re-checked,
      // so a spurious wake-up ends the shutdown's wait before the thread stopped.
      if (RS_MUTANT(kWaitWithoutPredicate)) break;
    }
    if (!done_) {
      return absl::DeadlineExceededError(fmt::format(
          "restore thread '{}' did not stop within {} ms", config_.name,
          timeout_ns / kMillisecond));
    }
  }
  if (!thread_->joined()) thread_->Join();
  return absl::OkStatus();
}

void RestoreThread::Run() {
  // Its clients are its own: only this thread calls them (the oracle checks it).
  RS_OBSERVE(OnClientOwner, config_.name + "-consumer", config_.name);
  RS_OBSERVE(OnClientOwner, config_.name + "-admin", config_.name);
  consumer_ = transport_.NewRestoreConsumer(
      {.client_id = config_.name + "-consumer",
       .max_poll_records = config_.max_poll_records,
       // Mutation eos-restore-read-uncommitted: aborted changelog records are restored.
       .isolation_level = RS_MUTANT(kEosRestoreReadUncommitted)
                              ? IsolationLevel::kReadUncommitted
                              : config_.isolation_level});
  admin_ = transport_.NewAdmin(config_.name + "-admin");
  ChangelogReaderConfig reader_config = config_.reader;
  reader_config.name = config_.name;  // observers know the reader by its restore thread
  reader_ = std::make_unique<ChangelogReader>(*consumer_, *admin_, listener_, reader_config);
  pause_.Attach(*reader_);
  checkpoints_.Start(*reader_);
  while (!stop_.Load()) {
    checkpoints_.MaybeHold();
    if (stop_.Load()) break;
    RS_OBSERVE(OnRestoreLoop, config_.name);
    const TimeNs began_ns = clock_.NowNs();
    metrics_.BeginIteration(began_ns);  // restore_thread_metrics.cc
    std::vector<std::vector<TaskItem>> rounds;
    handover_.DrainRounds(rounds);
    const bool idled = rounds.empty() && tasks_.updating().empty();
    if (idled) MeasuredIdleWait(rounds);
    RS_OBSERVE(OnRoundsDrained, config_.name, rounds.size());
    pause_.Read();
    if (idled && !rounds.empty() && !pause_.paused() && !tasks_.paused().empty()) {
      TraceMark("cover", "idle restore thread woken to resume its paused tasks");
    }
    // Rounds in the order they were sent; CLOSE before CREATE only within a round. Sorting
    // every drained CLOSE before every drained CREATE (the seed's "drain closed, then created")
    // would apply a later round's CLOSE before an earlier round's CREATE of the same task,
    // leaving it registered after the stream thread closed it — found by
    // scenario.rebalance_storm.
    for (std::vector<TaskItem>& round : rounds) ApplyItems(std::move(round));
    pause_.Sync();
    if (stop_.Load()) break;
    absl::StatusOr<RestoreStep> step = reader_->Restore();
    if (!step.ok()) {
      HandleFailedStep(step.status());
      MeasuredErrorBackoff();
      EndIterationMetrics();
      continue;
    }
    metrics_.RecordRestoreCall(step->records);
    failures_.HandleFailures(*step);
    HandleStep(*step);
    checkpoints_.MaybeCheckpoint();
    EndIterationMetrics();
    YieldToProcessing(began_ns, step->records);
  }
  if (config_.hold != nullptr) config_.hold->Finished();
  ReturnAllTasks();
  consumer_->Close();
  RS_OBSERVE(OnRestoreStopped, config_.name);
  MutexLock lock(done_mu_);
  done_ = true;
  done_cv_.NotifyAll();
}

// On two cores a restoration at full speed (the restore thread, its consumer's fetcher and the
// store's writer and flush threads) took half the processing rate of a stream thread whose
// tasks had input: the bench's processing pair measured 0.63 of idle with Kafka Streams'
// RocksDB (docs/BENCH.md). Pausing in proportion to the work done gives processing the share
// asked for, whatever an iteration costs on the machine, and restoration takes the rest.
void RestoreThread::YieldToProcessing(TimeNs began_ns, int64_t records) {
  const int32_t share = config_.share_while_processing_percent;
  if (share >= 100 || config_.processing == nullptr || records == 0) return;
  RS_CHECK(share >= 1, "{}: a share of {}%", config_.name, share);
  const TimeNs took_ns = clock_.NowNs() - began_ns;
  if (took_ns <= 0 || !config_.processing->Load()) return;
  const TimeNs pause_ns = std::min<TimeNs>(took_ns * (100 - share) / share, config_.yield_max_ns);
  RS_CHECK(pause_ns > 0 || took_ns * (100 - share) < share);
  TraceMark("cover", "restore thread yielded to processing");
  clock_.SleepFor(pause_ns);
}

// A fatal error of the step (the broker refuses, a topic is gone, a bug) is task-less and fails
// every task it owns; anything else — retryable, or a transient state of the restore consumer
// (FAILED_PRECONDITION: a position not known yet after a failed seek) — is a warning, retried
// after a backoff as Kafka retries a TimeoutException. A step can fail after it did work (the
// seek back after a store error, an assignment refused after an unregister or at the step's
// end): its batches are in the stores, its completions and failures stand, so it is handled as
// a step — after the warning — or, after a fatal error, only published. Found by
// FailureModelTest.AStepFailingAfterItAppliedBatchesPublishesTheirStandbyProgress: a task
// failed in such a step stayed held with nothing registered until a later step returned
// (registration, "held unpaused ... not registered"), and the standby progress lagged.
void RestoreThread::HandleFailedStep(const absl::Status& error) {
  RestoreStep partial = reader_->TakeFailedStep();
  const bool did_work = partial.records > 0 || !partial.completed.empty() ||
                        !partial.failed.empty() || !partial.corrupted.empty();
  if (IsFatalStepError(error)) {
    failures_.FailAllOwned(error);  // its reports name tasks failed now (it owns none after)
    if (partial.records > 0) snapshots_.Publish(*reader_, tasks_, partial.records);
    return;
  }
  Emit(RestoreEvent{.kind = RestoreEvent::Kind::kWarning, .error = error});
  if (!did_work) return;  // (as before: a step that did nothing is retried after the backoff)
  TraceMark("cover", "a failed restore step that did work handled as a step");
  metrics_.RecordRestoreCall(partial.records);
  failures_.HandleFailures(partial);
  HandleStep(partial);
}

// Nothing to restore or update: wait for work instead of polling nothing.
void RestoreThread::IdleWait(std::vector<std::vector<TaskItem>>& rounds) {
  RS_OBSERVE(OnRestoreIdle, config_.name, /*begin=*/true, /*woken=*/false);
  const TimeNs deadline = DeadlineAfter(clock_.NowNs(), config_.idle_wait_ns);
  if (RS_MUTANT(kIdleWithoutWakeup)) {
    // Mutation idle-without-wakeup: sleeps the wait out; a round pushed meanwhile waits.
    clock_.SleepUntil(deadline);
  } else if (std::optional<std::vector<TaskItem>> first =
                 handover_.PopRoundUntil(clock_, deadline)) {
    rounds.push_back(std::move(*first));
  }
  handover_.DrainRounds(rounds);
  // (Observer arguments must not be scheduling points: an Atomic load here would make runs
  // with and without the oracle differ.)
  const bool woken = !rounds.empty();
  RS_OBSERVE(OnRestoreIdle, config_.name, /*begin=*/false, woken);
}

void RestoreThread::ApplyItems(std::vector<TaskItem> items) {
  // Every CLOSE before any CREATE: revive and recycle are close-then-create of one task.
  // Mutation create-before-close: the CREATEs first.
  const TaskItem::Kind first =
      RS_MUTANT(kCreateBeforeClose) ? TaskItem::Kind::kCreate : TaskItem::Kind::kClose;
  std::stable_partition(items.begin(), items.end(),
                        [first](const TaskItem& item) { return item.kind == first; });
  NoteSameTaskCloseAndCreate(items);
  for (TaskItem& item : items) {
    if (item.kind == TaskItem::Kind::kClose) {
      CloseItem(item);
    } else {
      CreateItem(item);
    }
  }
}

// Coverage: a CLOSE and a CREATE of one task in one round (a recycle or revive in place).
void RestoreThread::NoteSameTaskCloseAndCreate(const std::vector<TaskItem>& items) {
  std::set<TaskId> closed;
  for (const TaskItem& item : items) {
    if (item.kind == TaskItem::Kind::kClose) closed.insert(item.incarnation.id);
  }
  for (const TaskItem& item : items) {
    if (item.kind == TaskItem::Kind::kCreate && closed.contains(item.incarnation.id)) {
      TraceMark("cover", "close and create of one task in a round");
      return;
    }
  }
}

void RestoreThread::CloseItem(TaskItem& item) {
  // The captured changelogs, and everything this incarnation registered: a task handed back
  // as restored keeps its completed changelogs registered until its CLOSE, even when the
  // CLOSE was sent before the stream thread saw the hand-over.
  std::vector<TopicPartition> changelogs = item.changelogs;
  // (Mutation late-partition-capture models the seed's design, where a CLOSE unregisters only
  // the changelogs it names: without this defence, its hazard cannot show.)
  if (!RS_MUTANT(kLatePartitionCapture)) {
    for (const TopicPartition& tp : reader_->ChangelogsOf(item.incarnation)) {
      changelogs.push_back(tp);
    }
  }
  const bool owns = tasks_.Owns(item.incarnation);  // updating or paused
  const Task* updating = tasks_.Updating(item.incarnation);
  if (updating != nullptr && updating->type() == TaskType::kActive &&
      reader_->RemainingOf(item.incarnation) > 0) {
    TraceMark("cover", "active removed while restoring");
  }
  reader_->Unregister(changelogs, item.promoted ? UnregisterReason::kPromoted
                                                : UnregisterReason::kMigrated);
  TraceMark("restore", "unregister " + item.incarnation.ToString(),
            static_cast<int64_t>(changelogs.size()));
  RS_OBSERVE(OnCloseApplied, config_.name, item.incarnation);
  if (!owns) return;
  std::unique_ptr<Task> task = tasks_.Take(item.incarnation);
  task->TransitionTo(TaskState::kSuspended);
  checkpoints_.BeforeHandBack(*task);
  HandBack(RestoreEvent{.kind = RestoreEvent::Kind::kRemoved, .incarnation = item.incarnation,
                        .task = std::move(task)});
}

void RestoreThread::CreateItem(TaskItem& item) {
  CheckTaskItem(item);  // as the stream thread did when it sent it
  RS_CHECK(item.kind == TaskItem::Kind::kCreate);
  // Received paused while its topology is paused (registered once resumed), else updating.
  Task& task = tasks_.Receive(std::move(item.task), pause_.paused()
                                                        ? UpdaterTasks::Place::kPaused
                                                        : UpdaterTasks::Place::kUpdating);
  // The deferred type conversion: after the old changelogs were unregistered (CLOSE items were
  // applied first), before they are registered again.
  task.state_manager().MaybeCompleteTaskTypeConversion();
  if (pause_.paused()) {
    pause_.Park(task);
    return;
  }
  for (const TopicPartition& tp : task.state_manager().ChangelogPartitions()) {
    reader_->Register(tp, &task.state_manager(), task.incarnation());
  }
  task.TransitionTo(TaskState::kRestoring);
  TraceMark("restore", "register " + task.incarnation().ToString(),
            task.type() == TaskType::kActive ? 1 : 0);
}

void RestoreThread::HandleStep(RestoreStep& step) {
  for (auto& [who, changelogs] : step.corrupted) {
    RestoreEvent event{.kind = RestoreEvent::Kind::kCorrupted, .incarnation = who,
                       .corrupted_changelogs = changelogs};
    // (A report kept across a failed step may name a paused task.)
    event.task = tasks_.Take(who);
    if (event.task != nullptr) event.task->TransitionTo(TaskState::kSuspended);  // stops here
    // (HandBack in two: the mark between, where the traces have it.)
    handover_.ObserveHandBack(event, tasks_);
    TraceMark("restore", "corrupted " + who.ToString(), static_cast<int64_t>(changelogs.size()));
    Emit(std::move(event));
  }
  HandOverRestored();
  snapshots_.Publish(*reader_, tasks_, step.records);
}

// Active tasks whose changelogs all completed go back to the stream thread to run.
void RestoreThread::HandOverRestored() {
  // The reader's completed changelogs as the loop starts, taken at the first active task (the
  // hand-backs below come after it).
  std::optional<std::set<TopicPartition>> completed;
  for (auto it = tasks_.updating().begin(); it != tasks_.updating().end();) {
    Task& task = *it->second;
    bool done = false;
    if (task.type() == TaskType::kActive) {
      if (!completed.has_value()) completed = reader_->Completed();
      done = task.state_manager().ChangelogsAllIn(*completed);
    }
    const TaskId id = it->first;
    ++it;  // (before the task leaves the map)
    if (!done) continue;
    TraceMark("restore", "restored " + task.incarnation().ToString(), 0);
    // Forced checkpoint of a completed restoration (KAFKA-12634) — skipped by the mutation
    // no-checkpoint-after-restoration.
    if (!RS_MUTANT(kNoCheckpointAfterRestoration)) checkpoints_.BeforeHandBack(task);
    // Mutation resume-on-restore-thread: the input is resumed from here, not the stream thread.
    if (RS_MUTANT(kResumeOnRestoreThread) && on_restored_) on_restored_(task.input());
    std::unique_ptr<Task> restored = tasks_.TakeUpdating(id);
    const TaskIncarnation who = restored->incarnation();
    HandBack(RestoreEvent{.kind = RestoreEvent::Kind::kRestored, .incarnation = who,
                          .task = std::move(restored)});
  }
}

void RestoreThread::ReturnAllTasks() {
  std::vector<std::vector<TaskItem>> late;
  handover_.DrainRounds(late);  // CREATEs that arrived during shutdown: their tasks go back too
  for (std::vector<TaskItem>& round : late) {
    for (TaskItem& item : round) {
      if (item.task == nullptr) continue;
      HandBack(RestoreEvent{.kind = RestoreEvent::Kind::kRemoved, .incarnation = item.incarnation,
                            .task = std::move(item.task)},
               /*from_queue=*/true);
    }
  }
  while (!tasks_.updating().empty()) {
    std::unique_ptr<Task> task = tasks_.TakeUpdating(tasks_.updating().begin()->first);
    reader_->Unregister(task->state_manager().ChangelogPartitions(), UnregisterReason::kShutdown);
    task->TransitionTo(TaskState::kSuspended);
    checkpoints_.BeforeHandBack(*task);
    const TaskIncarnation who = task->incarnation();
    HandBack(RestoreEvent{.kind = RestoreEvent::Kind::kRemoved, .incarnation = who,
                          .task = std::move(task)});
  }
  pause_.ReturnAll();
  RS_CHECK(tasks_.empty(), "restore thread '{}' kept tasks at shutdown", config_.name);
}

}  // namespace restoresim
