#include "tools/restoresim/zoo_search.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <set>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "sim/runner.h"
#include "sim/sweep.h"
#include "sim/worker_threads.h"

namespace restoresim::tools {
namespace {

using Clock = std::chrono::steady_clock;

sim::RunConfig ConfigFor(const sim::StrategySpec& strategy, uint64_t seed) {
  sim::RunConfig config;
  config.seed = seed;
  config.strategy = strategy;
  return config;
}

}  // namespace

absl::StatusOr<SearchResult> FindFirst(const sim::Program& program,
                                       const sim::StrategySpec& strategy, uint64_t start,
                                       uint64_t seeds_max, double budget_s, uint32_t jobs,
                                       const std::atomic<bool>* stop) {
  const auto began = Clock::now();
  const auto deadline = began + std::chrono::duration<double>(budget_s);
  std::atomic<uint64_t> next{0};
  std::mutex mu;  // guards the fields below
  uint64_t first = UINT64_MAX;  // offset of the lowest seed found so far
  uint64_t prefix_run = 0;      // every offset below it has run
  std::set<uint64_t> ran_above;  // offsets run above prefix_run (workers finish out of order)
  bool out_of_time = false;
  std::atomic<bool> abandon{false};  // a worker thread could not start
  std::string invariant;
  auto worker = [&]() {
    for (;;) {
      const uint64_t i = next.fetch_add(1);
      {
        std::lock_guard<std::mutex> lock(mu);
        if (i >= seeds_max || i > first) return;  // nothing below the first found is left
        if (abandon.load() || (stop != nullptr && stop->load())) return;  // polled per seed
        if (Clock::now() > deadline) {
          out_of_time = true;
          return;
        }
      }
      const sim::RunResult r = sim::RunProgram(program, ConfigFor(strategy, start + i));
      std::lock_guard<std::mutex> lock(mu);
      ran_above.insert(i);
      while (!ran_above.empty() && *ran_above.begin() == prefix_run) {
        ran_above.erase(ran_above.begin());
        ++prefix_run;
      }
      if (sim::FindsPlantedBug(program, r.outcome) && i < first) {
        first = i;
        invariant = r.outcome.failure.invariant;
      }
    }
  };
  std::vector<std::thread> workers;
  const absl::Status started = sim::StartWorkerThreads(jobs, worker, workers);
  if (!started.ok()) abandon = true;  // the workers that started return at their next seed
  if (started.ok()) worker();
  for (std::thread& t : workers) t.join();
  if (!started.ok()) return started;
  SearchResult result;
  result.seed_start = start;
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - began).count();
  // Found only if every seed below it ran: then it is the lowest, as a single thread finds it.
  // When the budget ran out while a lower seed had not run, a failure above it does not count.
  result.found = first != UINT64_MAX && prefix_run >= first;
  result.budget_exhausted = out_of_time && !result.found;
  // Stopped while undecided: neither found nor run to its end or budget.
  result.interrupted = !result.found && !out_of_time && prefix_run < seeds_max;
  result.seed = result.found ? start + first : 0;
  result.seeds_run = result.found ? first + 1 : prefix_run;
  result.invariant = invariant;
  return result;
}

absl::StatusOr<PlainResult> RunPlain(const sim::Program& program,
                                     const sim::StrategySpec& strategy, uint64_t start,
                                     uint64_t seeds, uint32_t jobs,
                                     const std::atomic<bool>* stop) {
  PlainResult result;
  if (seeds == 0) return result;
  sim::SweepConfig config;
  config.programs = {&program};
  config.seed_start = start;
  config.seeds = seeds;
  config.jobs = jobs;
  config.run.strategy = strategy;
  config.failures_kept_max = 1;
  config.stop = stop;
  const sim::SweepResult sweep = sim::RunSweep(config);
  if (!sweep.workers.ok()) return sweep.workers;
  result.interrupted = sweep.interrupted;
  const sim::ProgramSweepStats& stats = sweep.programs.at(0);
  result.runs = stats.runs;
  result.failures = stats.failed_runs;
  if (!stats.failures.empty()) {
    const sim::SweepFailure& f = stats.failures.front();
    result.first_failure = fmt::format("seed {}: {}", f.seed, f.outcome.message.substr(0, 300));
  }
  return result;
}

void ZooProgress::Step() {
  ++done_;
  if (!enabled_) return;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done_ / std::max<uint64_t>(total_, 1));
  std::fprintf(stderr, "\r[%s%s] %llu/%llu sweeps", std::string(filled, '#').c_str(),
               std::string(kWidth - filled, '.').c_str(),
               static_cast<unsigned long long>(done_), static_cast<unsigned long long>(total_));
}

void ZooProgress::Done() {
  if (enabled_) std::fprintf(stderr, "\n");
}

}  // namespace restoresim::tools
