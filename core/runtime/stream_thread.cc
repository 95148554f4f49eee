#include "core/runtime/stream_thread.h"

#include <fmt/format.h>

#include "core/runtime/assignment_info.h"
#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

StreamThread::StreamThread(StreamThreadConfig config, Transport& transport, Clock& clock,
                           StateRestoreListener* listener, Atomic<uint64_t>& incarnations)
    : config_(std::move(config)), clock_(clock) {
  if (config_.streams_assignor) {
    RS_CHECK(!config_.process_id.empty(), "stream thread '{}': the Streams assignor needs a "
             "process id", config_.name);
    assignor_ = std::make_unique<StreamsGroupAssignor>(*config_.streams_assignor, clock);
  }
  RS_CHECK(config_.group_protocol == GroupProtocol::kClassic ||
               (!config_.process_id.empty() && assignor_ == nullptr),
           "stream thread '{}': a streams-group member needs a process id and no assignor",
           config_.name);
  const bool eos = config_.tasks.exactly_once;
  const IsolationLevel isolation =
      eos ? IsolationLevel::kReadCommitted : IsolationLevel::kReadUncommitted;
  consumer_ = transport.NewMainConsumer(
      config_.group, {.client_id = ConsumerId(),
                      .max_poll_records = config_.max_poll_records,
                      .auto_offset_reset = OffsetReset::kEarliest,
                      .isolation_level = isolation,
                      .assignor = assignor_.get(),
                      .group_protocol = config_.group_protocol,
                      .process_id = config_.process_id,
                      .changelog_topics = config_.changelog_topics});
  producer_ = std::make_unique<StreamsProducer>(
      transport, StreamsProducerConfig{.client_id = ProducerId(),
                                       .exactly_once = eos,
                                       .transactional_id = TransactionalId(),
                                       .transaction_timeout_ns = config_.transaction_timeout_ns});
  RestoreThreadConfig restore = config_.restore;
  restore.isolation_level = isolation;
  restore.name = config_.name + "-restore";
  restore.publish_offset_sums = assignor_ != nullptr;
  restore.metrics.task_thread_id = config_.name;  // tasks are made on the stream thread
  restore.processing = &processing_;
  restore_ = std::make_unique<RestoreThread>(transport, clock, listener, restore);
  TaskManagerConfig tasks = config_.tasks;
  tasks.clock = &clock;  // backoff between a clean close's commit attempts
  tasks.thread_name = config_.name;
  tasks_ = std::make_unique<TaskManager>(std::move(tasks), *restore_, *consumer_, *producer_,
                                         incarnations);
  // Consulted only under the mutation resume-on-restore-thread (restore_thread.h).
  restore_->SetRestoredCallback([this](const TopicPartition& input) {
    if (absl::Status s = consumer_->Resume({input}); !s.ok()) (void)s;
  });
}

std::string StreamThread::ConsumerId() const { return config_.name + "-consumer"; }
std::string StreamThread::ProducerId() const { return config_.name + "-producer"; }

void StreamThread::SetState(StreamThreadState next) {
  const StreamThreadState from = state();
  if (from == next) return;
  RS_CHECK(from != StreamThreadState::kDead, "stream thread '{}' leaves DEAD for {}", config_.name,
           StreamThreadStateName(next));
  RS_CHECK(IsValidStreamThreadTransition(from, next), "stream thread '{}': {} -> {} is not a "
           "transition Kafka allows", config_.name, StreamThreadStateName(from),
           StreamThreadStateName(next));
  state_.store(next, std::memory_order_relaxed);
  TraceMark("thread", fmt::format("{} {} -> {}", config_.name, StreamThreadStateName(from),
                                  StreamThreadStateName(next)));
  RS_OBSERVE(OnStreamThreadState, config_.name, from, next);
  if (on_state_) on_state_(*this, from, next);
}

void StreamThread::UpdateState(int64_t rebalances_before) {
  const StreamThreadState now = state();
  if (now == StreamThreadState::kPendingShutdown || now == StreamThreadState::kDead) return;
  if (tasks_->rebalances_handled() != rebalances_before) {
    SetState(StreamThreadState::kPartitionsAssigned);
  }
  if (state() != StreamThreadState::kPartitionsAssigned) return;
  // Mutation running-before-init (the condition before PR 14214): RUNNING once the restore
  // thread holds no active task, whatever still waits to be initialised or handed over.
  const bool ready = RS_MUTANT(kRunningBeforeInit) ? !tasks_->RestoreThreadHoldsActives()
                                                    : tasks_->AllAssignedActivesRunning();
  if (ready) SetState(StreamThreadState::kRunning);
}

