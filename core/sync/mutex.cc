#include "core/sync/mutex.h"

#include <fmt/format.h>

#include "core/sync/tsan_annotations.h"
#include "core/util/check.h"

namespace restoresim {

uint32_t Mutex::SimId(SimHooks* sim) {
  const uint64_t epoch_before = sim_state_.epoch;
  // (Id registers on first use only; epoch_before tells whether it did.)
  const uint32_t id = sim->Id(sim_state_, SimObjectKind::kMutex, name_);
  if (sim_state_.epoch != epoch_before) {  // first use in this simulation: no stale state
    sim_owner_ = kNoSimThread;
    sim_waiters_.waiters.clear();
  }
  return id;
}

void Mutex::Lock() {
  if (SimHooks* sim = CurrentSim()) {
    SimLock(sim);
    return;
  }
  mu_.Lock();
  RS_TSAN_ACQUIRE(this);
}

void Mutex::Unlock() {
  if (SimHooks* sim = CurrentSim()) {
    SimUnlock(sim, /*scheduling_point=*/true);
    return;
  }
  RS_TSAN_RELEASE(this);
  mu_.Unlock();
}

bool Mutex::TryLock() {
  if (SimHooks* sim = CurrentSim()) {
    const uint32_t id = SimId(sim);
    sim->Point(SimOp::kMutexLock, id);
    if (sim_owner_ != kNoSimThread && !sim->Aborting()) return false;
    sim_owner_ = sim->CurrentThread();
    sim->NoteLockHeld(id, true);
    return true;
  }
  if (!mu_.TryLock()) return false;
  RS_TSAN_ACQUIRE(this);
  return true;
}

void Mutex::AssertHeld() const {
  if (SimHooks* sim = CurrentSim()) {
    if (sim->Aborting()) return;
    RS_CHECK(sim_owner_ == sim->CurrentThread(), "mutex '{}' is not held by thread '{}'",
             name_ ? name_ : "?", sim->ThreadName(sim->CurrentThread()));
    return;
  }
  mu_.AssertHeld();
}

void Mutex::SimLock(SimHooks* sim) {
  const uint32_t id = SimId(sim);
  const SimThreadId me = sim->CurrentThread();
  sim->Point(SimOp::kMutexLock, id);
  while (sim_owner_ != kNoSimThread && !sim->Aborting()) {
    if (sim_owner_ == me) {
      sim->Fail(fmt::format("deadlock: thread '{}' locks mutex '{}' (#{}) that it already holds",
                            sim->ThreadName(me), name_ ? name_ : "?", id));
    }
    sim->Block(&sim_waiters_, SimOp::kMutexLock, id, kNoDeadline);
  }
  sim_owner_ = me;
  sim->NoteLockHeld(id, true);
}

void Mutex::SimUnlock(SimHooks* sim, bool scheduling_point) {
  const uint32_t id = SimId(sim);
  if (!sim->Aborting() && sim_owner_ != sim->CurrentThread()) {
    sim->Fail(fmt::format("thread '{}' unlocks mutex '{}' (#{}) held by {}",
                          sim->ThreadName(sim->CurrentThread()), name_ ? name_ : "?", id,
                          sim_owner_ == kNoSimThread
                              ? std::string("nobody")
                              : fmt::format("'{}'", sim->ThreadName(sim_owner_))));
  }
  sim_owner_ = kNoSimThread;
  sim->NoteLockHeld(id, false);
  sim->WakeAll(sim_waiters_, id);
  if (scheduling_point) sim->Point(SimOp::kMutexUnlock, id);
}

}  // namespace restoresim
