// The zoo's searches: the first seed of a range at which a bug program fails naming an expected
// invariant (in parallel, but the answer is the lowest such seed, as one thread would find it),
// and the plain runtime over the same seeds.
//
// Thread-safety: each call starts and joins its own workers (sim/worker_threads.h: a worker that
// cannot start is a ResourceExhausted error); ZooProgress is for one thread.
#ifndef RESTORESIM_TOOLS_RESTORESIM_ZOO_SEARCH_H_
#define RESTORESIM_TOOLS_RESTORESIM_ZOO_SEARCH_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "sim/program.h"
#include "sim/strategy.h"

namespace restoresim::tools {

struct SearchResult {
  bool found = false;
  bool budget_exhausted = false;  // stopped by the wall-clock budget
  bool interrupted = false;       // stopped by the caller's stop flag before it was decided
  uint64_t seed_start = 0;
  uint64_t seed = 0;       // the first seed found
  uint64_t seeds_run = 0;  // seeds up to and including it (or all run when not found)
  double wall_seconds = 0;
  std::string invariant;   // the one that caught it
};

// Runs seeds start, start+1, ... (at most seeds_max) until one fails naming an expected
// invariant of `program` (sim::FindsPlantedBug), or budget_s of wall time passed, or `stop`
// (may be null) was set.
absl::StatusOr<SearchResult> FindFirst(const sim::Program& program,
                                       const sim::StrategySpec& strategy, uint64_t start,
                                       uint64_t seeds_max, double budget_s, uint32_t jobs,
                                       const std::atomic<bool>* stop);

struct PlainResult {
  uint64_t runs = 0;
  uint64_t failures = 0;
  std::string first_failure;  // "seed N: message"
  bool interrupted = false;   // `stop` was set before every seed ran
};

// Runs `program` (a correct one) over [start, start + seeds), or until `stop` (may be null).
absl::StatusOr<PlainResult> RunPlain(const sim::Program& program,
                                     const sim::StrategySpec& strategy, uint64_t start,
                                     uint64_t seeds, uint32_t jobs,
                                     const std::atomic<bool>* stop);

// A progress bar on stderr (when enabled), one step per sweep.
class ZooProgress {
 public:
  ZooProgress(bool enabled, uint64_t total) : enabled_(enabled), total_(total) {}
  void Step();
  void Done();

 private:
  bool enabled_;
  uint64_t total_;
  uint64_t done_ = 0;
};

}  // namespace restoresim::tools

#endif  // RESTORESIM_TOOLS_RESTORESIM_ZOO_SEARCH_H_
