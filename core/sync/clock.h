// The clock port. The clock owns every wait: sleeps, timed condition waits, backoffs and poll
// timeouts all go through it, so a virtual clock makes every timeout synthetic (RocksDB's
// SystemClock::TimedWait, FoundationDB's delay()). Time never goes backwards; both clocks
// check it.
//
// The interface lives in core/sync, beside the primitives whose timed waits it owns
// (CondVar::WaitUntil, BlockingQueue::PopUntil); the real clock is a port adapter
// (core/port/system_clock.h), the virtual one is the simulator's (sim/virtual_clock.h).
//
// Thread-safety: implementations are safe to call from any thread of the world they serve
// (OS threads for SystemClock, simulated threads for the simulator's VirtualClock).
#ifndef RESTORESIM_CORE_SYNC_CLOCK_H_
#define RESTORESIM_CORE_SYNC_CLOCK_H_

#include <cstdint>

#include "core/sync/mutex.h"
#include "core/util/sim_hooks.h"

namespace restoresim {

class CondVar;

inline constexpr TimeNs kNanosecond = 1;
inline constexpr TimeNs kMicrosecond = 1000;
inline constexpr TimeNs kMillisecond = 1000 * kMicrosecond;
inline constexpr TimeNs kSecond = 1000 * kMillisecond;

// Deadline `duration_ns` after `now_ns`, saturating at kNoDeadline.
constexpr TimeNs DeadlineAfter(TimeNs now_ns, TimeNs duration_ns) {
  return duration_ns >= kNoDeadline - now_ns ? kNoDeadline : now_ns + duration_ns;
}

class Clock {
 public:
  virtual ~Clock() = default;

  // Monotonic time in nanoseconds since this clock's epoch.
  virtual TimeNs NowNs() = 0;
  // Returns once NowNs() >= deadline_ns.
  virtual void SleepUntil(TimeNs deadline_ns) = 0;
  // REQUIRES: mu held. Waits on cv until notified, woken spuriously, or NowNs() reaches
  // deadline_ns; re-acquires mu before returning. Returns false iff the deadline passed.
  virtual bool WaitUntil(CondVar& cv, Mutex& mu, TimeNs deadline_ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) = 0;

  void SleepFor(TimeNs duration_ns) { SleepUntil(DeadlineAfter(NowNs(), duration_ns)); }
  bool WaitFor(CondVar& cv, Mutex& mu, TimeNs duration_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return WaitUntil(cv, mu, DeadlineAfter(NowNs(), duration_ns));
  }
};

// Forwards every call to another clock; override one method in a test (LevelDB's EnvWrapper).
class ClockWrapper : public Clock {
 public:
  explicit ClockWrapper(Clock* target) : target_(target) {}
  TimeNs NowNs() override { return target_->NowNs(); }
  void SleepUntil(TimeNs deadline_ns) override { target_->SleepUntil(deadline_ns); }
  bool WaitUntil(CondVar& cv, Mutex& mu, TimeNs deadline_ns) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return target_->WaitUntil(cv, mu, deadline_ns);
  }
  Clock* target() const { return target_; }

 private:
  Clock* target_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_SYNC_CLOCK_H_
