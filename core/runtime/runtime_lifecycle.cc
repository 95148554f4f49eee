// Runtime, part 3: its states and the uncaught-exception handler (runtime.h states the rules;
// runtime_state.h the transitions, Kafka's).
#include <fmt/format.h>

#include <cstdio>

#include "core/runtime/runtime.h"
#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"
#include "core/util/sim_hooks.h"

namespace restoresim {

absl::Status Runtime::SetUncaughtExceptionHandler(StreamsUncaughtExceptionHandler handler) {
  MutexLock lock(mu_);
  if (state_ != RuntimeState::kCreated) {
    return absl::FailedPreconditionError("the uncaught-exception handler is set before Start");
  }
  handler_ = std::move(handler);
  return absl::OkStatus();
}

absl::Status Runtime::SetStateListener(RuntimeStateListener listener) {
  MutexLock lock(mu_);
  if (state_ != RuntimeState::kCreated) {
    return absl::FailedPreconditionError("the state listener is set before Start");
  }
  state_listener_ = std::move(listener);
  return absl::OkStatus();
}

void Runtime::SetStateLocked(RuntimeState next) {
  const RuntimeState from = state_;
  if (from == next && next != RuntimeState::kRunning) return;
  RS_CHECK(IsValidRuntimeTransition(from, next), "runtime '{}': {} -> {} is not a transition "
           "Kafka allows", Label(), RuntimeStateName(from), RuntimeStateName(next));
  if (from == next) return;  // RUNNING -> RUNNING: allowed, not a change
  state_ = next;
  if (next == RuntimeState::kPendingShutdown || next == RuntimeState::kPendingError) {
    StopProcessingLocked();
  }
  std::vector<std::string> names;
  for (const auto& t : threads_) names.push_back(t->name());
  TraceMark("runtime", fmt::format("{} {} -> {}", Label(), RuntimeStateName(from),
                                   RuntimeStateName(next)));
  RS_OBSERVE(OnRuntimeState, Label(), from, next, names);
  state_cv_.NotifyAll();
  if (state_listener_) state_listener_(next, from);
}

void Runtime::StopProcessingLocked() {
  for (const auto& t : threads_) t->StopProcessing();
}

void Runtime::OnThreadState(StreamThread& thread, StreamThreadState from, StreamThreadState to) {
  RS_CHECK(from != to, "thread '{}' reported no change", thread.name());
  MutexLock lock(mu_);
  if (to == StreamThreadState::kDead) {
    thread_states_.erase(thread.name());
  } else {
    thread_states_[thread.name()] = to;
  }
  std::vector<StreamThreadState> states;
  for (const auto& [name, state] : thread_states_) states.push_back(state);
  const RuntimeState next = DerivedRuntimeState(state_, states);
  if (next != state_) SetStateLocked(next);
}

void Runtime::OnThreadFailed(StreamThread& thread, const absl::Status& error) {
  RS_CHECK(!error.ok() && thread.state() == StreamThreadState::kDead,
           "thread '{}' reported a failure in {}", thread.name(),
           StreamThreadStateName(thread.state()));
  StreamThreadExceptionResponse response = StreamThreadExceptionResponse::kShutdownClient;
  if (handler_) response = handler_(error);
  TraceMark("runtime", fmt::format("{} failed: {} ({})", thread.name(),
                                   StreamThreadExceptionResponseName(response),
                                   std::string(error.message())));
  // On real threads the user sees it too, as Kafka Streams logs it (the simulator's timeline has
  // the mark above).
  if (CurrentSim() == nullptr) {
    std::fprintf(stderr, "restoresim: stream thread %s failed (%s): %s\n", thread.name().c_str(),
                 std::string(StreamThreadExceptionResponseName(response)).c_str(),
                 error.ToString().c_str());
  }
  {
    MutexLock lock(mu_);
    // Failing or closing already: the thread is gone, nothing more to do.
    if (!IsRunningOrRebalancing(state_)) return;
    ++threads_failed_;
  }
  if (response == StreamThreadExceptionResponse::kReplaceThread && !enabled_) {
    ReplaceThread(thread);
    return;
  }
  if (response == StreamThreadExceptionResponse::kShutdownApplication) {
    TraceMark("cover", "SHUTDOWN_APPLICATION handled as SHUTDOWN_CLIENT");
  }
  ShutdownClientAfterFailure(thread);
}

void Runtime::ReplaceThread(StreamThread& dead) {
  StreamThread* next = nullptr;
  {
    MutexLock lock(mu_);
    if (!IsRunningOrRebalancing(state_)) return;  // Close began meanwhile
    threads_.push_back(NewThread(next_thread_index_++));
    next = threads_.back().get();
    ++threads_replaced_;
    ++replacing_;  // Close waits until it started
    RS_OBSERVE(OnThreadReplacement, Label(), next->name(), /*done=*/false);
  }
  TraceMark("cover", "stream thread replaced after a failure");
  TraceMark("runtime", fmt::format("{} replaces {}", next->name(), dead.name()));
  next->Start();
  MutexLock lock(mu_);
  --replacing_;
  RS_OBSERVE(OnThreadReplacement, Label(), next->name(), /*done=*/true);
  cycle_cv_.NotifyAll();
}

void Runtime::ShutdownClientAfterFailure(StreamThread& dead) {
  {
    MutexLock lock(mu_);
    if (!IsRunningOrRebalancing(state_)) return;  // another failure, or Close, came first
    SetStateLocked(RuntimeState::kPendingError);
  }
  TraceMark("cover", "client shut down after a thread failed");
  const TimeNs deadline = DeadlineAfter(clock_.NowNs(), 30 * kSecond);
  for (StreamThread* t : ThreadsSnapshot()) {
    if (t == &dead) continue;
    const TimeNs now = clock_.NowNs();
    (void)t->Shutdown(deadline > now ? deadline - now : 0, /*clean=*/true);
  }
  MutexLock lock(mu_);
  RS_CHECK(!thread_states_.contains(dead.name()), "failed thread '{}' is still alive",
           dead.name());
  if (!thread_states_.empty()) TraceMark("cover", "a thread did not stop before ERROR");
  SetStateLocked(RuntimeState::kError);
}

std::vector<StreamThread*> Runtime::ThreadsSnapshot() const {
  MutexLock lock(mu_);
  std::vector<StreamThread*> threads;
  for (const auto& t : threads_) threads.push_back(t.get());
  return threads;
}

size_t Runtime::thread_count() const {
  MutexLock lock(mu_);
  return threads_.size();
}

StreamThread& Runtime::thread(size_t i) {
  MutexLock lock(mu_);
  RS_CHECK_LT(i, threads_.size(), "no thread {}", i);
  return *threads_[i];
}

int64_t Runtime::threads_failed() const {
  MutexLock lock(mu_);
  return threads_failed_;
}

int64_t Runtime::threads_replaced() const {
  MutexLock lock(mu_);
  return threads_replaced_;
}

}  // namespace restoresim
