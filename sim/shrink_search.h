// ShrinkSearch: the state a shrink is in and the ways a pass tries candidates (sim/shrink.h has
// the method). It holds the smallest failing run so far, the budget of candidate runs, the
// cache of candidates already run, and the statistics per pass. A pass (sim/shrink_passes.h)
// builds candidates from best() and hands them to Consider (one at a time) or ScanDown (an
// index space scanned from its end, candidates run in batches of options.jobs); a candidate
// that keeps the failure and is smaller is adopted at once. Only the candidates up to the
// adopted one are charged, so the result is the same for any number of jobs.
//
// Thread-safety: not thread-safe; the thread that called ShrinkRepro. Candidates run on the
// BatchRunner's threads.
#ifndef RESTORESIM_SIM_SHRINK_SEARCH_H_
#define RESTORESIM_SIM_SHRINK_SEARCH_H_

#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/batch_runner.h"
#include "sim/shrink_schedule.h"

namespace restoresim::sim::shrinking {

class ShrinkSearch {
 public:
  using Maker = std::function<std::optional<Candidate>(size_t)>;

  ShrinkSearch(const Program& program, const RunConfig& base, FailureSignature signature,
               Schedule start, const ShrinkOptions& options);

  const Schedule& best() const { return best_; }
  uint64_t runs() const { return runs_; }
  uint64_t runs_speculative() const { return runs_speculative_; }
  uint64_t improvements() const { return improvements_; }
  const std::vector<ShrinkPassStats>& passes() const { return passes_; }
  // A candidate was refused for the budget, or because options.stop was set (interrupted()).
  bool exhausted() const { return exhausted_; }
  bool interrupted() const { return interrupted_; }
  const absl::Status& workers() const { return pool_.status(); }  // not OK: nothing may run

  // Runs one candidate (charged, unless it ran before) and adopts it when it keeps the
  // signature and is smaller. Returns whether it keeps the signature.
  bool Consider(const Candidate& candidate, std::string_view pass);

  // Scans indices of the best run from the last to the first: `refresh` (re)computes the
  // index space on the current best run and returns its size; `make_at` builds the candidate
  // for an index (nullopt: none there). After an improvement the scan goes on below the
  // adopted index. Returns whether anything was adopted.
  bool ScanDown(const std::function<size_t()>& refresh, const Maker& make_at,
                std::string_view pass);

  // The positions of the best run's choices that `want` picks.
  std::vector<size_t> Positions(ChoicePredicate want) const;

 private:
  // Whether a candidate may still run: false (and exhausted) past the budget or once stopped.
  bool MayRun();
  // Whether options.stop was set (then interrupted and exhausted).
  bool StopSeen();
  uint64_t StepsCap() const;
  Schedule Evaluate(const Candidate& candidate, uint64_t steps_cap) const;
  ShrinkPassStats& Stats(std::string_view pass);
  void Charge(std::string_view pass);
  void Adopt(Schedule s, std::string_view pass);
  void Remember(const CandidateKey& key, bool keeps);
  // Tries make(0), make(1), ... in order in batches of `jobs` and adopts the first that keeps
  // the signature and is smaller; returns its index.
  std::optional<size_t> TryFirst(size_t count, const Maker& make, std::string_view pass);

  const Program& program_;
  const RunConfig base_;  // the input's run without its choices
  const FailureSignature signature_;
  const ShrinkOptions& options_;
  Schedule best_;
  BatchRunner pool_;
  std::map<CandidateKey, bool> cache_;  // charged candidates: whether each kept the signature
  std::vector<ShrinkPassStats> passes_;
  uint64_t runs_ = 0;
  uint64_t runs_speculative_ = 0;
  uint64_t improvements_ = 0;
  bool exhausted_ = false;
  bool interrupted_ = false;
};

}  // namespace restoresim::sim::shrinking

#endif  // RESTORESIM_SIM_SHRINK_SEARCH_H_
