#include "sim/shrink.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "core/util/stable_hash.h"
#include "sim/runner.h"

namespace restoresim::sim {
namespace {

// A candidate may run this many steps past twice the smallest run's before it is cut off: it
// is then a step-budget failure (another signature), and a run that ends before the cap is the
// same run under any larger budget, so the cap only saves time.
constexpr uint64_t kStepsCapSlack = 1000;
constexpr size_t kCacheEntriesMax = 4'000'000;
constexpr size_t kChunkSizes[] = {8, 4, 2, 1};
constexpr uint64_t kRoundsMax = 10'000;  // a round that improves nothing ends shrinking anyway

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

absl::StatusOr<RunOutcome::Kind> OutcomeKindFromName(std::string_view name) {
  for (auto kind : {RunOutcome::Kind::kOk, RunOutcome::Kind::kFailed, RunOutcome::Kind::kDeadlock,
                    RunOutcome::Kind::kStepBudget}) {
    if (OutcomeKindName(kind) == name) return kind;
  }
  return absl::InvalidArgumentError(fmt::format("unknown expected outcome '{}'", name));
}

// ---- a run as the shrinker keeps it ----

struct Schedule {
  std::vector<uint64_t> choices;
  std::vector<ChoiceInfo> infos;
  ScheduleMetrics metrics;
  bool keeps = false;  // fails with the signature being kept
};

Schedule ScheduleOf(RunResult& r, const FailureSignature& signature) {
  Schedule s;
  s.keeps = SignatureOf(r.outcome) == signature;
  s.metrics = MeasureSchedule(r.choices, r.choice_infos, r.steps);
  s.choices = std::move(r.choices);
  s.infos = std::move(r.choice_infos);
  return s;
}

// The order runs shrink in (see the header); strict, so every adoption is progress.
bool Smaller(const Schedule& a, const Schedule& b) {
  auto key = [](const ScheduleMetrics& m) {
    return std::make_tuple(m.preemptions, m.sched_events, m.data_events, m.data_sum, m.steps,
                           m.choices, m.off_quiet);
  };
  const auto ka = key(a.metrics);
  const auto kb = key(b.metrics);
  if (ka != kb) return ka < kb;
  return a.choices < b.choices;
}

using CandidateKey = std::pair<uint64_t, uint64_t>;  // two independent hashes of the list

CandidateKey KeyOf(const std::vector<uint64_t>& candidate) {
  StableHash a;
  StableHash b(0x13198A2E03707344ull);
  a.Add(candidate.size());
  b.Add(candidate.size());
  for (uint64_t v : candidate) {
    a.Add(v);
    b.Add(~v);
  }
  return {a.Value(), b.Value()};
}

// Runs batches of independent calls on `threads` OS threads (the caller's among them). The
// workers live as long as the runner, so each keeps its pool of fiber stacks across batches.
class BatchRunner {
 public:
  explicit BatchRunner(uint32_t threads) {
    for (uint32_t i = 1; i < threads; ++i) workers_.emplace_back([this]() { WorkerLoop(); });
  }
  ~BatchRunner() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  // Calls fn(i) for every i in [0, count) and returns when all calls have returned.
  void Run(size_t count, const std::function<void(size_t)>& fn) {
    if (workers_.empty() || count <= 1) {
      for (size_t i = 0; i < count; ++i) fn(i);
      return;
    }
    std::unique_lock<std::mutex> lock(mu_);
    fn_ = &fn;
    count_ = count;
    next_ = 0;
    done_ = 0;
    work_cv_.notify_all();
    while (next_ < count_) {
      const size_t i = next_++;
      lock.unlock();
      fn(i);
      lock.lock();
      ++done_;
    }
    done_cv_.wait(lock, [this]() { return done_ == count_; });
    fn_ = nullptr;
    count_ = 0;
    next_ = 0;
  }

