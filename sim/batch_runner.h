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

namespace restoresim::sim {

class BatchRunner {
 public:
  explicit BatchRunner(uint32_t threads);
  ~BatchRunner();
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  // Calls fn(i) for every i in [0, count) and returns when all calls have returned.
  void Run(size_t count, const std::function<void(size_t)>& fn);

 private:
  void WorkerLoop();

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  const std::function<void(size_t)>* fn_ = nullptr;  // guarded by mu_
  size_t count_ = 0;                                 // guarded by mu_
  size_t next_ = 0;                                  // guarded by mu_
  size_t done_ = 0;                                  // guarded by mu_
  bool stop_ = false;                                // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_BATCH_RUNNER_H_
