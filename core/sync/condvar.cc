#include "core/sync/condvar.h"

#include "absl/time/time.h"
#include "core/sync/tsan_annotations.h"
#include "core/util/check.h"

namespace restoresim {

uint32_t CondVar::SimId(SimHooks* sim) {
  const uint64_t epoch_before = sim_state_.epoch;
  const uint32_t id = sim->Id(sim_state_, SimObjectKind::kCondVar, name_);
  if (sim_state_.epoch != epoch_before) sim_waiters_.waiters.clear();
  return id;
}

void CondVar::Wait(Mutex& mu) {
  if (SimHooks* sim = CurrentSim()) {
    SimWait(sim, mu, kNoDeadline);
    return;
  }
  RS_TSAN_RELEASE(&mu);
  cv_.Wait(&mu.mu_);
  RS_TSAN_ACQUIRE(&mu);
}

bool CondVar::WaitWithRealTimeout(Mutex& mu, TimeNs timeout_ns) {
  RS_CHECK(CurrentSim() == nullptr, "real-time wait inside a simulation");
  RS_TSAN_RELEASE(&mu);
  const bool timed_out = cv_.WaitWithTimeout(&mu.mu_, absl::Nanoseconds(timeout_ns));
  RS_TSAN_ACQUIRE(&mu);
  return !timed_out;
}

bool CondVar::WaitWithSimDeadline(Mutex& mu, TimeNs deadline_ns) {
  SimHooks* sim = CurrentSim();
  RS_CHECK(sim != nullptr, "virtual-time wait outside a simulation");
  return SimWait(sim, mu, deadline_ns);
}

bool CondVar::SimWait(SimHooks* sim, Mutex& mu, TimeNs deadline_ns) {
  const uint32_t id = SimId(sim);
  mu.AssertHeld();
  sim->Point(SimOp::kCondWait, id);
  SimWake wake = SimWake::kNotified;
  if (sim->SpuriousWakeup(id)) {
    // Release and re-acquire without waiting for a notification: every other thread may run
    // in between, exactly as after a real spurious wake-up.
    mu.SimUnlock(sim, /*scheduling_point=*/true);
  } else {
    mu.SimUnlock(sim, /*scheduling_point=*/false);  // atomically with starting to wait
    wake = sim->Block(&sim_waiters_, SimOp::kCondWait, id, deadline_ns);
  }
  mu.SimLock(sim);
  return wake != SimWake::kTimedOut;
}

void CondVar::NotifyOne() {
  if (SimHooks* sim = CurrentSim()) {
    const uint32_t id = SimId(sim);
    sim->Point(SimOp::kCondNotify, id);
    sim->WakeOne(sim_waiters_, id);
    return;
  }
  cv_.Signal();
}

void CondVar::NotifyAll() {
  if (SimHooks* sim = CurrentSim()) {
    const uint32_t id = SimId(sim);
    sim->Point(SimOp::kCondNotify, id);
    sim->WakeAll(sim_waiters_, id);
    return;
  }
  cv_.SignalAll();
}

}  // namespace restoresim