StreamThread::~StreamThread() {
  if (thread_ != nullptr && !thread_->joined()) {
    SimNoAbortScope no_abort;
    stop_.Store(true);
    thread_->Join();
  }
}

absl::Status StreamThread::Subscribe() {
  if (state() == StreamThreadState::kCreated) SetState(StreamThreadState::kStarting);  // by hand
  if (!restore_->started()) restore_->Start();
  next_commit_ns_ = DeadlineAfter(clock_.NowNs(), config_.commit_interval_ns);
  if (assignor_ != nullptr) {
    tasks_->ScanStateDirectory();  // task directories an earlier run left
    if (absl::Status s = ReportSubscription(); !s.ok()) return s;
  }
  return consumer_->Subscribe({config_.tasks.input_topic}, tasks_.get());
}

absl::Status StreamThread::ReportSubscription() {
  RS_CHECK(assignor_ != nullptr, "stream thread '{}' reports offsets without the assignor",
           config_.name);
  SubscriptionInfo info{.process_id = config_.process_id,
                        .task_offset_sums = tasks_->TaskOffsetSums()};
  RS_OBSERVE(OnOffsetSumsReported, config_.name, info.task_offset_sums);
  return consumer_->SetSubscriptionUserData(info.Encode());
}

void StreamThread::MaybeProbingRebalance() {
  const std::optional<int64_t> at_ms = tasks_->probing_rebalance_at_ms();
  if (!at_ms || clock_.NowNs() / kMillisecond < *at_ms) return;
  tasks_->ClearProbingRebalance();
  TraceMark("cover", "probing rebalance triggered");
  // A failure is not fatal: the member rejoins at its next poll and rebalances anyway.
  if (absl::Status s = consumer_->EnforceRebalance(); !s.ok()) (void)s;
}

void StreamThread::Start() {
  RS_CHECK(thread_ == nullptr, "stream thread '{}' started twice", config_.name);
  // Its clients are its own from now on (the thread that joins it may close them).
  RS_OBSERVE(OnClientOwner, ConsumerId(), config_.name);
  RS_OBSERVE(OnClientOwner, ProducerId(), config_.name);
  SetState(StreamThreadState::kStarting);
  thread_ = std::make_unique<Thread>(config_.name, [this]() { Run(); });
}

void StreamThread::Run() {
  HoldPoint* hold = config_.hold;
  // An instance started from an image holds before it joins the group: its restore connects.
  if (hold != nullptr && hold->requested()) {
    restore_->Start();  // so that it reaches its own first safe point and holds there too
    hold->Hold(nullptr);
  }
  absl::Status status = Subscribe();
  while (status.ok() && !stop_.Load()) {
    // The safe point: between loops nothing is in flight. Commit (producer, stores,
    // checkpoints, offsets) and hold until the restore; the first poll after it reports the
    // old member's partitions lost (suspendable_transport.h).
    if (hold != nullptr && hold->requested()) {
      const bool held = hold->Hold([this]() { return tasks_->Commit(); });
      RS_CHECK(held, "stream thread '{}' saw a hold request it could not take", config_.name);
      TraceMark("cover", "stream thread held at a checkpoint");
    }
    status = RunOnce();
  }
  if (hold != nullptr) hold->Finished();
  // Without a failure callback, its last act: from here on the thread that joins it closes its
  // tasks and clients.
  SetState(StreamThreadState::kPendingShutdown);
  {
    MutexLock lock(done_mu_);
    exit_status_ = status;
    done_ = true;
    done_cv_.NotifyAll();
  }
  if (status.ok() || !on_failure_) return;
  // Failed: it closes its own tasks and clients, then the runtime's handler decides. Its failed
  // tasks were closed dirty already; the others close cleanly where their commit succeeds
  // (Kafka closes them all dirty: docs/DESIGN.md, "Kafka fidelity").
  TraceMark("cover", "stream thread failed and shut itself down");
  const TimeNs deadline = DeadlineAfter(clock_.NowNs(), config_.failure_shutdown_timeout_ns);
  (void)CompleteShutdown(deadline, /*clean=*/true, status);
  RS_CHECK(state() == StreamThreadState::kDead, "failed thread '{}' is {} after its shutdown",
           config_.name, StreamThreadStateName(state()));
  on_failure_(*this, status);
}

