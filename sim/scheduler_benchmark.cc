// Scheduler throughput: scheduling decisions per second of the fiber simulator (strategy and
// trace hashing included), side by side with an OS-thread token-passing scheduler built on the
// fastest hand-off available here (a futex-backed std::binary_semaphore per thread), which is
// how JVM tools such as Fray and Coyote serialise real threads. After the runs it prints the
// fiber/OS ratio measured in this same process.
//
//   build/sim/scheduler_benchmark [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

#include "core/sync/thread.h"
#include "core/util/prng.h"
#include "sim/simulation.h"
#include "sim/strategy.h"

namespace restoresim::sim {
namespace {

constexpr int kYieldsPerThread = 20000;

enum class Which { kRandomWalk, kPct3, kPos };

void RunFiberScheduler(benchmark::State& state, Which which) {
  const int threads = static_cast<int>(state.range(0));
  uint64_t decisions = 0;
  uint64_t seed = 1;
  for (auto _ : state) {
    SimOptions options;
    options.steps_max = UINT64_MAX;
    std::unique_ptr<Strategy> strategy;
    switch (which) {
      case Which::kRandomWalk:
        strategy = std::make_unique<RandomWalkStrategy>(Prng(seed));
        break;
      case Which::kPct3:
        strategy = std::make_unique<PctStrategy>(Prng(seed), 3, kYieldsPerThread * threads);
        break;
      case Which::kPos:
        strategy = std::make_unique<PosStrategy>(Prng(seed));
        break;
    }
    ++seed;
    Simulation sim(options, std::move(strategy));
    RunOutcome outcome = sim.Run([threads]() {
      std::vector<std::unique_ptr<Thread>> workers;
      for (int t = 0; t < threads; ++t) {
        workers.push_back(std::make_unique<Thread>("worker", []() {
          for (int i = 0; i < kYieldsPerThread; ++i) Yield();
        }));
      }
      for (auto& w : workers) w->Join();
    });
    if (!outcome.ok()) state.SkipWithError(outcome.message.c_str());
    decisions += sim.steps();
    benchmark::DoNotOptimize(sim.trace().Hash());
  }
  state.counters["decisions_per_second"] =
      benchmark::Counter(static_cast<double>(decisions), benchmark::Counter::kIsRate);
  state.counters["threads"] = threads;
}

void BM_FiberSchedulerRandomWalk(benchmark::State& state) {
  RunFiberScheduler(state, Which::kRandomWalk);
}
void BM_FiberSchedulerPct3(benchmark::State& state) { RunFiberScheduler(state, Which::kPct3); }
void BM_FiberSchedulerPos(benchmark::State& state) { RunFiberScheduler(state, Which::kPos); }

// Token passing between OS threads: exactly one holds the token; at each decision the holder
// picks the next thread with the same PRNG a random walk uses and releases its semaphore.
void BM_OsThreadTokenPassing(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const uint64_t decisions_per_iteration = 20000;
  uint64_t decisions = 0;
  for (auto _ : state) {
    std::vector<std::unique_ptr<std::binary_semaphore>> sems;
    for (int t = 0; t < threads; ++t) sems.push_back(std::make_unique<std::binary_semaphore>(0));
    Prng prng(7);
    uint64_t remaining = decisions_per_iteration;
    bool done = false;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t]() {
        for (;;) {
          sems[t]->acquire();
          if (done) return;
          if (--remaining == 0) {
            done = true;
            for (auto& s : sems) s->release();
            return;
          }
          sems[prng.Uniform(static_cast<uint64_t>(threads))]->release();
        }
      });
    }
    sems[0]->release();
    for (std::thread& w : workers) w.join();
    decisions += decisions_per_iteration;
  }
  state.counters["decisions_per_second"] =
      benchmark::Counter(static_cast<double>(decisions), benchmark::Counter::kIsRate);
  state.counters["threads"] = threads;
}

BENCHMARK(BM_FiberSchedulerRandomWalk)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FiberSchedulerPct3)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FiberSchedulerPos)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OsThreadTokenPassing)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Prints the usual console table, then the fiber/OS ratio per thread count.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      auto it = run.counters.find("decisions_per_second");
      if (it == run.counters.end() || run.run_type != Run::RT_Iteration) continue;
      rates_[run.benchmark_name()] = it->second.value;
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    for (int threads : {2, 4, 8}) {
      const std::string suffix = "/" + std::to_string(threads);
      auto os = rates_.find("BM_OsThreadTokenPassing" + suffix + "/real_time");
      if (os == rates_.end() || os->second <= 0) continue;
      for (const char* fiber :
           {"BM_FiberSchedulerRandomWalk", "BM_FiberSchedulerPct3", "BM_FiberSchedulerPos"}) {
        auto f = rates_.find(fiber + suffix);
        if (f == rates_.end()) continue;
        std::printf("ratio %s/%d vs OS-thread token passing: %.1fx (%.1fM vs %.2fM decisions/s)\n",
                    fiber, threads, f->second / os->second, f->second / 1e6, os->second / 1e6);
      }
    }
  }

 private:
  std::map<std::string, double> rates_;
};

}  // namespace
}  // namespace restoresim::sim

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  restoresim::sim::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
