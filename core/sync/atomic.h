// Atomic<T>: std::atomic<T> whose every operation is a scheduling point under the simulator,
// so the strategy can interleave other threads between a load and a dependent store. A Load is
// announced as a read (SimHooks::ReadPoint), everything else as a possible write; the trace
// records both as SimOp::kAtomic.
//
// Thread-safety: thread-safe (sequentially consistent).
#ifndef RESTORESIM_CORE_SYNC_ATOMIC_H_
#define RESTORESIM_CORE_SYNC_ATOMIC_H_

#include <atomic>

#include "core/util/sim_hooks.h"

namespace restoresim {

template <typename T>
class Atomic {
 public:
  explicit Atomic(T initial = T{}, const char* name = nullptr) : value_(initial), name_(name) {}
  Atomic(const Atomic&) = delete;
  Atomic& operator=(const Atomic&) = delete;

  T Load() const {
    ReadPoint();
    return value_.load();
  }
  void Store(T v) {
    Point();
    value_.store(v);
  }
  T Exchange(T v) {
    Point();
    return value_.exchange(v);
  }
  bool CompareExchange(T& expected, T desired) {
    Point();
    return value_.compare_exchange_strong(expected, desired);
  }
  T FetchAdd(T delta) {
    Point();
    return value_.fetch_add(delta);
  }
  T FetchSub(T delta) {
    Point();
    return value_.fetch_sub(delta);
  }

 private:
  // Every operation but Load may write (a failed CompareExchange included, conservatively).
  void Point() const {
    if (SimHooks* sim = CurrentSim()) {
      sim->Point(SimOp::kAtomic, sim->Id(sim_state_, SimObjectKind::kAtomic, name_));
    }
  }
  // The same point and trace event as Point(), marked as a pure read for POS.
  void ReadPoint() const {
    if (SimHooks* sim = CurrentSim()) {
      sim->ReadPoint(SimOp::kAtomic, sim->Id(sim_state_, SimObjectKind::kAtomic, name_));
    }
  }

  std::atomic<T> value_;
  const char* name_;
  mutable SimObjectState sim_state_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_SYNC_ATOMIC_H_
