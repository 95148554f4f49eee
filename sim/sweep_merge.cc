#include "sim/sweep_merge.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/util/shown.h"

namespace restoresim::sim {
namespace {

absl::Status Refuse(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

// The first field in which two sweeps differ, as "FIELD 'A' against 'B'", or "" if none.
std::string FirstDifference(const SweepReport& a, const SweepReport& b) {
  const SweepIdentity& x = a.sweep;
  const SweepIdentity& y = b.sweep;
  auto differ = [](std::string_view field, const auto& u, const auto& v) {
    return fmt::format("{} '{}' against '{}'", field, Shown(fmt::format("{}", u)),
                       Shown(fmt::format("{}", v)));
  };
  if (x.build != y.build) return differ("build", x.build, y.build);
  if (x.scenario != y.scenario) return differ("--scenario", x.scenario, y.scenario);
  if (x.strategy != y.strategy) return differ("--strategy", x.strategy, y.strategy);
  if (x.seed_start != y.seed_start) return differ("--seed-start", x.seed_start, y.seed_start);
  if (x.seeds != y.seeds) return differ("--seeds", x.seeds, y.seeds);
  if (x.steps_max != y.steps_max) return differ("--steps-max", x.steps_max, y.steps_max);
  if (x.spurious_per_mille != y.spurious_per_mille) {
    return differ("--spurious-per-mille", x.spurious_per_mille, y.spurious_per_mille);
  }
  if (x.repros_max != y.repros_max) return differ("--repros-max", x.repros_max, y.repros_max);
  if (x.failures_kept_max != y.failures_kept_max) {
    return differ("failures_kept_max", x.failures_kept_max, y.failures_kept_max);
  }
  if (a.shard_count != b.shard_count) return differ("shard count", a.shard_count, b.shard_count);
  if (a.scenarios.size() != b.scenarios.size()) {
    return differ("scenario count", a.scenarios.size(), b.scenarios.size());
  }
  for (size_t i = 0; i < a.scenarios.size(); ++i) {
    const ScenarioReport& s = a.scenarios[i];
    const ScenarioReport& t = b.scenarios[i];
    if (s.name != t.name) return differ(fmt::format("scenario #{}", i), s.name, t.name);
    if (s.bug_expected != t.bug_expected) {
      return differ("bug_expected of " + s.name, s.bug_expected, t.bug_expected);
    }
  }
  return "";
}

// Every shard of one sweep, each once, each with the runs its seeds make.
absl::Status CheckShards(const std::vector<ShardReport>& shards) {
  if (shards.empty()) return Refuse("no shard given");
  if (shards.size() > kMergeShardsMax) {
    return Refuse(fmt::format("{} shards given (at most {})", shards.size(), kMergeShardsMax));
  }
  const ShardReport& first = shards[0];
  const uint32_t count = first.report.shard_count;
  std::vector<const ShardReport*> by_index(count, nullptr);
  for (const ShardReport& s : shards) {
    const std::string diff = FirstDifference(first.report, s.report);
    if (!diff.empty()) {
      return Refuse(fmt::format("{} and {} are shards of different sweeps: {}", first.source,
                                s.source, diff));
    }
    const uint32_t i = s.report.shard_index;
    if (by_index[i] != nullptr) {
      return Refuse(fmt::format("shard {}/{} is given twice: {} and {}", i, count,
                                by_index[i]->source, s.source));
    }
    by_index[i] = &s;
    const uint64_t expected = ShardRuns(s.report.sweep.seeds, i, count);
    for (const ScenarioReport& sc : s.report.scenarios) {
      if (sc.runs != expected) {
        return Refuse(fmt::format("{}: scenario {} has {} runs, but shard {}/{} of {} seeds has "
                                  "{} (an interrupted or edited run?)",
                                  s.source, sc.name, sc.runs, i, count, s.report.sweep.seeds,
                                  expected));
      }
    }
    for (const FailureReport& f : s.report.failures) {
      const uint64_t offset = f.seed - s.report.sweep.seed_start;
      if (f.seed < s.report.sweep.seed_start || offset >= s.report.sweep.seeds ||
          offset % count != i) {
        return Refuse(fmt::format("{}: failure at seed {} is not a seed of shard {}/{}",
                                  s.source, f.seed, i, count));
      }
    }
  }
  if (shards.size() != count) {
    std::string missing;
    size_t listed = 0;
    for (uint32_t i = 0; i < count; ++i) {
      if (by_index[i] != nullptr) continue;
      if (listed++ < 8) missing += fmt::format("{}{}/{}", missing.empty() ? "" : ", ", i, count);
    }
    if (listed > 8) missing += fmt::format(" and {} more", listed - 8);
    return Refuse(fmt::format("{} of {} shards are missing: {}", count - shards.size(), count,
                              missing));
  }
  return absl::OkStatus();
}

void AddScenario(ScenarioReport& into, const ScenarioReport& s) {
  into.runs += s.runs;
  into.failed_runs += s.failed_runs;
  into.found_runs += s.found_runs;
  into.steps += s.steps;
  into.first_failing_seed = std::min(into.first_failing_seed, s.first_failing_seed);
  into.first_found_seed = std::min(into.first_found_seed, s.first_found_seed);
  into.trace_hash ^= s.trace_hash;
  for (const auto& [mark, runs] : s.coverage) into.coverage[mark] += runs;
}

// The failures of scenario `name` over all shards: the lowest seeds, as one process keeps them.
std::vector<FailureReport> MergedFailures(const std::vector<ShardReport>& shards,
                                          const std::string& name, const SweepIdentity& id) {
  std::vector<FailureReport> all;
  for (const ShardReport& s : shards) {
    for (const FailureReport& f : s.report.failures) {
      if (f.scenario == name) all.push_back(f);
    }
  }
  std::sort(all.begin(), all.end(),
            [](const FailureReport& a, const FailureReport& b) { return a.seed < b.seed; });
  if (all.size() > id.failures_kept_max) all.resize(id.failures_kept_max);
  for (size_t i = id.repros_max; i < all.size(); ++i) {
    // Saved by its shard, which ran fewer failures before it; one process would not have.
    all[i].has_repro = false;
    all[i].repro.clear();
    all[i].reproduced = false;
    all[i].repro_error.clear();
  }
  return all;
}

}  // namespace

uint64_t ShardRuns(uint64_t seeds, uint32_t index, uint32_t count) {
  return index < seeds ? (seeds - index - 1) / count + 1 : 0;
}

absl::StatusOr<SweepReport> MergeShardReports(const std::vector<ShardReport>& shards) {
  if (absl::Status s = CheckShards(shards); !s.ok()) return s;
  std::vector<const SweepReport*> ordered(shards.size());
  for (const ShardReport& s : shards) ordered[s.report.shard_index] = &s.report;

  SweepReport merged;
  merged.sweep = ordered[0]->sweep;
  merged.shard_index = 0;
  merged.shard_count = 1;
  for (const ScenarioReport& s : ordered[0]->scenarios) {
    merged.scenarios.push_back(ScenarioReport{.name = s.name, .bug_expected = s.bug_expected});
  }
  for (const SweepReport* r : ordered) {
    merged.runs += r->runs;
    merged.failed_runs += r->failed_runs;
    merged.trace_hash ^= r->trace_hash;
    for (size_t i = 0; i < r->scenarios.size(); ++i) {
      AddScenario(merged.scenarios[i], r->scenarios[i]);
    }
    merged.timing.jobs += r->timing.jobs;
    merged.timing.wall_seconds = std::max(merged.timing.wall_seconds, r->timing.wall_seconds);
    merged.timing.shards.push_back(ShardTiming{.shard_index = r->shard_index,
                                               .jobs = r->timing.jobs,
                                               .wall_seconds = r->timing.wall_seconds,
                                               .seeds_per_second = r->timing.seeds_per_second});
  }
  for (const ScenarioReport& s : merged.scenarios) {
    for (FailureReport& f : MergedFailures(shards, s.name, merged.sweep)) {
      merged.failures.push_back(std::move(f));
    }
  }
  merged.timing.seeds_per_second =
      merged.timing.wall_seconds > 0
          ? static_cast<double>(merged.runs) / merged.timing.wall_seconds
          : 0;
  return merged;
}

}  // namespace restoresim::sim
