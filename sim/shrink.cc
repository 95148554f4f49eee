// The shrink driver: checks the input, re-runs it, runs the passes (sim/shrink_passes.h) round
// after round to a fixed point, and replays the result once more to be sure it replays.
#include "sim/shrink.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "sim/runner.h"
#include "sim/shrink_passes.h"
#include "sim/shrink_schedule.h"
#include "sim/shrink_search.h"

namespace restoresim::sim {
namespace {

using shrinking::ShrinkSearch;

constexpr size_t kChunkSizes[] = {8, 4, 2, 1};
constexpr uint64_t kRoundsMax = 10'000;  // a round that improves nothing ends shrinking anyway

absl::StatusOr<RunOutcome::Kind> OutcomeKindFromName(std::string_view name) {
  for (auto kind : {RunOutcome::Kind::kOk, RunOutcome::Kind::kFailed, RunOutcome::Kind::kDeadlock,
                    RunOutcome::Kind::kStepBudget}) {
    if (OutcomeKindName(kind) == name) return kind;
  }
  return absl::InvalidArgumentError(fmt::format("unknown expected outcome '{}'", name));
}

// Runs the passes to a fixed point or until the budget is spent.
void RunPasses(ShrinkSearch& search) {
  for (uint64_t round = 0; round < kRoundsMax && !search.exhausted(); ++round) {
    const uint64_t before = search.improvements();
    shrinking::Truncate(search);
    shrinking::Coalesce(search);
    shrinking::MovePreemptions(search);
    for (size_t size : kChunkSizes) shrinking::DeleteChunks(search, size);
    shrinking::QuietEach(search, /*eventful=*/true);
    shrinking::LowerData(search);
    shrinking::LowerAndDelete(search);
    shrinking::QuietEach(search, /*eventful=*/false);
    if (search.improvements() == before) break;
  }
}

// The signature the input expects, or why it cannot be shrunk.
absl::StatusOr<FailureSignature> ExpectedSignature(const Program& program, const Repro& input,
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
  return SignatureOf(*expected_kind, input.failure);
}

// The shrunk schedule replayed as `restoresim replay --repro` replays it, as a repro.
absl::StatusOr<Repro> FinalRepro(const Program& program, const Repro& input,
                                 const RunConfig& base, const FailureSignature& expected,
                                 const std::vector<uint64_t>& choices) {
  RunConfig final_config = base;
  final_config.replay_choices = choices;
  RunResult last = RunProgram(program, final_config);
  if (SignatureOf(last.outcome) != expected || last.replay_diverged || last.choices != choices) {
    return absl::InternalError(fmt::format(
        "the shrunk schedule did not replay to itself (outcome \"{}\", diverged: {}): a "
        "determinism bug in the simulation or the program",
        SignatureOf(last.outcome).ToString(), last.replay_diverged));
  }
  Repro repro;
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
  return repro;
}

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
        m.data_sum = shrinking::SaturatingAdd(m.data_sum, value);
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
  absl::StatusOr<FailureSignature> expected = ExpectedSignature(program, input, options);
  if (!expected.ok()) return expected.status();
  RunConfig base = input.config;
  base.trace_mode = TraceMode::kHashOnly;
  base.record_choices = true;
  base.replay_fallback = RunConfig::ReplayFallback::kSeeded;
  RunResult first = RunProgram(program, std::move(base));  // moves only its choices out
  const FailureSignature got = SignatureOf(first.outcome);
  if (got != *expected) {
    return absl::FailedPreconditionError(fmt::format(
        "the repro's failure does not reproduce: it expects \"{}\" but re-running it gave "
        "\"{}\" (the program changed, or a determinism bug)",
        expected->ToString(), got.ToString()));
  }
  ShrinkResult result;
  result.signature = *expected;
  result.input_trace_hash_matched = first.trace_hash == input.trace_hash && !first.replay_diverged;
  shrinking::Schedule start = shrinking::ScheduleOf(first, *expected);
  result.before = start.metrics;

  base.replay_choices.reset();
  ShrinkSearch search(program, base, *expected, std::move(start), options);
  if (!search.workers().ok()) return search.workers();
  RunPasses(search);
  result.after = search.best().metrics;
  result.runs = search.runs();
  result.runs_speculative = search.runs_speculative();
  result.improvements = search.improvements();
  result.passes = search.passes();
  result.interrupted = search.interrupted();
  result.budget_exhausted = search.exhausted() && !result.interrupted;
  absl::StatusOr<Repro> repro = FinalRepro(program, input, base, *expected, search.best().choices);
  if (!repro.ok()) return repro.status();
  result.repro = *std::move(repro);
  return result;
}

}  // namespace restoresim::sim
