// VirtualClock: the Clock port served by the current simulation's virtual time. Time stands
// still while any simulated thread can run and jumps to the earliest deadline when all are
// blocked, so sleeps and timeouts cost no real time and replay exactly.
//
// Thread-safety: use only from simulated threads (it reads CurrentSim()).
#ifndef RESTORESIM_SIM_VIRTUAL_CLOCK_H_
#define RESTORESIM_SIM_VIRTUAL_CLOCK_H_

#include "core/sync/clock.h"
#include "core/sync/condvar.h"
#include "core/util/check.h"

namespace restoresim::sim {

class VirtualClock final : public Clock {
 public:
  TimeNs NowNs() override { return Sim()->NowNs(); }

  void SleepUntil(TimeNs deadline_ns) override {
    SimHooks* sim = Sim();
    while (sim->NowNs() < deadline_ns) {
      if (sim->Block(nullptr, SimOp::kSleep, 0, deadline_ns) == SimWake::kAborting) return;
    }
  }

  bool WaitUntil(CondVar& cv, Mutex& mu, TimeNs deadline_ns) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return cv.WaitWithSimDeadline(mu, deadline_ns);
  }

 private:
  static SimHooks* Sim() {
    SimHooks* sim = CurrentSim();
    RS_CHECK(sim != nullptr, "VirtualClock used outside a simulation");
    return sim;
  }
};

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_VIRTUAL_CLOCK_H_
