// BlockingQueue<T>: a bounded multi-producer multi-consumer FIFO built on Mutex and CondVar, so
// it is a real queue on OS threads and a set of scheduling points under the simulator. Its
// capacity is a named limit (TigerBeetle: every queue has a bound); Close() wakes everyone.
//
// Thread-safety: thread-safe.
#ifndef RESTORESIM_CORE_SYNC_BLOCKING_QUEUE_H_
#define RESTORESIM_CORE_SYNC_BLOCKING_QUEUE_H_

#include <cstddef>
#include <deque>
#include <optional>
#include <vector>

#include "core/sync/clock.h"
#include "core/sync/condvar.h"
#include "core/sync/mutex.h"
#include "core/util/check.h"

namespace restoresim {

template <typename T>
class BlockingQueue {
 public:
  explicit BlockingQueue(size_t capacity_max, const char* name = nullptr)
      : capacity_max_(capacity_max), mu_(name), not_empty_(name), not_full_(name) {
    RS_CHECK(capacity_max_ > 0);
  }

  // Blocks while full. Returns false (and drops nothing) if the queue is closed.
  bool Push(T item) {
    MutexLock lock(mu_);
    while (items_.size() >= capacity_max_ && !closed_) not_full_.Wait(mu_);
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.NotifyOne();
    return true;
  }

  // Never blocks. Returns false if full or closed.
  bool TryPush(T item) {
    MutexLock lock(mu_);
    if (closed_ || items_.size() >= capacity_max_) return false;
    items_.push_back(std::move(item));
    not_empty_.NotifyOne();
    return true;
  }

  // Blocks until an item arrives; nullopt once closed and empty.
  std::optional<T> Pop() {
    MutexLock lock(mu_);
    while (items_.empty() && !closed_) not_empty_.Wait(mu_);
    return TakeFrontLocked();
  }

  // Like Pop, giving up at deadline_ns on `clock`.
  std::optional<T> PopUntil(Clock& clock, TimeNs deadline_ns) {
    MutexLock lock(mu_);
    while (items_.empty() && !closed_) {
      if (!not_empty_.WaitUntil(mu_, clock, deadline_ns)) break;
    }
    return TakeFrontLocked();
  }

  // Moves up to `items_max` items into `out` without blocking; returns how many.
  size_t DrainTo(std::vector<T>& out, size_t items_max = SIZE_MAX) {
    MutexLock lock(mu_);
    size_t moved = 0;
    while (!items_.empty() && moved < items_max) {
      out.push_back(std::move(items_.front()));
      items_.pop_front();
      ++moved;
    }
    if (moved > 0) not_full_.NotifyAll();
    return moved;
  }

  // Refuses further pushes and wakes every waiter; items already queued can still be popped.
  void Close() {
    MutexLock lock(mu_);
    closed_ = true;
    not_empty_.NotifyAll();
    not_full_.NotifyAll();
  }

  size_t Size() const {
    MutexLock lock(mu_);
    return items_.size();
  }
  bool Closed() const {
    MutexLock lock(mu_);
    return closed_;
  }
  size_t capacity_max() const { return capacity_max_; }

 private:
  std::optional<T> TakeFrontLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.NotifyOne();
    return item;
  }

  const size_t capacity_max_;
  mutable Mutex mu_;
  CondVar not_empty_;
  CondVar not_full_;
  std::deque<T> items_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_SYNC_BLOCKING_QUEUE_H_
