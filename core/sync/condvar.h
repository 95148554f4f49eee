// CondVar: an absl::CondVar on OS threads; under the simulator a wait atomically releases the
// mutex and blocks, notify_one wakes a waiter of the strategy's choosing, and a wait may return
// spuriously (as the C++ standard allows) when the strategy decides so. Code must re-check its
// predicate in a loop. Timed waits go through the Clock port (Clock::WaitUntil).
//
// Thread-safety: thread-safe.
#ifndef RESTORESIM_CORE_SYNC_CONDVAR_H_
#define RESTORESIM_CORE_SYNC_CONDVAR_H_

#include "absl/synchronization/mutex.h"
#include "core/sync/clock.h"
#include "core/sync/mutex.h"

namespace restoresim {

class CondVar {
 public:
  explicit CondVar(const char* name = nullptr) : name_(name) {}
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // REQUIRES: mu held. Waits until notified or spuriously woken.
  void Wait(Mutex& mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // REQUIRES: mu held. Like Wait, with a deadline on `clock`. Returns false iff it passed.
  bool WaitUntil(Mutex& mu, Clock& clock, TimeNs deadline_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return clock.WaitUntil(*this, mu, deadline_ns);
  }
  void NotifyOne();
  void NotifyAll();

  // For Clock implementations only: the two kinds of timed wait.
  // Real threads: waits at most timeout_ns of real time. Returns false on timeout.
  bool WaitWithRealTimeout(Mutex& mu, TimeNs timeout_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Simulated threads: waits until virtual time deadline_ns. Returns false on timeout.
  bool WaitWithSimDeadline(Mutex& mu, TimeNs deadline_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

 private:
  bool SimWait(SimHooks* sim, Mutex& mu, TimeNs deadline_ns);
  uint32_t SimId(SimHooks* sim);

  absl::CondVar cv_;
  const char* name_;
  SimObjectState sim_state_;
  SimWaitList sim_waiters_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_SYNC_CONDVAR_H_
