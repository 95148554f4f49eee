// StreamThread: one of a runtime's processing threads, with its own main consumer (a group
// member), producer, task manager and restore thread (1:1, as in the seed design). Its loop,
// RunOnce():
//   1. poll the main consumer (rebalance callbacks run here and reshape the tasks);
//   2. hand removed tasks, then newly initialised ones, to the restore thread (one round);
//   3. take back what the restore thread returned (restored -> RUNNING; corruption: close
//      dirty, wipe, revive);
//   4. process every running task that has input: a restored task does not wait for others;
//   5. commit on the commit interval.
// Under exactly_once_v2 its producer is transactional (streams_producer.h: transactional.id
// "<application.id>-<thread name>"), both its consumers read committed, and a transaction lost
// anywhere in the loop (a failed commit or send, a running task closed dirty mid-transaction)
// is handled before anything processes or commits again (TaskManager::HandleTransactionLost):
// never a reason for the thread to fail.
// Its state (stream_thread_state.h) is RUNNING only while every active task it is assigned
// runs.
//
// Failure (Kafka's StreamThread.run catching what runOnce threw): a loop that stops on an error
// it cannot handle ends the thread; with a failure callback set, the dying thread completes its
// own shutdown (its restore thread stopped, every task closed dirty, its clients closed: DEAD)
// and then calls the callback on itself — where the runtime's uncaught-exception handler
// decides what happens next (runtime.h). Without one, whoever calls Shutdown does that work.
//
// Thread-safety: Start/Shutdown from the owner; everything else on the stream thread (or, for
// tests, on whichever thread calls RunOnce without Start).
#ifndef RESTORESIM_CORE_RUNTIME_STREAM_THREAD_H_
#define RESTORESIM_CORE_RUNTIME_STREAM_THREAD_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/runtime/hold_point.h"
#include "core/runtime/restore_thread.h"
#include "core/runtime/stream_thread_state.h"
#include "core/runtime/streams_group_assignor.h"
#include "core/runtime/streams_producer.h"
#include "core/runtime/task_manager.h"
#include "core/sync/atomic.h"
#include "core/sync/clock.h"
#include "core/sync/thread.h"

namespace restoresim {

struct StreamThreadConfig {
  std::string name = "stream-thread-1";
  std::string group;                      // application.id
  TimeNs poll_timeout_ns = 100 * kMillisecond;
  TimeNs commit_interval_ns = 1 * kSecond;  // commit.interval.ms
  size_t records_per_task_max = 100;        // per loop, so one task cannot starve the others
  int32_t max_poll_records = 1000;          // main consumer's max.poll.records
  TaskManagerConfig tasks;
  RestoreThreadConfig restore;
  // Checkpoint/restore (hold_point.h): where this thread and its restore thread hold; null
  // when the runtime has checkpoints off.
  HoldPoint* hold = nullptr;
  // How long a failed thread's own shutdown may wait for its restore thread.
  TimeNs failure_shutdown_timeout_ns = 30 * kSecond;
  // The Streams assignor (streams_group_assignor.h), or none (the group's default assignment
  // or a scenario's). With it the main consumer offers it to the group, the thread sets its
  // SubscriptionInfo (process_id, its task offset sums) before Subscribe and every poll, and
  // triggers the probing rebalances its assignments schedule (Kafka's enforceRebalance).
  std::optional<StreamsGroupAssignorConfig> streams_assignor;
  std::string process_id;  // its instance's (KafkaStreams' process id); required with it
  // Kafka's group.protocol: under kStreams the main consumer is a streams-group member
  // (transport.h) that tells the group process_id (required then) and these changelogs.
  GroupProtocol group_protocol = GroupProtocol::kClassic;
  std::vector<std::string> changelog_topics;
  // Exactly once: the producer's transactional.id (empty: "<group>-<name>"; a runtime gives
  // Kafka's "<application.id>-<process id>-<thread index>", Runtime::TransactionalId).
  std::string transactional_id;
  // Exactly once: the producer's transaction.timeout.ms (Kafka Streams sets 10 s; an
  // application may override it as producer.transaction.timeout.ms).
  TimeNs transaction_timeout_ns = 10 * kSecond;
};

class StreamThread {
 public:
  StreamThread(StreamThreadConfig config, Transport& transport, Clock& clock,
               StateRestoreListener* listener, Atomic<uint64_t>& incarnations);
  ~StreamThread();

  // Called on the thread itself: with every state change (from, to), and once it failed and
  // completed its shutdown (the error that stopped its loop). Set before Start.
  using StateCallback = std::function<void(StreamThread&, StreamThreadState, StreamThreadState)>;
  using FailureCallback = std::function<void(StreamThread&, const absl::Status&)>;
  void SetStateCallback(StateCallback callback) { on_state_ = std::move(callback); }
  void SetFailureCallback(FailureCallback callback) { on_failure_ = std::move(callback); }

