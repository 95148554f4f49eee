// SharedCell<T>: a value published by one thread and read as an immutable snapshot by others
// (the restore thread publishes its completed changelogs; the stream thread reads them). Reads
// never see a half-written value; each publish bumps a version.
//
// Thread-safety: thread-safe.
#ifndef RESTORESIM_CORE_SYNC_SHARED_CELL_H_
#define RESTORESIM_CORE_SYNC_SHARED_CELL_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "core/sync/mutex.h"

namespace restoresim {

template <typename T>
class SharedCell {
 public:
  explicit SharedCell(T initial = T{}, const char* name = nullptr)
      : mu_(name), value_(std::make_shared<T>(std::move(initial))) {}

  // One lock (one scheduling point) either way. While no reader holds the last snapshot, it
  // is overwritten in place: a publisher that publishes every loop iteration reuses its
  // buffers instead of allocating a new value each time.
  void Publish(const T& value) {
    MutexLock lock(mu_);
    if (Unshared()) {
      *value_ = value;
    } else {
      value_ = std::make_shared<T>(value);
    }
    ++version_;
  }
  void Publish(T&& value) {
    MutexLock lock(mu_);
    if (Unshared()) {
      *value_ = std::move(value);
    } else {
      value_ = std::make_shared<T>(std::move(value));
    }
    ++version_;
  }

  std::shared_ptr<const T> Snapshot() const {
    MutexLock lock(mu_);
    return value_;
  }

  uint64_t version() const {
    MutexLock lock(mu_);
    return version_;
  }

 private:
  // Whether value_ is ours alone. Snapshots are only taken under mu_, so a count of 1 seen
  // under it stays 1; the fence orders a reader's last use of the value (before its release
  // of the count) before our writes to it.
  bool Unshared() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (value_.use_count() != 1) return false;
    std::atomic_thread_fence(std::memory_order_acquire);
    return true;
  }

  mutable Mutex mu_;
  // Never null. Readers see it as const: only Publish writes through it, when unshared.
  std::shared_ptr<T> value_ ABSL_GUARDED_BY(mu_);
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_SYNC_SHARED_CELL_H_
