#include "sim/worker_threads.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <system_error>

#include <fmt/format.h>

#include "core/util/check.h"

namespace restoresim::sim {

namespace {

// Holds the started threads until every one has started (kGo) or one could not (kAbandon).
struct StartGate {
  enum class State { kWait, kGo, kAbandon };
  std::mutex mu;
  std::condition_variable cv;
  State state = State::kWait;  // guarded by mu

  void Open(State to) {
    {
      std::lock_guard<std::mutex> lock(mu);
      state = to;
    }
    cv.notify_all();
  }
  bool Wait() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this]() { return state != State::kWait; });
    return state == State::kGo;
  }
};

}  // namespace

absl::Status StartWorkerThreads(uint32_t jobs, const std::function<void()>& body,
                                std::vector<std::thread>& started) {
  RS_CHECK(jobs >= 1, "StartWorkerThreads needs at least the caller's worker");
  const size_t before = started.size();
  auto gate = std::make_shared<StartGate>();
  for (uint32_t j = 2; j <= jobs; ++j) {
    try {
      started.emplace_back([gate, body]() {
        if (gate->Wait()) body();
      });
    } catch (const std::system_error& e) {
      // Out of threads, or of memory for their stacks: the command says so and stops.
      gate->Open(StartGate::State::kAbandon);
      return absl::ResourceExhaustedError(
          fmt::format("could not start worker thread {} of {} ({}); try fewer --jobs", j, jobs,
                      e.code().message()));
    }
  }
  RS_CHECK(started.size() == before + jobs - 1);
  gate->Open(StartGate::State::kGo);
  return absl::OkStatus();
}

}  // namespace restoresim::sim
