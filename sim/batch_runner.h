// BatchRunner: runs batches of independent calls on a fixed set of OS threads, the caller's
// among them. The workers live as long as the runner, so each keeps its pool of fiber stacks
// across batches (the shrinker runs thousands of small batches of candidate runs).
//
// Thread-safety: Run is called by one thread at a time (the owner); fn runs on any of the
// runner's threads and must be safe to call concurrently for different indices.
#ifndef RESTORESIM_SIM_BATCH_RUNNER_H_
#define RESTORESIM_SIM_BATCH_RUNNER_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace restoresim::sim {

class BatchRunner {
 public:
  // Starts threads - 1 workers (sim/worker_threads.h). When one cannot start, those that did
  // are stopped and joined, status() says why, and Run must not be called.
  explicit BatchRunner(uint32_t threads);
  ~BatchRunner();
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  const absl::Status& status() const { return status_; }

  // Calls fn(i) for every i in [0, count) and returns when all calls have returned.
  // REQUIRES: status().ok().
  void Run(size_t count, const std::function<void(size_t)>& fn);

 private:
  void WorkerLoop();
  void StopWorkers();

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  const std::function<void(size_t)>* fn_ = nullptr;  // guarded by mu_
  size_t count_ = 0;                                 // guarded by mu_
  size_t next_ = 0;                                  // guarded by mu_
  size_t done_ = 0;                                  // guarded by mu_
  bool stop_ = false;                                // guarded by mu_
  std::vector<std::thread> workers_;
  absl::Status status_;
};

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_BATCH_RUNNER_H_
