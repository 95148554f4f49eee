#include "core/runtime/stream_thread.h"

#include <fmt/format.h>

#include "core/util/check.h"

namespace restoresim {

StreamThread::StreamThread(StreamThreadConfig config, Transport& transport, Clock& clock,
                           StateRestoreListener* listener, Atomic<uint64_t>& incarnations)
    : config_(std::move(config)), clock_(clock) {
  consumer_ = transport.NewMainConsumer(
      config_.group, {.client_id = config_.name + "-consumer",
                      .max_poll_records = config_.max_poll_records,
                      .auto_offset_reset = OffsetReset::kEarliest});
  producer_ = transport.NewProducer(config_.name + "-producer");
  RestoreThreadConfig restore = config_.restore;
  restore.name = config_.name + "-restore";
  restore_ = std::make_unique<RestoreThread>(transport, clock, listener, restore);
  TaskManagerConfig tasks = config_.tasks;
  tasks.clock = &clock;  // backoff between a clean close's commit attempts
  tasks_ = std::make_unique<TaskManager>(std::move(tasks), *restore_, *consumer_, *producer_,
                                         incarnations);
}

StreamThread::~StreamThread() {
  if (thread_ != nullptr && !thread_->joined()) {
    SimNoAbortScope no_abort;
    stop_.Store(true);
    thread_->Join();
  }
}

absl::Status StreamThread::Subscribe() {
  restore_->Start();
  next_commit_ns_ = DeadlineAfter(clock_.NowNs(), config_.commit_interval_ns);
  return consumer_->Subscribe({config_.tasks.input_topic}, tasks_.get());
}

void StreamThread::Start() {
  RS_CHECK(thread_ == nullptr, "stream thread '{}' started twice", config_.name);
  thread_ = std::make_unique<Thread>(config_.name, [this]() { Run(); });
}

void StreamThread::Run() {
  absl::Status status = Subscribe();
  while (status.ok() && !stop_.Load()) status = RunOnce();
  MutexLock lock(done_mu_);
  exit_status_ = status;
  done_ = true;
  done_cv_.NotifyAll();
}

absl::Status StreamThread::RunOnce() {
  ++loops_;
  // Poll without waiting while there is input to process.
  absl::StatusOr<PollResult> polled = consumer_->Poll(config_.poll_timeout_ns);
  if (polled.ok()) {
    tasks_->Buffer(std::move(*polled));
  } else if (!IsRetryable(polled.status())) {
    return polled.status();
  }
  if (absl::Status s = tasks_->HandOver(); !s.ok() && !absl::IsCancelled(s)) return s;
  if (absl::Status s = tasks_->HandleRestoreEvents(); !s.ok()) return s;
  absl::StatusOr<size_t> processed = tasks_->Process(config_.records_per_task_max);
  if (!processed.ok()) return processed.status();
  if (clock_.NowNs() >= next_commit_ns_) {
    next_commit_ns_ = DeadlineAfter(clock_.NowNs(), config_.commit_interval_ns);
    absl::Status s = tasks_->Commit();
    // A commit refused because the partitions moved (Kafka's CommitFailedException, i.e. a
    // task migrated) is not fatal: the next poll delivers the rebalance that explains it.
    if (!s.ok() && !IsRetryable(s) && !absl::IsFailedPrecondition(s)) return s;
  }
  return absl::OkStatus();
}

bool StreamThread::failed() const {
  MutexLock lock(done_mu_);
  return done_ && !exit_status_.ok();
}

absl::Status StreamThread::Shutdown(TimeNs timeout_ns, bool clean) {
  const TimeNs deadline = DeadlineAfter(clock_.NowNs(), timeout_ns);
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
  const TimeNs now = clock_.NowNs();
  absl::Status restore = restore_->Shutdown(deadline > now ? deadline - now : 0);
  if (result.ok()) result = restore;
  if (absl::Status s = tasks_->CloseAll(clean && restore.ok()); result.ok() && !s.ok()) {
    result = s;
  }
  consumer_->Close();
  producer_->Close();
  return result;
}

}  // namespace restoresim
