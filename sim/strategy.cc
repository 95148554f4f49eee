#include "sim/strategy.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "core/util/check.h"

namespace restoresim::sim {
namespace {

template <typename T>
bool ParseDecimal(std::string_view text, T& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && !text.empty();
}

}  // namespace

// ---- random walk ----

SimThreadId RandomWalkStrategy::PickThread(std::span<const SimThreadId> runnable,
                                           std::span<const PendingOp> /*pending*/,
                                           SimThreadId /*current*/, uint64_t /*step*/) {
  if (runnable.size() == 1) return runnable[0];
  return runnable[prng_.Uniform(runnable.size())];
}

uint64_t RandomWalkStrategy::PickValue(uint64_t n, ChoiceKind /*kind*/) {
  return n == 1 ? 0 : prng_.Uniform(n);
}

// ---- PCT ----

PctStrategy::PctStrategy(const Prng& prng, uint32_t depth, uint64_t steps_estimate)
    : prng_(prng), depth_(depth), steps_estimate_(std::max<uint64_t>(steps_estimate, 1)) {
  RS_CHECK(depth_ >= 1, "pct depth must be >= 1");
  for (uint32_t i = 1; i < depth_; ++i) {
    change_steps_.push_back(1 + prng_.Uniform(steps_estimate_));
  }
  std::sort(change_steps_.begin(), change_steps_.end());
}

std::string PctStrategy::Spec() const { return fmt::format("pct:{}:{}", depth_, steps_estimate_); }

void PctStrategy::OnSpawn(SimThreadId thread) {
  if (priority_.size() <= thread) priority_.resize(thread + 1, 0);
  // Initial priorities lie above every change-point priority (1..d-1); a random 40-bit rank
  // makes them distinct with overwhelming probability, and ties fall to the lower thread id.
  priority_[thread] = depth_ + 1 + prng_.Uniform(uint64_t{1} << 40);
}

SimThreadId PctStrategy::PickThread(std::span<const SimThreadId> runnable,
                                    std::span<const PendingOp> /*pending*/, SimThreadId current,
                                    uint64_t step) {
  while (next_change_ < change_steps_.size() && change_steps_[next_change_] <= step) {
    if (current != kNoSimThread && current < priority_.size()) {
      // Below every initial priority and below every earlier change point (d-1, d-2, ...,
      // 1), so the thread preempted last runs last, as in Coyote's PCT implementation.
      priority_[current] = depth_ - 1 - next_change_;
    }
    ++next_change_;
  }
  SimThreadId best = runnable[0];
  for (SimThreadId t : runnable) {
    if (priority_[t] > priority_[best]) best = t;
  }
  return best;
}

uint64_t PctStrategy::PickValue(uint64_t n, ChoiceKind /*kind*/) {
  return n == 1 ? 0 : prng_.Uniform(n);
}

// ---- races ----

bool Races(const PendingOp& a, const PendingOp& b) {
  if (a.access == Access::kNone || b.access == Access::kNone) return false;
  return a.object == b.object && (a.access == Access::kWrite || b.access == Access::kWrite);
}

// ---- POS ----

void PosStrategy::EnsurePriority(SimThreadId thread) {
  if (thread >= priority_.size()) {
    priority_.resize(thread + 1, 0);
    has_priority_.resize(thread + 1, false);
  }
  if (!has_priority_[thread]) {
    priority_[thread] = prng_.Next64();
    has_priority_[thread] = true;
  }
}

void PosStrategy::OnSpawn(SimThreadId thread) { EnsurePriority(thread); }

SimThreadId PosStrategy::PickThread(std::span<const SimThreadId> runnable,
                                    std::span<const PendingOp> pending, SimThreadId /*current*/,
                                    uint64_t /*step*/) {
  // The highest priority among the operations that race with nothing, if there is one, else
  // among all; ties to the lower thread id (runnable is ascending).
  SimThreadId best = kNoSimThread;
  SimThreadId best_free = kNoSimThread;
  for (SimThreadId t : runnable) {
    RS_CHECK(t < pending.size(), "pos: no pending operation for thread {}", t);
    EnsurePriority(t);
    SimThreadId& slot = pending[t].access == Access::kNone ? best_free : best;
    if (slot == kNoSimThread || priority_[t] > priority_[slot]) slot = t;
  }
  const SimThreadId next = best_free != kNoSimThread ? best_free : best;
  // The picked operation runs: the thread's next one is new, and every operation racing with
  // the one that runs now is drawn again. Draws in ascending thread order: deterministic.
  const PendingOp& executed = pending[next];
  for (SimThreadId t : runnable) {
    if (t == next || Races(pending[t], executed)) priority_[t] = prng_.Next64();
  }
  return next;
}

uint64_t PosStrategy::PickValue(uint64_t n, ChoiceKind /*kind*/) {
  return n == 1 ? 0 : prng_.Uniform(n);
}

// ---- replay ----

ReplayStrategy::ReplayStrategy(std::vector<uint64_t> choices, std::unique_ptr<Strategy> fallback,
                               bool skip_unrunnable)
    : choices_(std::move(choices)),
      fallback_(std::move(fallback)),
      skip_unrunnable_(skip_unrunnable) {}

void ReplayStrategy::OnSpawn(SimThreadId thread) {
  if (fallback_) fallback_->OnSpawn(thread);
}

SimThreadId ReplayStrategy::PickThread(std::span<const SimThreadId> runnable,
                                       std::span<const PendingOp> pending, SimThreadId current,
                                       uint64_t step) {
  while (next_ < choices_.size()) {
    const uint64_t want = choices_[next_++];
    if (std::find(runnable.begin(), runnable.end(), want) != runnable.end()) {
      return static_cast<SimThreadId>(want);
    }
    diverged_ = true;
    if (!skip_unrunnable_) break;
  }
  if (fallback_) return fallback_->PickThread(runnable, pending, current, step);
  // Round-robin after the current thread: fair, so a busy-waiting thread cannot starve the
  // others once the log is exhausted (what a schedule shrinker relies on).
  auto after = std::upper_bound(runnable.begin(), runnable.end(), current);
  return after == runnable.end() || current == kNoSimThread ? runnable[0] : *after;
}

uint64_t ReplayStrategy::PickValue(uint64_t n, ChoiceKind kind) {
  if (next_ < choices_.size()) {
    const uint64_t want = choices_[next_++];
    if (want < n) return want;
    diverged_ = true;
  }
  if (fallback_) return fallback_->PickValue(n, kind);
  // Without a log or fallback: no spurious wake-ups (value >= any per-mille), else the first.
  return kind == ChoiceKind::kSpurious ? n - 1 : 0;
}

// ---- quiet ----

SimThreadId QuietThreadPick(std::span<const SimThreadId> runnable, SimThreadId current) {
  RS_CHECK(!runnable.empty());
  if (current == kNoSimThread) return runnable[0];
  if (std::binary_search(runnable.begin(), runnable.end(), current)) return current;
  auto after = std::upper_bound(runnable.begin(), runnable.end(), current);
  return after == runnable.end() ? runnable[0] : *after;
}

uint64_t QuietValue(uint64_t n, ChoiceKind kind) {
  RS_CHECK(n > 0);
  return kind == ChoiceKind::kSpurious ? n - 1 : 0;
}

SimThreadId QuietStrategy::PickThread(std::span<const SimThreadId> runnable,
                                      std::span<const PendingOp> /*pending*/, SimThreadId current,
                                      uint64_t /*step*/) {
  SimThreadId pick = QuietThreadPick(runnable, current);
  if (pick == last_pick_ && run_length_ >= kRunLengthMax && runnable.size() > 1) {
    auto after = std::upper_bound(runnable.begin(), runnable.end(), pick);
    pick = after == runnable.end() ? runnable[0] : *after;
  }
  run_length_ = pick == last_pick_ ? run_length_ + 1 : 1;
  last_pick_ = pick;
  return pick;
}

// ---- spec ----

absl::StatusOr<StrategySpec> StrategySpec::Parse(std::string_view text) {
  StrategySpec spec;
  if (text == "random") return spec;
  if (text == "pos") {
    spec.kind = Kind::kPos;
    return spec;
  }
  if (text == "pct") {
    return absl::InvalidArgumentError(
        "strategy 'pct' needs a depth: 'pct:D' or 'pct:D:K' (e.g. pct:3)");
  }
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (parts[0] != "pct" || parts.size() > 3) {
    return absl::InvalidArgumentError(fmt::format(
        "unknown strategy '{}': expected 'random', 'pos', 'pct:D' or 'pct:D:K' (depth D >= 1, "
        "step estimate K >= 1)",
        text));
  }
  spec.kind = Kind::kPct;
  if (parts.size() >= 2) {
    uint32_t depth = 0;
    if (!ParseDecimal(parts[1], depth) || depth < 1 || depth > 64) {
      return absl::InvalidArgumentError(
          fmt::format("strategy '{}': pct depth must be an integer in [1, 64]", text));
    }
    spec.pct_depth = depth;
  }
  if (parts.size() == 3) {
    uint64_t steps = 0;
    if (!ParseDecimal(parts[2], steps) || steps < 1) {
      return absl::InvalidArgumentError(
          fmt::format("strategy '{}': pct step estimate must be a positive integer", text));
    }
    spec.pct_steps = steps;
  }
  return spec;
}

std::string StrategySpec::ToString() const {
  if (kind == Kind::kRandom) return "random";
  if (kind == Kind::kPos) return "pos";
  if (pct_steps == 0) return fmt::format("pct:{}", pct_depth);
  return fmt::format("pct:{}:{}", pct_depth, pct_steps);
}

std::unique_ptr<Strategy> MakeStrategy(const StrategySpec& spec, const Prng& prng,
                                       uint64_t steps_hint) {
  switch (spec.kind) {
    case StrategySpec::Kind::kRandom:
      return std::make_unique<RandomWalkStrategy>(prng);
    case StrategySpec::Kind::kPct:
      return std::make_unique<PctStrategy>(prng, spec.pct_depth,
                                           spec.pct_steps != 0 ? spec.pct_steps : steps_hint);
    case StrategySpec::Kind::kPos:
      return std::make_unique<PosStrategy>(prng);
  }
  return nullptr;
}

}  // namespace restoresim::sim