  // Joins the group and starts both threads.
  void Start();
  // Stops the loop, shuts the restore thread down (within timeout_ns), closes every task
  // (cleanly unless `clean` is false) and leaves the group (unless `leave_group` is false:
  // then LeaveGroup does, later); of a thread that completed its shutdown already (after a
  // failure, its error handed to the failure callback; or by an earlier Shutdown), only joins
  // it and returns OK. Always returns. Calls are not concurrent with each other (the runtime
  // serialises them).
  absl::Status Shutdown(TimeNs timeout_ns, bool clean = true, bool leave_group = true);
  // Closes the main consumer (the member leaves the group) if Shutdown did not. A client
  // closing several threads commits every thread's tasks before any member leaves: a leave
  // starts a generation, and a thread still to commit would send its transaction's offsets
  // with the old one (refused under exactly once: ILLEGAL_GENERATION, the close gone dirty).
  // Kafka Streams' members do not leave the group on close at all
  // (internal.leave.group.on.close=false). REQUIRES: Shutdown completed.
  void LeaveGroup();

  // Closes its processing gate: from now on no RunOnce begins processing (its client is
  // shutting down or failed). Any thread may call it (a relaxed atomic: no scheduling point).
  void StopProcessing();

  // For tests driving the loop by hand: Subscribe() once, then RunOnce() repeatedly.
  absl::Status Subscribe();
  absl::Status RunOnce();

  TaskManager& task_manager() { return *tasks_; }
  // The Streams assignor its consumer offers (null without one).
  const StreamsGroupAssignor* streams_assignor() const { return assignor_.get(); }
  RestoreThread& restore_thread() { return *restore_; }
  const std::string& name() const { return config_.name; }
  // Its producer's transactional.id (exactly once; see StreamThreadConfig::transactional_id).
  std::string TransactionalId() const {
    return config_.transactional_id.empty() ? config_.group + "-" + config_.name
                                            : config_.transactional_id;
  }
  int64_t loops() const { return loops_; }
  // Whether the loop stopped on an error (it stops only on errors it cannot handle).
  bool failed() const;
  // Any thread may read it (a relaxed atomic, not a scheduling point: reading it changes no
  // schedule).
  StreamThreadState state() const { return state_.load(std::memory_order_relaxed); }
  // Input records processed so far, and the clock's time when the first was processed (-1
  // before): Kafka Streams' process-total, and what "time to first processed record" is read
  // from. Any thread may read them (relaxed atomics, as state()).
  int64_t records_processed() const { return processed_.load(std::memory_order_relaxed); }
  TimeNs first_processed_ns() const { return first_processed_ns_.load(std::memory_order_relaxed); }

 private:
  void Run();
  void SetState(StreamThreadState next);
  std::string ConsumerId() const;
  std::string ProducerId() const;
  // After a loop handled rebalances and the restore thread's events: PARTITIONS_ASSIGNED when
  // a rebalance came, RUNNING once every assigned active runs.
  void UpdateState(int64_t rebalances_before);
  // With the Streams assignor: sets the subscription's user data (its offset sums), and
  // triggers a probing rebalance that is due.
  absl::Status ReportSubscription();
  void MaybeProbingRebalance();
  // Exactly once: a lost transaction handled now (no-op otherwise).
  void MaybeHandleTransactionLost();
  // Exactly once: an active task found corrupted makes the thread rejoin the group, so that the
  // Streams assignor can move it to an instance whose standby of it is caught up instead of
  // restoring it from scratch here (Kafka's StreamThread after handleCorruption, KAFKA-12486).
  void MaybeEnforceRebalanceAfterCorruption();
  // Tells its restore thread whether its tasks have input to process (processing_), when it
  // yields to processing at all; stored only when it changes.
  void SayWhetherProcessing(bool polled_records);
  // Restore thread, tasks, clients; DEAD. Once (completed_).
  absl::Status CompleteShutdown(TimeNs deadline, bool clean, absl::Status result,
                                bool leave_group = true);

  const StreamThreadConfig config_;
  Clock& clock_;
  std::unique_ptr<StreamsGroupAssignor> assignor_;  // outlives the consumer offering it
  std::unique_ptr<MainConsumer> consumer_;
  std::unique_ptr<StreamsProducer> producer_;  // exactly_once_v2: its transactions
  // Set while its tasks have input to process (only when its restore thread yields to it:
  // RestoreThreadConfig::share_while_processing_percent below 100); the restore thread reads.
  Atomic<bool> processing_{false, "stream_processing"};
  bool processing_said_ = false;  // the last value stored in processing_
  std::unique_ptr<RestoreThread> restore_;
  std::unique_ptr<TaskManager> tasks_;
  Atomic<bool> stop_{false, "stream_stop"};
  mutable Mutex done_mu_{"stream_done_mu"};
  CondVar done_cv_{"stream_done_cv"};
  bool done_ ABSL_GUARDED_BY(done_mu_) = false;
  absl::Status exit_status_ ABSL_GUARDED_BY(done_mu_);
  std::unique_ptr<Thread> thread_;
  StateCallback on_state_;
  FailureCallback on_failure_;
  // CompleteShutdown ran: by the thread itself after a failure (read by the joiner after the
  // join), or by Shutdown.
  bool completed_ = false;
  bool left_group_ = false;  // its main consumer closed (LeaveGroup, or CompleteShutdown)
  Mutex shutdown_mu_{"stream_shutdown_mu"};  // held through Shutdown
  TimeNs next_commit_ns_ = 0;
  int64_t loops_ = 0;
  std::atomic<StreamThreadState> state_{StreamThreadState::kCreated};
  std::atomic<int64_t> processed_{0};
  std::atomic<bool> processing_stopped_{false};
  std::atomic<TimeNs> first_processed_ns_{-1};
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_STREAM_THREAD_H_
