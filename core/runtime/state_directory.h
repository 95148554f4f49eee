// StateDirectory (Kafka Streams' StateDirectory): the task directories of one runtime instance,
// shared by all its stream threads. A task directory is locked by the one state manager that
// has its stores open; another thread's incarnation of the same task waits (its
// RegisterStores fails with Unavailable and is retried next round) until the lock is released.
//
// Why: when a task moves between two stream threads of one instance, the old thread may still
// be closing it — its restore thread can hold the task until a CLOSE is applied — while the
// new thread creates its own incarnation. Without the lock both open the same stores (found by
// the oracle's single_owner check on scenario.restore_then_process with two threads).
//
// Thread-safety: thread-safe.
#ifndef RESTORESIM_CORE_RUNTIME_STATE_DIRECTORY_H_
#define RESTORESIM_CORE_RUNTIME_STATE_DIRECTORY_H_

#include <cstdint>
#include <map>
#include <string>

#include "core/sync/mutex.h"

namespace restoresim {

class StateDirectory {
 public:
  // A token naming one lock holder (a state manager), unique within this directory.
  uint64_t NewToken();
  // Locks `task_dir` for `token`; true if it is now held by token (also when it already was).
  bool TryLock(const std::string& task_dir, uint64_t token);
  // Releases the lock if `token` holds it.
  void Unlock(const std::string& task_dir, uint64_t token);
  // The holder's token, or 0 (tests).
  uint64_t Holder(const std::string& task_dir) const;

 private:
  mutable Mutex mu_{"state_directory"};
  uint64_t next_token_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::string, uint64_t> locks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_STATE_DIRECTORY_H_
