// Mutex: an absl::Mutex on OS threads; a scheduling point under the simulator (Shuttle-style:
// lock is a point, unlock lets waiters contend, re-locking a held mutex is reported as a
// deadlock, unlocking one you do not hold is reported as a bug).
//
// Thread-safety: thread-safe, annotated for clang's -Wthread-safety.
#ifndef RESTORESIM_CORE_SYNC_MUTEX_H_
#define RESTORESIM_CORE_SYNC_MUTEX_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "core/util/sim_hooks.h"

namespace restoresim {

class CondVar;

class ABSL_LOCKABLE Mutex {
 public:
  // `name` (a string literal) labels the mutex in traces and deadlock reports.
  explicit Mutex(const char* name = nullptr) : name_(name) {}
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION();
  void Unlock() ABSL_UNLOCK_FUNCTION();
  [[nodiscard]] bool TryLock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true);
  // Checks (always on) that the calling thread holds this mutex.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK();

  const char* name() const { return name_; }

 private:
  friend class CondVar;

  // Simulation mode: REQUIRES CurrentSim() == sim.
  void SimLock(SimHooks* sim);
  void SimUnlock(SimHooks* sim, bool scheduling_point);
  uint32_t SimId(SimHooks* sim);

  absl::Mutex mu_;
  const char* name_;
  // Simulation state: only touched by the one OS thread running the simulation.
  SimObjectState sim_state_;
  SimThreadId sim_owner_ = kNoSimThread;
  SimWaitList sim_waiters_;
};

// RAII lock holder.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_SYNC_MUTEX_H_
