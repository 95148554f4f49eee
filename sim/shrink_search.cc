#include "sim/shrink_search.h"

#include <algorithm>
#include <utility>

namespace restoresim::sim::shrinking {
namespace {

// A candidate may run this many steps past twice the smallest run's before it is cut off: it
// is then a step-budget failure (another signature), and a run that ends before the cap is the
// same run under any larger budget, so the cap only saves time.
constexpr uint64_t kStepsCapSlack = 1000;
constexpr size_t kCacheEntriesMax = 4'000'000;

}  // namespace

ShrinkSearch::ShrinkSearch(const Program& program, const RunConfig& base,
                           FailureSignature signature, Schedule start,
                           const ShrinkOptions& options)
    : program_(program),
      base_(base),
      signature_(std::move(signature)),
      options_(options),
      best_(std::move(start)),
      pool_(options.jobs) {}

bool ShrinkSearch::StopSeen() {
  if (options_.stop != nullptr && options_.stop->load()) interrupted_ = exhausted_ = true;
  return interrupted_;
}

bool ShrinkSearch::MayRun() {
  // Polled before every candidate (batch): a signal stops the shrink within one batch of runs.
  if (StopSeen() || runs_ >= options_.runs_max) exhausted_ = true;
  return !exhausted_;
}

uint64_t ShrinkSearch::StepsCap() const {
  const uint64_t budget = base_.steps_max != 0 ? base_.steps_max : program_.steps_max;
  if (signature_.kind == RunOutcome::Kind::kStepBudget) return budget;
  return std::min(budget, SaturatingAdd(SaturatingAdd(best_.metrics.steps, best_.metrics.steps),
                                        kStepsCapSlack));
}

Schedule ShrinkSearch::Evaluate(const Candidate& candidate, uint64_t steps_cap) const {
  RunConfig config = base_;
  config.replay_choices = candidate;
  config.replay_fallback = RunConfig::ReplayFallback::kQuiet;
  config.record_choices = true;
  config.trace_mode = TraceMode::kHashOnly;
  config.steps_max = steps_cap;
  RunResult r = RunProgram(program_, config);
  return ScheduleOf(r, signature_);
}

ShrinkPassStats& ShrinkSearch::Stats(std::string_view pass) {
  for (ShrinkPassStats& p : passes_) {
    if (p.pass == pass) return p;
  }
  return passes_.emplace_back(ShrinkPassStats{.pass = std::string(pass)});
}

void ShrinkSearch::Charge(std::string_view pass) {
  ++runs_;
  ++Stats(pass).runs;
}

void ShrinkSearch::Adopt(Schedule s, std::string_view pass) {
  best_ = std::move(s);
  ++improvements_;
  ++Stats(pass).improvements;
  if (options_.on_progress) options_.on_progress(ShrinkProgress{runs_, pass, best_.metrics});
}

void ShrinkSearch::Remember(const CandidateKey& key, bool keeps) {
  if (cache_.size() < kCacheEntriesMax) cache_.emplace(key, keeps);
}

bool ShrinkSearch::Consider(const Candidate& candidate, std::string_view pass) {
  const CandidateKey key = KeyOf(candidate);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;  // not smaller now
  if (!MayRun()) return false;
  Charge(pass);
  Schedule s = Evaluate(candidate, StepsCap());
  Remember(key, s.keeps);
  const bool keeps = s.keeps;
  if (keeps && Smaller(s, best_)) Adopt(std::move(s), pass);
  return keeps;
}

// Candidates run in batches of `jobs`; only those up to the adopted one are charged (and
// remembered), so the result and the run count are the same for any number of jobs.
std::optional<size_t> ShrinkSearch::TryFirst(size_t count, const Maker& make,
                                             std::string_view pass) {
  size_t next = 0;
  while (next < count) {
    if (!MayRun()) return std::nullopt;
    const uint64_t batch_max = std::min<uint64_t>(options_.jobs, options_.runs_max - runs_);
    std::vector<std::pair<size_t, Candidate>> batch;
    std::vector<CandidateKey> keys;
    // Polled per candidate made too: on a long schedule, skipping candidates already run costs
    // a hash of the whole schedule each (a 4M-choice repro spent minutes here without a run).
    for (; next < count && batch.size() < batch_max && !StopSeen(); ++next) {
      std::optional<Candidate> candidate = make(next);
      if (!candidate.has_value()) continue;
      const CandidateKey key = KeyOf(*candidate);
      if (cache_.count(key) > 0 || std::find(keys.begin(), keys.end(), key) != keys.end()) {
        continue;
      }
      keys.push_back(key);
      batch.emplace_back(next, std::move(*candidate));
    }
    if (batch.empty() || interrupted_) break;
    std::vector<Schedule> results(batch.size());
    const uint64_t cap = StepsCap();
    pool_.Run(batch.size(), [&](size_t i) { results[i] = Evaluate(batch[i].second, cap); });
    for (size_t i = 0; i < batch.size(); ++i) {
      Charge(pass);
      Remember(keys[i], results[i].keeps);
      if (results[i].keeps && Smaller(results[i], best_)) {
        runs_speculative_ += batch.size() - i - 1;
        Adopt(std::move(results[i]), pass);
        return batch[i].first;
      }
    }
  }
  return std::nullopt;
}

bool ShrinkSearch::ScanDown(const std::function<size_t()>& refresh, const Maker& make_at,
                            std::string_view pass) {
  bool improved = false;
  size_t hi = refresh();
  while (hi > 0 && !exhausted_) {
    const std::optional<size_t> found = TryFirst(
        hi, [&](size_t k) { return make_at(hi - 1 - k); }, pass);
    if (!found.has_value()) break;
    improved = true;
    hi = std::min(hi - 1 - *found, refresh());
  }
  return improved;
}

std::vector<size_t> ShrinkSearch::Positions(ChoicePredicate want) const {
  std::vector<size_t> positions;
  for (size_t i = 0; i < best_.infos.size(); ++i) {
    if (want(best_.infos[i], best_.choices[i])) positions.push_back(i);
  }
  return positions;
}

}  // namespace restoresim::sim::shrinking
