// InitBackoff: a stream thread's backoff for initialising tasks whose directory is locked
// (another thread's incarnation still closes it). Kafka backs off task initialisation
// exponentially; here the backoff doubles from init_backoff_ns up to init_backoff_ns_max per
// task, and a task without a clock is retried every round.
//
// Thread-safety: its stream thread only.
#ifndef RESTORESIM_CORE_RUNTIME_INIT_BACKOFF_H_
#define RESTORESIM_CORE_RUNTIME_INIT_BACKOFF_H_

#include <map>

#include "core/runtime/task_id.h"
#include "core/sync/clock.h"

namespace restoresim {

class InitBackoff {
 public:
  InitBackoff(Clock* clock, TimeNs init_backoff_ns, TimeNs init_backoff_ns_max);

  // Whether `id`'s initialisation waits out its backoff.
  bool BackingOff(TaskId id) const;
  // `id`'s directory was locked: starts or doubles its backoff.
  void NoteLocked(TaskId id);
  // `id` initialised, or its incarnation is gone: the next one starts without a backoff.
  void Clear(TaskId id) { backoffs_.erase(id); }
  void ClearAll() { backoffs_.clear(); }

 private:
  struct Backoff {
    TimeNs next_attempt_ns = 0;
    TimeNs backoff_ns = 0;
  };
  Clock* const clock_;
  const TimeNs init_backoff_ns_;
  const TimeNs init_backoff_ns_max_;
  std::map<TaskId, Backoff> backoffs_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_INIT_BACKOFF_H_
