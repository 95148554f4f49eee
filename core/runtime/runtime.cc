#include "core/runtime/runtime.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/runtime/count_topology.h"
#include "core/runtime/hold_point.h"
#include "core/runtime/process_file.h"
#include "core/runtime/runtime_observer.h"
#include "core/runtime/suspendable_transport.h"
#include "core/sync/thread.h"
#include "core/util/run_context.h"
#include "core/util/sim_hooks.h"

namespace restoresim {

// Counts restoration for the metrics and forwards every call to the user's listener.
class Runtime::MetricsListener final : public StateRestoreListener {
 public:
  explicit MetricsListener(StateRestoreListener* user) : user_(user) {}

  void OnRestoreStart(const TopicPartition& tp, std::string_view store, int64_t start,
                      int64_t end) override {
    started.FetchAdd(1);
    if (user_ != nullptr) user_->OnRestoreStart(tp, store, start, end);
  }
  void OnBatchRestored(const TopicPartition& tp, std::string_view store, int64_t batch_end,
                       int64_t records) override {
    restored.FetchAdd(records);
    batches.FetchAdd(1);
    if (user_ != nullptr) user_->OnBatchRestored(tp, store, batch_end, records);
  }
  void OnRestoreEnd(const TopicPartition& tp, std::string_view store, int64_t total) override {
    ended.FetchAdd(1);
    if (user_ != nullptr) user_->OnRestoreEnd(tp, store, total);
  }
  void OnRestoreSuspended(const TopicPartition& tp, std::string_view store,
                          int64_t total) override {
    suspended.FetchAdd(1);
    if (user_ != nullptr) user_->OnRestoreSuspended(tp, store, total);
  }

  Atomic<int64_t> started{0, "metrics_started"};
  Atomic<int64_t> restored{0, "metrics_restored"};
  Atomic<int64_t> batches{0, "metrics_batches"};
  Atomic<int64_t> ended{0, "metrics_ended"};
  Atomic<int64_t> suspended{0, "metrics_suspended"};

