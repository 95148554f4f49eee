#include "core/runtime/hold_point.h"

#include "core/util/check.h"

namespace restoresim {

void HoldPoint::Request() {
  MutexLock lock(mu_);
  // Already requested or holding: an instance started from an image requests its holds before
  // its threads run, then checkpoints (which requests them again).
  if (state_ != State::kRunning) return;
  state_ = State::kRequested;
  prepared_ = absl::OkStatus();
  requested_.store(true, std::memory_order_relaxed);
}

absl::Status HoldPoint::AwaitHeld() {
  MutexLock lock(mu_);
  while (state_ == State::kRequested) cv_.Wait(mu_);
  RS_CHECK(state_ == State::kHeld || state_ == State::kFinished,
           "hold of '{}' awaited without a request", name_);
  return prepared_;
}

void HoldPoint::Release() {
  MutexLock lock(mu_);
  requested_.store(false, std::memory_order_relaxed);
  if (state_ == State::kFinished) return;
  RS_CHECK(state_ == State::kHeld, "hold of '{}' released while not held", name_);
  state_ = State::kRunning;
  cv_.NotifyAll();
}

bool HoldPoint::Hold(const std::function<absl::Status()>& prepare) {
  {
    MutexLock lock(mu_);
    if (state_ != State::kRequested) return false;
  }
  // Outside the lock: preparing may take long and make broker calls (the transport is
  // suspended only after every thread holds).
  absl::Status prepared = prepare ? prepare() : absl::OkStatus();
  MutexLock lock(mu_);
  RS_CHECK(state_ == State::kRequested, "hold of '{}' changed while preparing", name_);
  prepared_ = std::move(prepared);
  state_ = State::kHeld;
  cv_.NotifyAll();
  while (state_ == State::kHeld) cv_.Wait(mu_);
  return true;
}

void HoldPoint::Finished() {
  MutexLock lock(mu_);
  state_ = State::kFinished;
  requested_.store(false, std::memory_order_relaxed);
  cv_.NotifyAll();
}

}  // namespace restoresim