// Input flows while a poll brings records or some are buffered: a thread that drained its
// buffer and polls again is still processing (the flag went false between batches before, and
// the restore thread ran at full speed in those gaps: 0.71 of idle instead of 0.98).
void StreamThread::SayWhetherProcessing(bool polled_records) {
  if (config_.restore.share_while_processing_percent >= 100) return;  // nobody reads it
  const bool processing = polled_records || tasks_->HasBuffered();
  if (processing == processing_said_) return;
  processing_.Store(processing);
  processing_said_ = processing;
  RS_CHECK(processing_said_ == processing);
}

absl::Status StreamThread::RunOnce() {
  ++loops_;
  RS_OBSERVE(OnStreamLoop, config_.name, restore_->name());
  const int64_t rebalances_before = tasks_->rebalances_handled();
  // Poll without waiting while there is input to process: a loop processes at most
  // records_per_task_max records of a task, and a poll that waited its timeout with everything
  // fetched already buffered would cap processing at that many records per poll timeout (Kafka
  // Streams drains its buffers in an inner loop between polls instead).
  const TimeNs poll_timeout_ns = tasks_->HasBuffered() ? 0 : config_.poll_timeout_ns;
  if (assignor_ != nullptr) {
    if (absl::Status s = ReportSubscription(); !s.ok() && !IsRetryable(s)) return s;
  }
  absl::StatusOr<PollResult> polled = consumer_->Poll(poll_timeout_ns);
  bool got_records = false;
  if (polled.ok()) {
    got_records = polled->RecordCount() > 0;
    tasks_->Buffer(std::move(*polled));
  } else if (!IsRetryable(polled.status())) {
    return polled.status();
  }
  SayWhetherProcessing(got_records);
  if (absl::Status s = tasks_->HandOver(); !s.ok() && !absl::IsCancelled(s)) return s;
  // Mutation events-drained-late: the restore thread's events wait while input flows.
  if (!(got_records && RS_MUTANT(kEventsDrainedLate))) {
    if (absl::Status s = tasks_->HandleRestoreEvents(); !s.ok()) return s;
  }
  MaybeHandleTransactionLost();  // after the rebalance callbacks' commits and closes
  MaybeEnforceRebalanceAfterCorruption();
  UpdateState(rebalances_before);
  if (assignor_ != nullptr) MaybeProbingRebalance();
  // The client's gate: read and observed with no scheduling point between (so the oracle sees
  // exactly what the gate let through).
  if (processing_stopped_.load(std::memory_order_relaxed)) return absl::OkStatus();
  RS_OBSERVE(OnProcessBegin, config_.name);
  absl::StatusOr<size_t> processed = tasks_->Process(config_.records_per_task_max);
  if (!processed.ok()) return processed.status();
  if (*processed > 0) {
    // Metrics only: relaxed atomics, not scheduling points, so schedules do not change. The
    // clock is read only for the first record (a virtual clock read is no scheduling point
    // either).
    if (processed_.load(std::memory_order_relaxed) == 0) {
      first_processed_ns_.store(clock_.NowNs(), std::memory_order_relaxed);
    }
    processed_.fetch_add(static_cast<int64_t>(*processed), std::memory_order_relaxed);
  }
  if (clock_.NowNs() >= next_commit_ns_) {
    next_commit_ns_ = DeadlineAfter(clock_.NowNs(), config_.commit_interval_ns);
    absl::Status s = tasks_->Commit();
    // Exactly once: a transaction that could not commit is handled here, not fatal.
    if (tasks_->transaction_lost()) {
      MaybeHandleTransactionLost();
      return absl::OkStatus();
    }
    // A commit refused because the partitions moved (Kafka's CommitFailedException, i.e. a
    // task migrated) is not fatal: the next poll delivers the rebalance that explains it.
    if (!s.ok() && !IsRetryable(s) && !absl::IsFailedPrecondition(s)) return s;
  }
  MaybeHandleTransactionLost();  // a send that failed for good while processing
  MaybeEnforceRebalanceAfterCorruption();
  return absl::OkStatus();
}

void StreamThread::MaybeEnforceRebalanceAfterCorruption() {
  if (!tasks_->TakeActiveCorrupted() || !config_.tasks.exactly_once) return;
  RS_CHECK(!tasks_->transaction_lost(), "stream thread '{}': rebalance enforced with a lost "
           "transaction unhandled", config_.name);
  TraceMark("eos", "active task corrupted: rebalance enforced");
  // The member rejoins with what it holds now (Kafka's rejoin sends a fresh subscription):
  // without the corrupted task's sum, so the assignor does not take it for caught up here.
  if (assignor_ != nullptr) {
    if (absl::Status s = ReportSubscription(); !s.ok()) (void)s;  // the next loop reports again
  }
  // A failure is not fatal: the member rejoins at its next poll and rebalances anyway.
  if (absl::Status s = consumer_->EnforceRebalance(); !s.ok()) (void)s;
}

