// Seed sweeps: run programs over a range of seeds on several OS threads (each runs its own
// simulations), collect failures with their replay lines, and fold every run's trace hash into
// one order-independent fingerprint. Results of shards (--shard I/N) merge by adding counts and
// XOR-ing fingerprints (per program and sweep-wide), so a sweep split over machines gives the
// same totals as one run (sim/sweep_merge.h merges their reports).
//
// Thread-safety: RunSweep is called from one thread; it starts and joins its own workers. The
// progress callback is called from worker threads, serialised.
#ifndef RESTORESIM_SIM_SWEEP_H_
#define RESTORESIM_SIM_SWEEP_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/program.h"
#include "sim/runner.h"

namespace restoresim::sim {

struct SweepConfig {
  std::vector<const Program*> programs;
  uint64_t seed_start = 0;
  uint64_t seeds = 100;        // seeds per program, before sharding
  uint32_t shard_index = 0;    // this shard takes seed offsets i with i % shard_count == index
  uint32_t shard_count = 1;
  uint32_t jobs = 1;           // worker OS threads
  RunConfig run;               // seed field ignored; strategy and budgets apply to every run
  size_t failures_kept_max = 50;  // per program; counts go on past it
  // Set (by a signal handler, say) to stop: runs in progress finish, no new one starts, and
  // the result holds what was done (interrupted). May be null.
  const std::atomic<bool>* stop = nullptr;
};

struct SweepFailure {
  std::string program;
  uint64_t seed = 0;
  RunOutcome outcome;
  uint64_t trace_hash = 0;
  uint64_t steps = 0;
  std::string replay;  // the one-line command that reproduces it
};

struct ProgramSweepStats {
  const Program* program = nullptr;
  uint64_t runs = 0;
  uint64_t failed_runs = 0;
  uint64_t steps = 0;  // summed over runs
  uint64_t first_failing_seed = UINT64_MAX;
  // bug_expected programs: failed runs whose failure names an expected invariant (every
  // failed run when the program lists none), and the lowest such seed.
  uint64_t found_runs = 0;
  uint64_t first_found_seed = UINT64_MAX;
  uint64_t fingerprint = 0;  // XOR over seeds of MixPair(seed, trace_hash)
  // The same runs' share of the sweep-wide fingerprint: XOR over seeds of
  // MixPair(StableStringHash(name), MixPair(seed, trace_hash)). XOR-linear like `fingerprint`,
  // so shards' values XOR into the whole sweep's.
  uint64_t sweep_share = 0;
  std::vector<SweepFailure> failures;  // lowest seeds first, at most failures_kept_max
  // Coverage: each mark ("cover/..." without the category) and how many runs made it.
  std::map<std::string, uint64_t> coverage;

  // A planted bug that was found (by an expected invariant), or a correct program that never
  // failed. A program without runs (a shard whose seeds all went elsewhere) found nothing
  // unexpected: only the merged sweep says whether its planted bug was found.
  bool AsExpected() const {
    if (runs == 0) return true;
    return program->bug_expected ? found_runs > 0 : failed_runs == 0;
  }
};

struct SweepResult {
  std::vector<ProgramSweepStats> programs;  // in SweepConfig order
  uint64_t runs_planned = 0;  // programs x this shard's seeds (= runs unless interrupted)
  uint64_t runs = 0;
  uint64_t failed_runs = 0;
  // XOR over every run of MixPair(StableStringHash(program), MixPair(seed, trace_hash)): the
  // shards' fingerprints XOR into the whole sweep's, like the per-program ones.
  uint64_t fingerprint = 0;
  double wall_seconds = 0;
  bool interrupted = false;  // config.stop was set before every run was done
  // Not OK when a worker thread could not be started (the threads that did were stopped and
  // joined; the counts are of the runs they finished).
  absl::Status workers;
  bool AllAsExpected() const;
};

struct SweepProgress {
  uint64_t runs_done;
  uint64_t runs_total;
  uint64_t failed_runs;
};

absl::Status ValidateSweepConfig(const SweepConfig& config);
// Whether a failed run of `program` counts as finding its planted bug: it names one of the
// program's expected invariants (any failure, when it lists none).
bool FindsPlantedBug(const Program& program, const RunOutcome& outcome);
SweepResult RunSweep(const SweepConfig& config,
                     const std::function<void(const SweepProgress&)>& on_progress = nullptr);

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_SWEEP_H_
