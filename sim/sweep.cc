#include "sim/sweep.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/util/stable_hash.h"
#include "sim/worker_threads.h"

namespace restoresim::sim {
namespace {

constexpr uint32_t kJobsMax = 256;
constexpr uint64_t kSeedsMax = uint64_t{1} << 40;

// How many seeds this shard runs: the offsets i in [0, seeds) with i % count == index. The
// k-th of them is seed_start + index + k * count; nothing is stored per seed, so memory does
// not grow with --seeds.
uint64_t ShardSeedCount(const SweepConfig& c) {
  return c.shard_index >= c.seeds ? 0 : (c.seeds - c.shard_index - 1) / c.shard_count + 1;
}

uint64_t ShardSeed(const SweepConfig& c, uint64_t k) {
  return c.seed_start + c.shard_index + k * c.shard_count;
}

}  // namespace

bool SweepResult::AllAsExpected() const {
  return std::all_of(programs.begin(), programs.end(),
                     [](const ProgramSweepStats& p) { return p.AsExpected(); });
}

bool FindsPlantedBug(const Program& program, const RunOutcome& outcome) {
  if (outcome.ok()) return false;
  if (program.expected_invariants.empty()) return true;
  const Failure& f = outcome.failure;
  return f.kind == FailureKind::kInvariant &&
         std::find(program.expected_invariants.begin(), program.expected_invariants.end(),
                   f.invariant) != program.expected_invariants.end();
}

absl::Status ValidateSweepConfig(const SweepConfig& c) {
  if (c.programs.empty()) return absl::InvalidArgumentError("no scenario selected");
  if (c.seeds == 0 || c.seeds > kSeedsMax) {
    return absl::InvalidArgumentError(fmt::format("--seeds must be in [1, {}]", kSeedsMax));
  }
  if (c.seed_start > UINT64_MAX - c.seeds) {
    return absl::InvalidArgumentError("--seed-start + --seeds overflows 64 bits");
  }
  if (c.shard_count == 0 || c.shard_index >= c.shard_count) {
    return absl::InvalidArgumentError(fmt::format(
        "--shard {}/{}: expected I/N with 0 <= I < N", c.shard_index, c.shard_count));
  }
  if (c.jobs == 0 || c.jobs > kJobsMax) {
    return absl::InvalidArgumentError(fmt::format("--jobs must be in [1, {}]", kJobsMax));
  }
  return absl::OkStatus();
}

namespace {

// Adds one run to its program's statistics. REQUIRES: the sweep's lock held.
void RecordRun(const SweepConfig& config, const Program& program, const RunConfig& run,
               const RunResult& r, uint64_t name_hash, ProgramSweepStats& s) {
  ++s.runs;
  s.steps += r.steps;
  for (const auto& [mark, times] : r.coverage) ++s.coverage[mark];
  s.fingerprint ^= MixPair(run.seed, r.trace_hash);
  s.sweep_share ^= MixPair(name_hash, MixPair(run.seed, r.trace_hash));
  if (r.outcome.ok()) return;
  ++s.failed_runs;
  s.first_failing_seed = std::min(s.first_failing_seed, run.seed);
  if (program.bug_expected && FindsPlantedBug(program, r.outcome)) {
    ++s.found_runs;
    s.first_found_seed = std::min(s.first_found_seed, run.seed);
  }
  s.failures.push_back(SweepFailure{program.name, run.seed, r.outcome, r.trace_hash, r.steps,
                                    ReplayCommand(program, run)});
  std::sort(s.failures.begin(), s.failures.end(),
            [](const SweepFailure& a, const SweepFailure& b) { return a.seed < b.seed; });
  if (s.failures.size() > config.failures_kept_max) s.failures.pop_back();
}

// Runs `worker` on `jobs` threads, the caller's among them, and joins them. A thread that
// cannot start raises `abandon` (the others stop at their next run) and is the error.
absl::Status RunWorkers(uint32_t jobs, const std::function<void()>& worker,
                        std::atomic<bool>& abandon) {
  std::vector<std::thread> workers;
  const absl::Status status = StartWorkerThreads(jobs, worker, workers);
  if (!status.ok()) abandon = true;
  if (!abandon) worker();
  for (std::thread& t : workers) t.join();
  return status;
}

}  // namespace

SweepResult RunSweep(const SweepConfig& config,
                     const std::function<void(const SweepProgress&)>& on_progress) {
  const auto started = std::chrono::steady_clock::now();
  const uint64_t total = ShardSeedCount(config) * config.programs.size();
  SweepResult result;
  result.runs_planned = total;
  std::vector<uint64_t> name_hashes;
  for (const Program* p : config.programs) {
    result.programs.push_back(ProgramSweepStats{.program = p, .failures = {}});
    name_hashes.push_back(StableStringHash(p->name));
  }
  std::mutex mu;  // guards result and the progress callback
  std::atomic<uint64_t> next{0};
  std::atomic<bool> abandon{false};  // a worker thread could not start
  uint64_t done = 0;
  auto stopping = [&]() {
    return abandon.load() || (config.stop != nullptr && config.stop->load());
  };
  auto worker = [&]() {
    for (uint64_t i = next.fetch_add(1); i < total && !stopping(); i = next.fetch_add(1)) {
      // Seed by seed, every program at each: a sweep cut short has run them all alike.
      const size_t program_index = i % config.programs.size();
      const Program& program = *config.programs[program_index];
      RunConfig run = config.run;
      run.seed = ShardSeed(config, i / config.programs.size());
      run.trace_mode = TraceMode::kHashOnly;
      const RunResult r = RunProgram(program, run);
      std::lock_guard<std::mutex> lock(mu);
      RecordRun(config, program, run, r, name_hashes[program_index],
                result.programs[program_index]);
      ++done;
      if (!on_progress) continue;
      uint64_t failed = 0;
      for (const ProgramSweepStats& p : result.programs) failed += p.failed_runs;
      on_progress(SweepProgress{done, total, failed});
    }
  };
  const uint32_t jobs = static_cast<uint32_t>(
      std::min<uint64_t>(config.jobs, std::max<uint64_t>(total, 1)));
  result.workers = RunWorkers(jobs, worker, abandon);
  result.interrupted = !abandon && done < total;
  for (ProgramSweepStats& s : result.programs) {
    result.runs += s.runs;
    result.failed_runs += s.failed_runs;
    result.fingerprint ^= s.sweep_share;
  }
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace restoresim::sim