 private:
  void WorkerLoop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [this]() { return stop_ || next_ < count_; });
      if (stop_) return;
      const size_t i = next_++;
      const std::function<void(size_t)>* fn = fn_;
      lock.unlock();
      (*fn)(i);
      lock.lock();
      if (++done_ == count_) done_cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  const std::function<void(size_t)>* fn_ = nullptr;  // guarded by mu_
  size_t count_ = 0;                                 // guarded by mu_
  size_t next_ = 0;                                  // guarded by mu_
  size_t done_ = 0;                                  // guarded by mu_
  bool stop_ = false;                                // guarded by mu_
  std::vector<std::thread> workers_;
};

// ---- the shrinker ----

class Shrinker {
 public:
  Shrinker(const Program& program, const RunConfig& base, FailureSignature signature,
           Schedule start, const ShrinkOptions& options)
      : program_(program),
        base_(base),
        signature_(std::move(signature)),
        options_(options),
        best_(std::move(start)),
        pool_(options.jobs) {}

  // Runs the passes to a fixed point or until the budget is spent.
  void Run() {
    for (uint64_t round = 0; round < kRoundsMax && !exhausted_; ++round) {
      const uint64_t before = improvements_;
      Truncate();
      Coalesce();
      MovePreemptions();
      for (size_t size : kChunkSizes) DeleteChunks(size);
      QuietEach(/*eventful=*/true);
      LowerData();
      LowerAndDelete();
      QuietEach(/*eventful=*/false);
      if (improvements_ == before) break;
    }
  }

  const Schedule& best() const { return best_; }
  uint64_t runs() const { return runs_; }
  uint64_t runs_speculative() const { return runs_speculative_; }
  uint64_t improvements() const { return improvements_; }
  const std::vector<ShrinkPassStats>& passes() const { return passes_; }
  bool exhausted() const { return exhausted_; }

 private:
  using Candidate = std::vector<uint64_t>;
  using Maker = std::function<std::optional<Candidate>(size_t)>;

  uint64_t StepsCap() const {
    const uint64_t budget = base_.steps_max != 0 ? base_.steps_max : program_.steps_max;
    if (signature_.kind == RunOutcome::Kind::kStepBudget) return budget;
    return std::min(budget, SaturatingAdd(SaturatingAdd(best_.metrics.steps, best_.metrics.steps),
                                          kStepsCapSlack));
  }

  Schedule Evaluate(const Candidate& candidate, uint64_t steps_cap) const {
    RunConfig config = base_;
    config.replay_choices = candidate;
    config.replay_fallback = RunConfig::ReplayFallback::kQuiet;
    config.record_choices = true;
    config.trace_mode = TraceMode::kHashOnly;
    config.steps_max = steps_cap;
    RunResult r = RunProgram(program_, config);
    return ScheduleOf(r, signature_);
  }

  ShrinkPassStats& Stats(std::string_view pass) {
    for (ShrinkPassStats& p : passes_) {
      if (p.pass == pass) return p;
    }
    return passes_.emplace_back(ShrinkPassStats{.pass = std::string(pass)});
  }

  void Charge(std::string_view pass) {
    ++runs_;
    ++Stats(pass).runs;
  }

  void Adopt(Schedule s, std::string_view pass) {
    best_ = std::move(s);
    ++improvements_;
    ++Stats(pass).improvements;
    if (options_.on_progress) options_.on_progress(ShrinkProgress{runs_, pass, best_.metrics});
  }

  void Remember(const CandidateKey& key, bool keeps) {
    if (cache_.size() < kCacheEntriesMax) cache_.emplace(key, keeps);
  }

  // Runs one candidate (charged, unless it ran before) and adopts it when it keeps the
  // signature and is smaller. Returns whether it keeps the signature.
  bool Consider(const Candidate& candidate, std::string_view pass) {
    const CandidateKey key = KeyOf(candidate);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;  // not smaller now
    if (runs_ >= options_.runs_max) {
      exhausted_ = true;
      return false;
    }
    Charge(pass);
    Schedule s = Evaluate(candidate, StepsCap());
    Remember(key, s.keeps);
    const bool keeps = s.keeps;
    if (keeps && Smaller(s, best_)) Adopt(std::move(s), pass);
    return keeps;
  }

