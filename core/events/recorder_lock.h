// RecorderLock: the EventRecorder's lock, taken on real threads only. Under the simulator every
// event comes from the one OS thread that runs the run, so there is nothing to exclude; and a
// simulated thread that fails the run inside the sink may be abandoned, never unwound (a
// failure inside a SimNoAbortScope), which must not leave a real lock held for the threads
// torn down after it. (The annotations describe the real-thread case, the one that needs it.)
//
// Thread-safety: a scoped lock; used by event_recorder*.cc only.
#ifndef RESTORESIM_CORE_EVENTS_RECORDER_LOCK_H_
#define RESTORESIM_CORE_EVENTS_RECORDER_LOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "core/util/sim_hooks.h"

namespace restoresim::events {

class ABSL_SCOPED_LOCKABLE RecorderLock {
 public:
  explicit RecorderLock(absl::Mutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
      : mu_(CurrentSim() == nullptr ? &mu : nullptr) {
    if (mu_ != nullptr) mu_->Lock();
  }
  ~RecorderLock() ABSL_UNLOCK_FUNCTION() {
    if (mu_ != nullptr) mu_->Unlock();
  }
  RecorderLock(const RecorderLock&) = delete;
  RecorderLock& operator=(const RecorderLock&) = delete;

 private:
  absl::Mutex* const mu_;
};

}  // namespace restoresim::events

#endif  // RESTORESIM_CORE_EVENTS_RECORDER_LOCK_H_
