#include "core/runtime/checkpoint_signal.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "core/util/sim_hooks.h"

namespace restoresim {

absl::StatusOr<std::unique_ptr<CheckpointSignalHandler>> CheckpointSignalHandler::Install(
    Runtime& runtime, int signo, std::function<absl::Status()> image) {
  if (CurrentSim() != nullptr) {
    return absl::FailedPreconditionError(
        "the signal trigger is for real runs; the simulator notifies through its notifier");
  }
  if (signo <= 0 || signo >= NSIG || signo == SIGKILL || signo == SIGSTOP) {
    return absl::InvalidArgumentError(fmt::format("signal {} cannot be waited for", signo));
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signo);
  if (int err = pthread_sigmask(SIG_BLOCK, &set, nullptr); err != 0) {
    return absl::InternalError(fmt::format("pthread_sigmask: {}", std::strerror(err)));
  }
  std::unique_ptr<CheckpointSignalHandler> h(
      new CheckpointSignalHandler(runtime, signo, std::move(image)));
  h->thread_ = std::make_unique<Thread>("checkpoint-signal", [p = h.get()]() { p->Run(); });
  while (!h->started_.load()) {
  }  // the helper's id is needed to stop it (a handful of instructions away)
  return h;
}

CheckpointSignalHandler::CheckpointSignalHandler(Runtime& runtime, int signo,
                                                 std::function<absl::Status()> image)
    : runtime_(runtime), signo_(signo), image_(std::move(image)) {}

CheckpointSignalHandler::~CheckpointSignalHandler() {
  stop_.store(true);
  pthread_kill(helper_, signo_);  // wakes the sigwait; blocked elsewhere, so it only wakes
  thread_->Join();
}

absl::Status CheckpointSignalHandler::last_status() const {
  MutexLock lock(mu_);
  return last_;
}

absl::Status CheckpointSignalHandler::Cycle() {
  absl::Status s = runtime_.Checkpoint();
  if (!s.ok()) return s;  // abandoned: every resource already restored
  absl::Status imaged = image_ ? image_() : absl::OkStatus();
  absl::Status restored = runtime_.Restore();
  if (!imaged.ok()) return imaged;
  return restored;
}

void CheckpointSignalHandler::Run() {
  helper_ = pthread_self();
  started_.store(true);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signo_);
  while (true) {
    int got = 0;
    if (sigwait(&set, &got) != 0) continue;
    if (stop_.load()) return;
    absl::Status s = Cycle();
    {
      MutexLock lock(mu_);
      last_ = s;
    }
    cycles_.fetch_add(1);
  }
}

}  // namespace restoresim
