// Shrinking: minimises a failing run while it still fails the same way. A run is decided by
// its seed and the list of strategy answers it recorded (thread picks and data choices); the
// shrinker edits that list, replays each candidate with the quiet fallback (QuietStrategy:
// non-preemptive, no data events) past its end, and keeps a candidate when the run fails with
// the same FailureSignature and is smaller. Smaller means, in this order: fewer preemptions,
// fewer spurious wake-ups and notify picks, fewer data events (non-zero data choices: scenario
// events), a smaller data sum, fewer steps, fewer choices, fewer choices off their quiet answer,
// then the lexicographically smaller list. Passes (cut the tail, pull a preempted thread's next
// run forward, delete chunks, quieten one choice, lower one data choice) repeat to a fixed
// point or until the run budget is spent. The result is deterministic: the same input and
// runs_max give the same output for any number of jobs. docs/DESIGN.md ("Shrinking") says why
// it works this way.
//
// Thread-safety: ShrinkRepro may be called from any thread; it starts and joins its own
// workers (options.jobs). on_progress is called on the calling thread. The free functions are
// pure and thread-safe.
#ifndef RESTORESIM_SIM_SHRINK_H_
#define RESTORESIM_SIM_SHRINK_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/failure_signature.h"
#include "sim/program.h"
#include "sim/repro.h"
#include "sim/simulation.h"
#include "sim/strategy.h"

namespace restoresim::sim {

// What must stay the same while a run shrinks: its FailureSignature (sim/failure_signature.h).

// How big a recorded run is, from its choices and what each was (RunResult::choice_infos).
struct ScheduleMetrics {
  uint64_t choices = 0;
  uint64_t preemptions = 0;   // thread picks that switched away from a runnable thread
  uint64_t sched_events = 0;  // spurious wake-ups, notify_one waking another than the first
  uint64_t data_events = 0;   // data choices other than 0
  uint64_t data_sum = 0;      // of the data choices (saturating)
  uint64_t steps = 0;
  uint64_t off_quiet = 0;  // choices other than their quiet answer (ChoiceInfo::quiet)
};
ScheduleMetrics MeasureSchedule(std::span<const uint64_t> choices,
                                std::span<const ChoiceInfo> infos, uint64_t steps);

struct ShrinkProgress {
  uint64_t runs;                   // charged to the budget so far
  std::string_view pass;           // the pass that found the improvement
  const ScheduleMetrics& metrics;  // of the smallest failing run now
};

inline constexpr uint64_t kShrinkRunsMax = 100'000'000;
inline constexpr uint32_t kShrinkJobsMax = 256;

struct ShrinkOptions {
  uint64_t runs_max = 2000;  // candidate runs, the budget (no wall clock: deterministic)
  uint32_t jobs = 1;         // threads evaluating candidates; does not change the result
  std::function<void(const ShrinkProgress&)> on_progress;
  // Set (by a signal handler, say) to stop early: no candidate starts after it is seen, and
  // the result is the smallest failing run found so far (interrupted). May be null.
  const std::atomic<bool>* stop = nullptr;
};

// What one pass did, over all rounds.
struct ShrinkPassStats {
  std::string pass;
  uint64_t runs = 0;          // charged
  uint64_t improvements = 0;  // candidates adopted
};

struct ShrinkResult {
  // The smallest failing run: the input's scenario, seed, strategy and budgets with the minimised
  // choices (the whole recorded schedule, so it replays under any fallback), and the expected
  // outcome of re-running it. replay_command is left empty for the caller, who knows the path.
  Repro repro;
  FailureSignature signature;
  ScheduleMetrics before;
  ScheduleMetrics after;
  uint64_t runs = 0;              // candidate runs charged to the budget
  uint64_t runs_speculative = 0;  // run in parallel past an adopted candidate: not charged
  uint64_t improvements = 0;
  std::vector<ShrinkPassStats> passes;   // in the order they first ran
  bool budget_exhausted = false;         // stopped by runs_max before a fixed point
  bool interrupted = false;              // stopped by options.stop before a fixed point
  bool input_trace_hash_matched = true;  // the input re-ran to its expected trace hash
};

// Shrinks `input` (a repro of `program` that fails). Errors: InvalidArgument for bad options
// or a repro of another program; FailedPrecondition when the repro records no failure or its
// failure does not reproduce (the re-run gives another signature); Internal when the shrunk
// schedule does not replay to itself (a determinism bug); ResourceExhausted when a worker thread
// could not start (sim/worker_threads.h).
absl::StatusOr<ShrinkResult> ShrinkRepro(const Program& program, const Repro& input,
                                         const ShrinkOptions& options);

// Where a shrunk repro goes by default: "dir/x.json" -> "dir/x.min.json" (".min.json" appended
// when the path does not end in ".json").
std::string ShrunkReproPath(std::string_view input_path);

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_SHRINK_H_