  // Tries make(0), make(1), ... (nullopt: no candidate at that index) in order and adopts the
  // first that keeps the signature and is smaller; returns its index. Candidates run in
  // batches of `jobs`; only those up to the adopted one are charged (and remembered), so the
  // result and the run count are the same for any number of jobs.
  std::optional<size_t> TryFirst(size_t count, const Maker& make, std::string_view pass) {
    size_t next = 0;
    while (next < count) {
      if (runs_ >= options_.runs_max) {
        exhausted_ = true;
        return std::nullopt;
      }
      const uint64_t batch_max = std::min<uint64_t>(options_.jobs, options_.runs_max - runs_);
      std::vector<std::pair<size_t, Candidate>> batch;
      std::vector<CandidateKey> keys;
      for (; next < count && batch.size() < batch_max; ++next) {
        std::optional<Candidate> candidate = make(next);
        if (!candidate.has_value()) continue;
        const CandidateKey key = KeyOf(*candidate);
        if (cache_.count(key) > 0 || std::find(keys.begin(), keys.end(), key) != keys.end()) {
          continue;
        }
        keys.push_back(key);
        batch.emplace_back(next, std::move(*candidate));
      }
      if (batch.empty()) break;
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

  // Scans indices of the best run from the last to the first: `refresh` (re)computes the
  // index space on the current best run and returns its size; `make_at` builds the candidate
  // for an index. After an improvement the scan goes on below the adopted index.
  bool ScanDown(const std::function<size_t()>& refresh,
                const std::function<std::optional<Candidate>(size_t)>& make_at,
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

  std::vector<size_t> Positions(bool (*want)(const ChoiceInfo&, uint64_t)) const {
    std::vector<size_t> positions;
    for (size_t i = 0; i < best_.infos.size(); ++i) {
      if (want(best_.infos[i], best_.choices[i])) positions.push_back(i);
    }
    return positions;
  }

  static bool OffQuiet(const ChoiceInfo& info, uint64_t value) { return value != info.quiet; }
  static bool Eventful(const ChoiceInfo& info, uint64_t) { return info.eventful; }
  static bool EventfulOrData(const ChoiceInfo& info, uint64_t) {
    return info.eventful || info.kind == ChoiceKind::kData;
  }
  static bool IsData(const ChoiceInfo& info, uint64_t) { return info.kind == ChoiceKind::kData; }
  static bool FreeOffQuiet(const ChoiceInfo& info, uint64_t value) {
    return !info.eventful && value != info.quiet;
  }
  static bool LowerableData(const ChoiceInfo& info, uint64_t value) {
    return (info.kind == ChoiceKind::kData || info.kind == ChoiceKind::kNotifyTarget) && value > 0;
  }

  // Cuts the schedule before one of its off-quiet choices and lets the quiet fallback run the
  // rest: binary search for the earliest cut that still fails (a cut drops every preemption
  // and data event after it).
  bool Truncate() {
    const uint64_t before = improvements_;
    const Candidate base = best_.choices;
    const std::vector<size_t> cuts = Positions(&OffQuiet);
    size_t lo = 0;
    size_t hi = cuts.size();  // cutting nothing keeps the signature
    while (lo < hi && !exhausted_) {
      const size_t mid = lo + (hi - lo) / 2;
      if (Consider(Candidate(base.begin(), base.begin() + cuts[mid]), "truncate")) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return improvements_ != before;
  }

  struct Block {
    size_t begin;
    size_t end;
    uint64_t thread;
  };

  // The best run's thread runs ("blocks"): a thread pick with the choices up to the next pick of
  // another thread, so the data choices a thread makes move with it.
  std::vector<Block> Blocks() const {
    std::vector<Block> blocks;
    const size_t n = best_.choices.size();
    for (size_t i = 0; i < n; ++i) {
      if (best_.infos[i].kind != ChoiceKind::kThread) continue;
      if (!blocks.empty() && blocks.back().thread == best_.choices[i]) continue;
      if (!blocks.empty()) blocks.back().end = i;
      blocks.push_back(Block{blocks.empty() ? 0 : i, n, best_.choices[i]});
    }
    return blocks;
  }

  // Regroups a range of blocks by thread, threads in the order they first run there, each
  // thread's blocks in their order: A B A C B A -> A A A B B C. Ranges halve, as in delta
  // debugging, from the whole run down to 4 blocks; one success removes many preemptions.
  bool Coalesce() {
    bool improved = false;
    std::vector<Block> blocks = Blocks();
    for (size_t size = blocks.size(); size >= 4 && !exhausted_; size /= 2) {
      auto refresh = [&]() {
        blocks = Blocks();
        return (blocks.size() + size - 1) / size;
      };
      auto make_at = [&](size_t index) -> std::optional<Candidate> {
        const size_t first = index * size;
        const size_t last = std::min(first + size, blocks.size());
        if (last - first < 3) return std::nullopt;
        std::vector<uint64_t> threads;  // in the order of their first block in the range
        for (size_t b = first; b < last; ++b) {
          if (std::find(threads.begin(), threads.end(), blocks[b].thread) == threads.end()) {
            threads.push_back(blocks[b].thread);
          }
        }
        if (threads.size() == last - first) return std::nullopt;  // nothing to merge
        const Candidate& c = best_.choices;
        Candidate out(c.begin(), c.begin() + blocks[first].begin);
        out.reserve(c.size());
        for (uint64_t thread : threads) {
          for (size_t b = first; b < last; ++b) {
            if (blocks[b].thread != thread) continue;
            out.insert(out.end(), c.begin() + blocks[b].begin, c.begin() + blocks[b].end);
          }
        }
        out.insert(out.end(), c.begin() + blocks[last - 1].end, c.end());
        return out;
      };
      improved = ScanDown(refresh, make_at, "coalesce") || improved;
    }
    return improved;
  }

  // Removes one preemption (thread A switched out for B at p) in one of these ways, tried in
  // this order:
  //  * absorb: A runs on at p for up to k more picks (k = 1, 4, 16, ...): candidates replay with
  //    picks of a thread that cannot run skipped, so this is "A runs until it blocks, at most k
  //    steps", then the schedule goes on as recorded (CHESS's view of a preemption);
  //  * pull: A's next run moves up to p: A1 [B ...] A2 -> A1 A2 [B ...];
  //  * push: A's preempted run moves down to A's next run: A1 [B ...] A2 -> [B ...] A1 A2.
  // Pull and push are Tinertia's context-switch removals (Jalbert and Sen, FSE 2010) on the
  // recorded choices. A run ("block") is a thread pick with the choices up to the next pick of
  // another thread, so the data choices a thread makes move with it.
  bool MovePreemptions() {
    static constexpr size_t kAbsorbPicks[] = {1, 4, 16, 64, 256, 1024};
    static constexpr size_t kVariants = std::size(kAbsorbPicks) + 2;
    std::vector<Block> blocks;
    std::vector<size_t> preempting;  // indices into blocks of the blocks that preempted
    auto refresh = [&]() {
      blocks = Blocks();
      preempting.clear();
      for (size_t b = 1; b < blocks.size(); ++b) {
        if (best_.infos[blocks[b].begin].eventful) preempting.push_back(b);
      }
      return preempting.size() * kVariants;
    };
    auto make_at = [&](size_t index) -> std::optional<Candidate> {
      // ScanDown goes from the last index down: the last preemption first, its variants in the
      // order above.
      const size_t x = preempting[index / kVariants];
      const size_t variant = kVariants - 1 - index % kVariants;
      const Block& preempted = blocks[x - 1];
      const Candidate& c = best_.choices;
      const size_t p = blocks[x].begin;
      Candidate out;
      out.reserve(c.size() + 2);
      auto append = [&](size_t from, size_t to) {
        out.insert(out.end(), c.begin() + from, c.begin() + to);
      };
      if (variant < std::size(kAbsorbPicks)) {
        append(0, p);
        out.insert(out.end(), kAbsorbPicks[variant], preempted.thread);
        append(p, c.size());
        return out;
      }
      size_t k = x + 1;
      while (k < blocks.size() && blocks[k].thread != preempted.thread) ++k;
      if (k == blocks.size()) return std::nullopt;  // A never ran again
      const Block& resumed = blocks[k];
      if (variant == std::size(kAbsorbPicks)) {  // pull
        append(0, p);
        append(resumed.begin, resumed.end);
        append(p, resumed.begin);
      } else {  // push
        append(0, preempted.begin);
        append(p, resumed.begin);
        append(preempted.begin, p);
        append(resumed.begin, resumed.end);
      }
      append(resumed.end, c.size());
      return out;
    };
    return ScanDown(refresh, make_at, "move-preemption");
  }

  // Deletes `size` choices starting at an eventful one or at a data choice (delta debugging's
  // chunks, anchored where something happens: deleting a run of quiet thread picks mostly
  // shifts the same run). Deleting a data choice of 0 shifts the program's later draws up, so
  // that a count lowered next (LowerData) keeps the draws that matter.
  bool DeleteChunks(size_t size) {
    std::vector<size_t> starts;
    auto refresh = [&]() {
      starts = Positions(&EventfulOrData);
      return starts.size();
    };
    auto make_at = [&](size_t index) -> std::optional<Candidate> {
      Candidate c = best_.choices;
      const size_t begin = starts[index];
      c.erase(c.begin() + begin, c.begin() + std::min(begin + size, c.size()));
      return c;
    };
    return ScanDown(refresh, make_at, fmt::format("delete-{}", size));
  }

  // Replaces one choice by its quiet answer and keeps the rest: the eventful ones (a data
  // event, a wake-up, a preemption), or the free thread picks (canonical round-robin order).
  bool QuietEach(bool eventful) {
    std::vector<size_t> positions;
    auto refresh = [&]() {
      positions = Positions(eventful ? &Eventful : &FreeOffQuiet);
      return positions.size();
    };
    auto make_at = [&](size_t index) -> std::optional<Candidate> {
      Candidate c = best_.choices;
      c[positions[index]] = best_.infos[positions[index]].quiet;
      return c;
    };
    return ScanDown(refresh, make_at, eventful ? "quiet-event" : "quiet-pick");
  }

  // Lowers each data choice (last first) to the smallest value that keeps the signature:
  // 0, else a binary search below the current value.
  bool LowerData() {
    const uint64_t before = improvements_;
    std::vector<size_t> positions = Positions(&LowerableData);
    for (size_t i = positions.size(); i-- > 0 && !exhausted_;) {
      const size_t p = positions[i];
      auto fits = [&]() {
        return p < best_.infos.size() && LowerableData(best_.infos[p], best_.choices[p]);
      };
      if (!fits()) continue;
      auto with = [&](uint64_t value) {
        Candidate c = best_.choices;
        c[p] = value;
        return c;
      };
      uint64_t lo = 0;  // the largest value known not to keep the signature
      uint64_t hi = best_.choices[p];
      if (Consider(with(0), "lower-data")) continue;
      while (hi - lo > 1 && !exhausted_ && fits()) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (Consider(with(mid), "lower-data")) {
          hi = mid;
        } else {
          lo = mid;
        }
      }
    }
    return improvements_ != before;
  }

  // Lowers a data choice by one and deletes one of the next draws with the choices up to the
  // draw after it: a count and one of the things it counts go together, since either alone
  // changes what the other means (fewer draws, or the same draws shifted) and is no progress.
  bool LowerAndDelete() {
    static constexpr size_t kSpan = 8;  // later draws tried per lowered one
    std::vector<size_t> draws;
    std::vector<std::pair<size_t, size_t>> pairs;  // indices into draws: (lowered, deleted)
    auto refresh = [&]() {
      draws = Positions(&IsData);
      pairs.clear();
      for (size_t d = 0; d < draws.size(); ++d) {
        if (best_.choices[draws[d]] == 0) continue;
        // Farthest first: the scan goes down, so it tries the nearest first.
        for (size_t e = std::min(draws.size() - 1, d + kSpan); e > d; --e) pairs.emplace_back(d, e);
      }
      return pairs.size();
    };
    auto make_at = [&](size_t index) -> std::optional<Candidate> {
      const auto [d, e] = pairs[index];
      Candidate c = best_.choices;
      c[draws[d]] -= 1;
      const size_t end = e + 1 < draws.size() ? draws[e + 1] : draws[e] + 1;
      c.erase(c.begin() + draws[e], c.begin() + end);
      return c;
    };
    return ScanDown(refresh, make_at, "lower-and-delete");
  }

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
  bool exhausted_ = false;  // a candidate was refused for the budget
};

}  // namespace

// ---- signatures and metrics ----

ScheduleMetrics MeasureSchedule(std::span<const uint64_t> choices,
                                std::span<const ChoiceInfo> infos, uint64_t steps) {
  ScheduleMetrics m;
  m.choices = choices.size();
  m.steps = steps;
  const size_t n = std::min(choices.size(), infos.size());
  for (size_t i = 0; i < n; ++i) {
    const ChoiceInfo& info = infos[i];
    const uint64_t value = choices[i];
    switch (info.kind) {
      case ChoiceKind::kThread:
        m.preemptions += info.eventful ? 1 : 0;
        break;
      case ChoiceKind::kNotifyTarget:
      case ChoiceKind::kSpurious:
        m.sched_events += info.eventful ? 1 : 0;
        break;
      case ChoiceKind::kData:
        m.data_events += value != 0 ? 1 : 0;
        m.data_sum = SaturatingAdd(m.data_sum, value);
        break;
    }
    m.off_quiet += value != info.quiet ? 1 : 0;
  }
  return m;
}

std::string ShrunkReproPath(std::string_view input_path) {
  constexpr std::string_view kJson = ".json";
  std::string_view stem = input_path;
  if (stem.ends_with(kJson)) stem.remove_suffix(kJson.size());
  return std::string(stem) + ".min.json";
}

// ---- the driver ----

absl::StatusOr<ShrinkResult> ShrinkRepro(const Program& program, const Repro& input,
                                         const ShrinkOptions& options) {
  if (options.runs_max > kShrinkRunsMax) {
    return absl::InvalidArgumentError(fmt::format("--max-runs must be at most {}", kShrinkRunsMax));
  }
  if (options.jobs == 0 || options.jobs > kShrinkJobsMax) {
    return absl::InvalidArgumentError(fmt::format("--jobs must be in [1, {}]", kShrinkJobsMax));
  }
  if (input.scenario != program.name) {
    return absl::InvalidArgumentError(
        fmt::format("the repro is of scenario '{}', not '{}'", input.scenario, program.name));
  }
  absl::StatusOr<RunOutcome::Kind> expected_kind = OutcomeKindFromName(input.outcome);
  if (!expected_kind.ok()) return expected_kind.status();
  if (*expected_kind == RunOutcome::Kind::kOk) {
    return absl::FailedPreconditionError(
        "the repro records a passing run (expected outcome \"ok\"): there is no failure to "
        "shrink");
  }
  const FailureSignature expected = SignatureOf(*expected_kind, input.failure);

  RunConfig base = input.config;
  base.trace_mode = TraceMode::kHashOnly;
  base.record_choices = true;
  base.replay_fallback = RunConfig::ReplayFallback::kSeeded;
  RunResult first = RunProgram(program, base);
  const FailureSignature got = SignatureOf(first.outcome);
  if (got != expected) {
    return absl::FailedPreconditionError(fmt::format(
        "the repro's failure does not reproduce: it expects \"{}\" but re-running it gave "
        "\"{}\" (the program changed, or a determinism bug)",
        expected.ToString(), got.ToString()));
  }
  ShrinkResult result;
  result.signature = expected;
  result.input_trace_hash_matched = first.trace_hash == input.trace_hash && !first.replay_diverged;
  Schedule start = ScheduleOf(first, expected);
  result.before = start.metrics;

  base.replay_choices.reset();
  Shrinker shrinker(program, base, expected, std::move(start), options);
  shrinker.Run();
  result.after = shrinker.best().metrics;
  result.runs = shrinker.runs();
  result.runs_speculative = shrinker.runs_speculative();
  result.improvements = shrinker.improvements();
  result.passes = shrinker.passes();
  result.budget_exhausted = shrinker.exhausted();

  // The shrunk schedule replayed as `restoresim replay --repro` replays it.
  RunConfig final_config = base;
  final_config.replay_choices = shrinker.best().choices;
  RunResult last = RunProgram(program, final_config);
  if (SignatureOf(last.outcome) != expected || last.replay_diverged ||
      last.choices != shrinker.best().choices) {
    return absl::InternalError(fmt::format(
        "the shrunk schedule did not replay to itself (outcome \"{}\", diverged: {}): a "
        "determinism bug in the simulation or the program",
        SignatureOf(last.outcome).ToString(), last.replay_diverged));
  }
  Repro& repro = result.repro;
  repro.scenario = program.name;
  repro.config = input.config;
  repro.config.trace_mode = TraceMode::kHashOnly;
  repro.config.record_choices = false;
  repro.config.replay_choices = std::move(last.choices);
  repro.outcome = std::string(OutcomeKindName(last.outcome.kind));
  repro.message = last.outcome.message;
  repro.failure = last.outcome.failure;
  repro.trace_hash = last.trace_hash;
  repro.steps = last.steps;
  return result;
}

}  // namespace restoresim::sim