void StreamThread::MaybeHandleTransactionLost() {
  if (!tasks_->transaction_lost()) return;
  RS_CHECK(config_.tasks.exactly_once, "stream thread '{}' lost a transaction under at least "
           "once", config_.name);
  tasks_->HandleTransactionLost();
  RS_CHECK(!tasks_->transaction_lost(), "stream thread '{}': lost transaction not handled",
           config_.name);
  // A refused commit may mean the group dropped or moved past this member: a streams member
  // asks where it stands at its next poll instead of after its heartbeat interval (until then
  // every commit is refused again, and each refusal closes and re-creates its tasks: seen in
  // scenario.streams_member_fenced_while_restoring). A classic member learns it from its next
  // poll's rebalance already. Kafka Streams rejoins (unsubscribe, subscribe) on the
  // TaskMigratedException; see StreamsGroupDriver::HeartbeatNow.
  if (config_.group_protocol == GroupProtocol::kStreams) {
    if (absl::Status s = consumer_->EnforceRebalance(); !s.ok()) (void)s;  // retried by its poll
  }
  // Its actives restore again: not RUNNING until they run (as after a rebalance).
  if (state() == StreamThreadState::kRunning) SetState(StreamThreadState::kPartitionsAssigned);
}

void StreamThread::StopProcessing() {
  processing_stopped_.store(true, std::memory_order_relaxed);
  RS_OBSERVE(OnProcessingStopped, config_.name);
}

bool StreamThread::failed() const {
  MutexLock lock(done_mu_);
  return done_ && !exit_status_.ok();
}

absl::Status StreamThread::Shutdown(TimeNs timeout_ns, bool clean, bool leave_group) {
  // Two callers (a failed sibling shutting its client down, and whoever closes the runtime or
  // drives this thread) take turns: the second finds it completed.
  MutexLock shutdown_lock(shutdown_mu_);
  const TimeNs deadline = DeadlineAfter(clock_.NowNs(), timeout_ns);
  if (thread_ == nullptr && state() != StreamThreadState::kDead) {
    SetState(StreamThreadState::kPendingShutdown);  // driven by hand: no loop to end it
  }
  stop_.Store(true);
  absl::Status result;
  if (thread_ != nullptr) {
    MutexLock lock(done_mu_);
    while (!done_) {
      if (!done_cv_.WaitUntil(done_mu_, clock_, deadline)) break;
    }
    if (!done_) {
      return absl::DeadlineExceededError(
          fmt::format("stream thread '{}' did not stop in time", config_.name));
    }
    result = exit_status_;
  }
  if (thread_ != nullptr && !thread_->joined()) thread_->Join();
  // Shut down already (it failed and shut itself down, its error handed to the failure
  // callback; or an earlier Shutdown): nothing more to report.
  if (completed_) return absl::OkStatus();
  return CompleteShutdown(deadline, clean, result, leave_group);
}

void StreamThread::LeaveGroup() {
  RS_CHECK(completed_, "stream thread '{}' leaves the group before its shutdown completed",
           config_.name);
  if (left_group_) return;
  left_group_ = true;
  consumer_->Close();
}

absl::Status StreamThread::CompleteShutdown(TimeNs deadline, bool clean, absl::Status result,
                                            bool leave_group) {
  RS_CHECK(!completed_, "stream thread '{}' completed its shutdown twice", config_.name);
  completed_ = true;
  const TimeNs now = clock_.NowNs();
  absl::Status restore = restore_->Shutdown(deadline > now ? deadline - now : 0);
  if (result.ok()) result = restore;
  if (absl::Status s = tasks_->CloseAll(clean && restore.ok()); result.ok() && !s.ok()) {
    result = s;
  }
  if (leave_group) {
    left_group_ = true;
    consumer_->Close();
  }
  producer_->Close();
  SetState(StreamThreadState::kDead);
  RS_CHECK(tasks_->running().empty() && tasks_->in_restore().empty(),
           "stream thread '{}' is DEAD with tasks open", config_.name);
  return result;
}

}  // namespace restoresim