 private:
  StateRestoreListener* user_;
};

Runtime::Runtime(RuntimeConfig config, Transport& transport, Clock& clock, FileSystem& fs,
                 StoreOpener open_store, StateRestoreListener* listener)
    : config_(std::move(config)),
      transport_(transport),
      clock_(clock),
      fs_(fs),
      open_store_(std::move(open_store)),
      listener_(std::make_unique<MetricsListener>(listener)),
      pause_(config_.topology_name) {}

Runtime::~Runtime() {
  // A failed simulated run is being torn down: its threads are unwound, not running, and a
  // Close would wait on them forever. Their destructors join them (before the transport and
  // hold points they use).
  std::vector<std::unique_ptr<StreamThread>> threads;
  if (SimHooks* sim = CurrentSim(); sim != nullptr && sim->Aborting()) {
    {
      MutexLock lock(mu_);  // (uncontended: nothing runs)
      threads.swap(threads_);
    }
    threads.clear();  // destroyed outside the lock: a dying thread's callbacks take it
    return;
  }
  SimNoAbortScope no_abort;
  bool started;
  {
    MutexLock lock(mu_);
    started = state_ != RuntimeState::kCreated && state_ != RuntimeState::kNotRunning;
  }
  if (started) (void)Close(30 * kSecond);
  {
    MutexLock lock(mu_);
    threads.swap(threads_);
  }
  threads.clear();  // they use the suspendable transport and the hold points
}

// Kafka Streams' process id is a UUID kept in the state directory; here the checkpoint
// identity when there is one, else the state directory's (StableProcessId).
std::string Runtime::AssignorProcessId() const {
  if (!checkpoint_.process_id.empty()) return checkpoint_.process_id;
  return StableProcessId();
}

// On real threads, an unlabelled instance keeps a UUID in its state directory as Kafka Streams
// does (process_file.h: read at Start, written when missing), so two hosts with the same state.dir
// path are two processes. Before that (to 2026-12-06) the id was derived from the path only, and
// such hosts looked like one process to the broker (no standby of one on the other) and shared
// transactional ids. The simulator's instances keep the derived id: a world never gives two of
// them one path, and a file would add a disk write (and its drawable faults) to every story.
std::string Runtime::StableProcessId() const {
  return process_file_id_.empty() ? StateDirProcessId() : process_file_id_;
}

absl::Status Runtime::LoadProcessId() {
  RS_CHECK(process_file_id_.empty(), "the process file read twice");
  if (CurrentSim() != nullptr || !checkpoint_.instance.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> id = LoadOrCreateProcessId(
      fs_, config_.state_dir + "/" + config_.application_id, NewProcessUuid);
  if (!id.ok()) return id.status();
  process_file_id_ = *std::move(id);
  RS_CHECK(!process_file_id_.empty(), "an empty process id");
  return absl::OkStatus();
}

std::string Runtime::StateDirProcessId() const {
  std::string id = config_.application_id + "-" + config_.state_dir;
  for (char& ch : id) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-') ch = '_';
  }
  return id.substr(0, 200);
}

// Kafka Streams' (exactly_once_v2) is "<application.id>-<process id>-<thread index>", its process
// id kept in the state directory: live instances never share one, and a restart over the same
// state directory fences its predecessor's producer. An instance with a label (checkpoint/restore
// on: the simulator's instances) keeps "<application.id>-<thread name>", its thread names carrying
// the label, which stands for the process (so the simulated stories run as before); an instance
// without one puts its state directory in the process id's place. Found on 2026-12-06
// (KafkaEosTest.TwoInstancesNeverFenceEachOtherAndHandATaskOverCleanly): an unlabelled instance's
// id was "<application.id>-<application.id>-StreamThread-<n>", the same in every instance of an
// application, so two live instances on a real broker fenced each other while both lived.
std::string Runtime::TransactionalId(int32_t index) const {
  if (!checkpoint_.instance.empty()) return config_.application_id + "-" + ThreadName(index);
  return fmt::format("{}-{}-{}", config_.application_id, StableProcessId(), index + 1);
}

std::unique_ptr<StreamThread> Runtime::NewThread(int32_t index) {
  StreamThreadConfig c;
  c.name = ThreadName(index);
  c.transactional_id = TransactionalId(index);
  c.group = config_.application_id;
  c.poll_timeout_ns = config_.poll_ms * kMillisecond;
  c.commit_interval_ns = config_.commit_interval_ms * kMillisecond;
  c.max_poll_records = config_.max_poll_records;
  c.tasks.application_id = config_.application_id;
  c.tasks.input_topic = config_.input_topic;
  c.tasks.state_dir = config_.state_dir + "/" + config_.application_id;
  c.tasks.exactly_once = config_.exactly_once();
  c.tasks.fs = &fs_;
  c.tasks.open_store = open_store_;
  c.tasks.directory = &directory_;
  c.tasks.store_names = config_.store_names;
  c.restore.max_poll_records = config_.restore_max_poll_records;
  c.restore.share_while_processing_percent = config_.restore_share_while_processing_percent;
  // The state updater checkpoints on the commit interval (Kafka: commit.interval.ms), past
  // the offset-delta threshold; so does a periodic commit.
  c.restore.checkpoint_interval_ns = config_.commit_interval_ms * kMillisecond;
  c.restore.checkpoint_offset_delta_min = config_.checkpoint_offset_delta_min;
  c.tasks.checkpoint_offset_delta_min = config_.checkpoint_offset_delta_min;
  c.restore.task_timeout_ns = config_.task_timeout_ms * kMillisecond;
  c.tasks.task_timeout_ns = config_.task_timeout_ms * kMillisecond;
  if (config_.streams_assignor()) {
    c.streams_assignor = StreamsGroupAssignorConfig{
        .application_id = config_.application_id,
        .input_topic = config_.input_topic,
        .tasks = {.num_standby_replicas = config_.num_standby_replicas,
                  .max_warmup_replicas = config_.max_warmup_replicas,
                  .acceptable_recovery_lag = config_.acceptable_recovery_lag},
        .probing_rebalance_interval_ms = config_.probing_rebalance_interval_ms};
    if (!config_.store_names.empty()) c.streams_assignor->store_names = config_.store_names;
    c.process_id = AssignorProcessId();
  }
  if (config_.streams_group()) {
    c.group_protocol = GroupProtocol::kStreams;
    c.process_id = AssignorProcessId();
    const std::vector<std::string> stores =
        config_.store_names.empty() ? std::vector<std::string>{std::string(kCountsStoreName)}
                                    : config_.store_names;
    for (const std::string& store : stores) {
      c.changelog_topics.push_back(ChangelogTopic(config_.application_id, store));
    }
  }
  c.restore.reader.standby_listener = standby_listener_;
  c.tasks.pause = &pause_;
  c.restore.pause = &pause_;
  if (enabled_) {
    holds_.push_back(std::make_unique<HoldPoint>(c.name + "-restore"));
    c.restore.hold = holds_.back().get();
    holds_.push_back(std::make_unique<HoldPoint>(c.name));
    c.hold = holds_.back().get();
  }
  Transport& transport = suspendable_ != nullptr ? *suspendable_ : transport_;
  auto thread = std::make_unique<StreamThread>(std::move(c), transport, clock_, listener_.get(),
                                               incarnations_);
  thread->SetStateCallback([this](StreamThread& t, StreamThreadState from, StreamThreadState to) {
    OnThreadState(t, from, to);
  });
  thread->SetFailureCallback(
      [this](StreamThread& t, const absl::Status& error) { OnThreadFailed(t, error); });
  return thread;
}

absl::Status Runtime::Start() {
  if (absl::Status s = config_.Validate(); !s.ok()) return s;
  {
    MutexLock lock(mu_);
    if (state_ != RuntimeState::kCreated || directory_lock_ != nullptr) {
      return absl::FailedPreconditionError(
          fmt::format("runtime started in state {}", RuntimeStateName(state_)));
    }
  }
  // Outside mu_: file-system calls are mutation points whose hooks (a scripted crash) may look
  // at the runtime.
  absl::StatusOr<std::unique_ptr<FileLock>> directory_lock = LockStateDirectory();
  if (!directory_lock.ok()) return directory_lock.status();
  if (absl::Status s = LoadProcessId(); !s.ok()) return s;  // held by the lock: no other writer
  {
    MutexLock lock(mu_);
    if (state_ != RuntimeState::kCreated || directory_lock_ != nullptr) {
      return absl::FailedPreconditionError("runtime started twice at once");
    }
    directory_lock_ = *std::move(directory_lock);
    started_ns_ = clock_.NowNs();
    for (int32_t i = 0; i < config_.num_stream_threads; ++i) threads_.push_back(NewThread(i));
    next_thread_index_ = config_.num_stream_threads;
    SetStateLocked(RuntimeState::kRebalancing);  // Kafka's start()
  }
  if (enabled_) {
    if (absl::Status s = RegisterResources(); !s.ok()) return s;
    // An image: every thread holds at its first safe point, before it connects.
    if (checkpoint_.from_image) {
      for (auto& h : holds_) h->Request();
    }
  }
  for (StreamThread* t : ThreadsSnapshot()) t->Start();
  if (enabled_ && checkpoint_.from_image) return Checkpoint();  // the image's frozen state
  return absl::OkStatus();
}

// Shuts every thread down by `deadline` (cleanly, without leaving the group), then lets the
// stopped ones leave; names the others in `running`. Returns the first error.
absl::Status Runtime::ShutdownThreads(TimeNs deadline, std::vector<std::string>& running) {
  absl::Status first;
  std::vector<StreamThread*> stopped;
  // Every thread's tasks are closed (committed) before any member leaves the group: a leave
  // starts a generation, and a thread closed after it sent its transaction's offsets with the
  // old one — refused, the close gone dirty (scenario.eos_clean_close_restoring_after_revive,
  // pct:3 seeds 8 and 184: Close failed with ILLEGAL_GENERATION, the second thread's tasks
  // wiped). Kafka Streams' members do not leave on close (internal.leave.group.on.close).
  for (StreamThread* t : ThreadsSnapshot()) {
    const TimeNs now = clock_.NowNs();
    absl::Status s = t->Shutdown(deadline > now ? deadline - now : 0, /*clean=*/true,
                                 /*leave_group=*/false);
    if (first.ok() && !s.ok()) first = s;
    if (t->state() != StreamThreadState::kDead) {
      running.push_back(t->name());
    } else {
      stopped.push_back(t);
    }
  }
  for (StreamThread* t : stopped) t->LeaveGroup();
  return first;
}

// Observed at the call, once the waits for a checkpoint/restore cycle or a replacement are over
// (begun), and returned with its status and the client's state (the oracle's client_close).
absl::Status Runtime::Close(TimeNs timeout_ns) {
  RS_OBSERVE(OnClientCloseCalled, Label(), timeout_ns);
  const TimeNs deadline = DeadlineAfter(clock_.NowNs(), timeout_ns);
  RuntimeState at_return = RuntimeState::kCreated;  // read under mu_ (no scheduling point here)
  absl::Status s = CloseUntil(deadline, timeout_ns, at_return);
  RS_OBSERVE(OnClientClose, Label(), /*returned=*/true, timeout_ns,
             static_cast<int64_t>(s.code()), at_return);
  return s;
}

absl::Status Runtime::CloseUntil(TimeNs deadline, TimeNs timeout_ns, RuntimeState& at_return) {
  bool failed = false;
  {
    MutexLock lock(mu_);
    // A frozen instance runs nothing, its shutdown included: Close waits for the restore. A
    // replacement being started is waited for, so that it is shut down too.
    while (cycle_ || replacing_ > 0) cycle_cv_.Wait(mu_);
    RS_OBSERVE(OnClientClose, Label(), /*returned=*/false, timeout_ns, 0, state_);
    at_return = state_;
    if (state_ == RuntimeState::kNotRunning) return absl::OkStatus();
    if (state_ == RuntimeState::kCreated) {
      SetStateLocked(RuntimeState::kPendingShutdown);
      SetStateLocked(RuntimeState::kNotRunning);
      at_return = state_;
      return absl::OkStatus();
    }
    // Failing: the dying thread shuts the others down; wait for it, then join them all.
    while (state_ == RuntimeState::kPendingError) {
      if (!state_cv_.WaitUntil(mu_, clock_, deadline)) break;
    }
    failed = state_ == RuntimeState::kPendingError || state_ == RuntimeState::kError;
    // (PENDING_SHUTDOWN already: an earlier close timed out; this one waits for the threads.)
    if (!failed && state_ != RuntimeState::kPendingShutdown) {
      SetStateLocked(RuntimeState::kPendingShutdown);
    } else if (!failed) {
      TraceMark("cover", "close after a close that timed out");
    }
  }
  std::vector<std::string> running;  // threads that did not stop by the deadline
  absl::Status first = ShutdownThreads(deadline, running);
  MutexLock lock(mu_);
  at_return = state_;
  if (!running.empty()) {
    // Kafka's close(timeout) returning false: the client stays PENDING_SHUTDOWN (or
    // PENDING_ERROR) until its threads stop, and a later close waits for them again. Moving to
    // NOT_RUNNING here let a later close return at once while a thread still ran (found by
    // RealBugsTest.ACloseThatTimesOutLeavesTheClientPendingShutdownUntilItsThreadsStop).
    RS_CHECK(!first.ok(), "runtime '{}': threads still running after a clean shutdown", Label());
    if (state_ == RuntimeState::kPendingShutdown) {
      TraceMark("cover", "close timed out: the client stays PENDING_SHUTDOWN");
    }
    // Mutation close-timeout-not-running: bug 3 of issue 23, NOT_RUNNING with a thread running.
    if (RS_MUTANT(kCloseTimeoutNotRunning) && !failed) {
      SetStateLocked(RuntimeState::kNotRunning);
      at_return = state_;
    }
    return absl::DeadlineExceededError(fmt::format(
        "runtime '{}': stream threads {} did not stop within {} ms; the client stays {} (close "
        "again to wait for them): {}",
        Label(), fmt::join(running, ", "), timeout_ns / kMillisecond,
        RuntimeStateName(state_), std::string(first.message())));
  }
  if (!failed) SetStateLocked(RuntimeState::kNotRunning);
  at_return = state_;
  // As Kafka's close: the state directory is released once every thread stopped (also after
  // ERROR), so the next instance may take it.
  if (first.ok()) directory_lock_.reset();
  return first;
}

// Kafka's StateDirectory locks "<state.dir>/<application.id>/.lock" when the client is made:
// a second instance over the same directory is refused, not left to corrupt the first's
// stores. Here at Start (the constructor cannot fail).
absl::StatusOr<std::unique_ptr<FileLock>> Runtime::LockStateDirectory() {
  const std::string app_dir = config_.state_dir + "/" + config_.application_id;
  if (absl::Status s = fs_.CreateDirIfMissing(app_dir); !s.ok()) {
    return absl::Status(s.code(), fmt::format("state.dir: cannot create {}: {}", app_dir,
                                              std::string(s.message())));
  }
  absl::StatusOr<std::unique_ptr<FileLock>> lock = fs_.LockFile(app_dir + "/.lock");
  if (absl::IsAborted(lock.status())) {
    return absl::FailedPreconditionError(fmt::format(
        "state.dir: {} is locked by another instance of application '{}' (two instances cannot "
        "share one state directory; give each its own state.dir)",
        app_dir, config_.application_id));
  }
  if (!lock.ok()) {
    return absl::Status(lock.status().code(),
                        fmt::format("state.dir: cannot lock {}: {}", app_dir,
                                    std::string(lock.status().message())));
  }
  RS_CHECK(*lock != nullptr, "a lock of {} without a holder", app_dir);
  return lock;
}

RuntimeState Runtime::state() const {
  MutexLock lock(mu_);
  return state_;
}

RuntimeMetrics Runtime::Metrics() const {
  RuntimeMetrics m;
  m.records_restored = listener_->restored.Load();
  m.restore_batches = listener_->batches.Load();
  m.restores_started = listener_->started.Load();
  m.restores_ended = listener_->ended.Load();
  m.restores_suspended = listener_->suspended.Load();
  for (StreamThread* t : ThreadsSnapshot()) {
    m.remaining_records += t->restore_thread().RemainingRecords();
    m.standby_records_updated += t->restore_thread().StandbyRecordsUpdated();
    m.records_processed += t->records_processed();
    const TimeNs first = t->first_processed_ns();
    if (first >= 0 && (m.first_processed_ns < 0 || first < m.first_processed_ns)) {
      m.first_processed_ns = first;
    }
    m.stores_wiped_on_open += t->task_manager().stores_wiped_on_open();
  }
  TimeNs started;
  {
    MutexLock lock(mu_);
    started = started_ns_;
  }
  const double seconds = static_cast<double>(clock_.NowNs() - started) / kSecond;
  if (seconds > 0) {
    m.restore_rate_per_second = m.records_restored / seconds;
    m.update_rate_per_second = m.standby_records_updated / seconds;
  }
  return m;
}

absl::Status Runtime::SetStandbyUpdateListener(StandbyUpdateListener* listener) {
  MutexLock lock(mu_);
  if (state_ != RuntimeState::kCreated) {
    return absl::FailedPreconditionError("the standby update listener is set before Start");
  }
  standby_listener_ = listener;
  return absl::OkStatus();
}

std::vector<KafkaMetric> Runtime::KafkaMetrics() const {
  const TimeNs now_ns = clock_.NowNs();
  std::vector<KafkaMetric> all;
  for (StreamThread* t : ThreadsSnapshot()) {
    std::vector<KafkaMetric> of = t->restore_thread().KafkaMetrics(now_ns);
    all.insert(all.end(), std::make_move_iterator(of.begin()), std::make_move_iterator(of.end()));
  }
  return all;
}

}  // namespace restoresim
