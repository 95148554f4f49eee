#include "sim/batch_runner.h"

#include <algorithm>

#include "core/util/check.h"
#include "sim/worker_threads.h"

namespace restoresim::sim {

BatchRunner::BatchRunner(uint32_t threads) {
  status_ = StartWorkerThreads(std::max<uint32_t>(threads, 1), [this]() { WorkerLoop(); },
                               workers_);
  // A runner short of workers would still give the same results, but not on the threads the
  // caller asked for: it stops the ones started, and the caller reports status().
  if (!status_.ok()) StopWorkers();
}

BatchRunner::~BatchRunner() { StopWorkers(); }

void BatchRunner::StopWorkers() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void BatchRunner::Run(size_t count, const std::function<void(size_t)>& fn) {
  RS_CHECK(status_.ok(), "BatchRunner::Run after its workers failed to start");
  if (workers_.empty() || count <= 1) {
    for (size_t i = 0; i < count; ++i) fn(i);
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  fn_ = &fn;
  count_ = count;
  next_ = 0;
  done_ = 0;
  work_cv_.notify_all();
  while (next_ < count_) {
    const size_t i = next_++;
    lock.unlock();
    fn(i);
    lock.lock();
    ++done_;
  }
  done_cv_.wait(lock, [this]() { return done_ == count_; });
  fn_ = nullptr;
  count_ = 0;
  next_ = 0;
}

void BatchRunner::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this]() { return stop_ || next_ < count_; });
    if (stop_) return;
    const size_t i = next_++;
    const std::function<void(size_t)>* fn = fn_;
    lock.unlock();
    (*fn)(i);
    lock.lock();
    if (++done_ == count_) done_cv_.notify_all();
  }
}

}  // namespace restoresim::sim
