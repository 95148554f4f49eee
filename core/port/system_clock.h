// The production clock: the OS monotonic clock (CLOCK_MONOTONIC via std::chrono::steady_clock)
// and real timed waits. Using it inside a simulation is a bug the clock reports: simulated
// code must use the simulation's virtual clock.
//
// Thread-safety: thread-safe.
#ifndef RESTORESIM_CORE_PORT_SYSTEM_CLOCK_H_
#define RESTORESIM_CORE_PORT_SYSTEM_CLOCK_H_

#include "core/sync/clock.h"

namespace restoresim {

class SystemClock final : public Clock {
 public:
  // The process-wide instance.
  static SystemClock* Default();

  TimeNs NowNs() override;
  void SleepUntil(TimeNs deadline_ns) override;
  bool WaitUntil(CondVar& cv, Mutex& mu, TimeNs deadline_ns) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_PORT_SYSTEM_CLOCK_H_
