// Scheduler throughput: scheduling decisions per second of the fiber simulator (strategy and
// trace hashing included), side by side with an OS-thread token-passing scheduler built on the
// fastest hand-off available here (a futex-backed std::binary_semaphore per thread), which is
// how JVM tools such as Fray and Coyote serialise real threads. After the runs it prints the
// fiber/OS ratio measured in this same process.
//
//   build/sim/scheduler_benchmark [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <semaphore>
#include <string>
#include <string_view>
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

// The report in the format asked for (--benchmark_format: console, json or csv; the library's
// own reporters), then the fiber/OS ratio per thread count: on standard output after the
// console table, on standard error otherwise, so that JSON or CSV output stays parseable.
class RatioReporter final : public benchmark::BenchmarkReporter {
 public:
  explicit RatioReporter(std::string_view format) : console_(format == "console") {
    if (format == "json") {
      inner_ = std::make_unique<benchmark::JSONReporter>();
    } else if (format == "csv") {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      inner_ = std::make_unique<benchmark::CSVReporter>();
#pragma GCC diagnostic pop
    } else {
      inner_ = std::make_unique<benchmark::ConsoleReporter>();
    }
  }
  bool ReportContext(const Context& context) override { return inner_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    inner_->ReportRuns(runs);
    for (const Run& run : runs) {
      auto it = run.counters.find("decisions_per_second");
      if (it == run.counters.end() || run.run_type != Run::RT_Iteration) continue;
      rates_[run.benchmark_name()] = it->second.value;
    }
  }
  void Finalize() override {
    inner_->Finalize();
    std::fflush(stdout);
    FILE* out = console_ ? stdout : stderr;
    for (int threads : {2, 4, 8}) {
      const std::string suffix = "/" + std::to_string(threads);
      auto os = rates_.find("BM_OsThreadTokenPassing" + suffix + "/real_time");
      if (os == rates_.end() || os->second <= 0) continue;
      for (const char* fiber :
           {"BM_FiberSchedulerRandomWalk", "BM_FiberSchedulerPct3", "BM_FiberSchedulerPos"}) {
        auto f = rates_.find(fiber + suffix);
        if (f == rates_.end()) continue;
        std::fprintf(out,
                     "ratio %s/%d vs OS-thread token passing: %.1fx (%.1fM vs %.2fM decisions/s)\n",
                     fiber, threads, f->second / os->second, f->second / 1e6, os->second / 1e6);
      }
    }
  }

 private:
  const bool console_;
  std::unique_ptr<benchmark::BenchmarkReporter> inner_;
  std::map<std::string, double> rates_;
};

// The value of --benchmark_format (the last one given wins, as for the library), or of the
// BENCHMARK_FORMAT environment variable the library also reads; "console" by default.
std::string FormatAsked(int argc, char** argv) {
  std::string format = "console";
  if (const char* env = std::getenv("BENCHMARK_FORMAT"); env != nullptr && *env != '\0') {
    format = env;
  }
  constexpr std::string_view kFlag = "--benchmark_format=";
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.starts_with(kFlag)) format = std::string(arg.substr(kFlag.size()));
  }
  return format;
}

}  // namespace
}  // namespace restoresim::sim

int main(int argc, char** argv) {
  // Read before Initialize, which removes the flags it knows from argv (and rejects a format
  // it does not know).
  const std::string format = restoresim::sim::FormatAsked(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  restoresim::sim::RatioReporter reporter(format);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
