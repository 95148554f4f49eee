// SharedCell<T>: a value published by one thread and read as an immutable snapshot by others
// (the restore thread publishes its completed changelogs; the stream thread reads them). Reads
// never see a half-written value; each publish bumps a version.
//
// Thread-safety: thread-safe.
#ifndef RESTORESIM_CORE_SYNC_SHARED_CELL_H_
#define RESTORESIM_CORE_SYNC_SHARED_CELL_H_

#include <cstdint>
#include <memory>

#include "core/sync/mutex.h"

namespace restoresim {

template <typename T>
class SharedCell {
 public:
  explicit SharedCell(T initial = T{}, const char* name = nullptr)
      : mu_(name), value_(std::make_shared<const T>(std::move(initial))) {}

  void Publish(T value) {
    auto next = std::make_shared<const T>(std::move(value));
    MutexLock lock(mu_);
    value_ = std::move(next);
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
  mutable Mutex mu_;
  std::shared_ptr<const T> value_ ABSL_GUARDED_BY(mu_);
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_SYNC_SHARED_CELL_H_
