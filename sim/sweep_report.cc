#include "sim/sweep_report.h"

#include <algorithm>

#include <fmt/format.h>

namespace restoresim::sim {
namespace {

using json = nlohmann::json;

json SeedOrNull(uint64_t seed) { return seed == UINT64_MAX ? json() : json(seed); }

double PerRun(uint64_t steps, uint64_t runs) {
  return runs ? static_cast<double>(steps) / static_cast<double>(runs) : 0.0;
}

json ScenarioToJson(const ScenarioReport& s) {
  return {{"name", s.name},
          {"runs", s.runs},
          {"failed", s.failed_runs},
          {"bug_expected", s.bug_expected},
          {"as_expected", s.AsExpected()},
          {"verdict", s.Verdict()},
          {"first_failing_seed", SeedOrNull(s.first_failing_seed)},
          {"found_runs", s.found_runs},
          {"first_found_seed", SeedOrNull(s.first_found_seed)},
          {"steps", s.steps},
          {"steps_per_run", PerRun(s.steps, s.runs)},
          {"coverage", s.coverage},
          {"trace_hash", HashHex(s.trace_hash)}};
}

json FailureEntryToJson(const FailureReport& f) {
  json j = {{"scenario", f.scenario},
            {"seed", f.seed},
            {"outcome", f.outcome},
            {"message", f.message},
            {"failure", f.failure},
            {"trace_hash", HashHex(f.trace_hash)},
            {"replay", f.replay},
            {"bug_expected", f.bug_expected}};
  if (f.has_repro) {
    j["repro"] = f.repro;
    j["reproduced"] = f.reproduced;
    if (!f.repro_error.empty()) j["repro_error"] = f.repro_error;
  }
  return j;
}

json TimingToJson(const SweepTiming& t) {
  json j = {{"jobs", t.jobs},
            {"wall_seconds", t.wall_seconds},
            {"seeds_per_second", t.seeds_per_second}};
  if (!t.shards.empty()) {
    json shards = json::array();
    for (const ShardTiming& s : t.shards) {
      shards.push_back({{"shard", s.shard_index},
                        {"jobs", s.jobs},
                        {"wall_seconds", s.wall_seconds},
                        {"seeds_per_second", s.seeds_per_second}});
    }
    j["shards"] = std::move(shards);
  }
  return j;
}

}  // namespace

std::string HashHex(uint64_t value) { return fmt::format("0x{:016x}", value); }

bool ScenarioReport::AsExpected() const {
  if (runs == 0 || NotFound()) return true;
  return bug_expected ? found_runs > 0 : failed_runs == 0;
}

std::string ScenarioReport::Verdict() const {
  if (runs == 0) return "no runs";
  // A planted bug is found only by a failure naming an expected invariant (not by a crash of
  // a check).
  if (bug_expected) {
    return found_runs > 0 ? "bug found" : failed_runs > 0 ? "NOT NAMED" : "not found";
  }
  return failed_runs == 0 ? "ok" : "FAILED";
}

uint64_t ScenarioReport::FirstSeedShown() const {
  return bug_expected && found_runs > 0 ? first_found_seed : first_failing_seed;
}

bool SweepReport::AllAsExpected() const {
  return std::all_of(scenarios.begin(), scenarios.end(),
                     [](const ScenarioReport& s) { return s.AsExpected(); });
}

bool SweepReport::Ok() const {
  return AllAsExpected() &&
         std::all_of(failures.begin(), failures.end(), [](const FailureReport& f) {
           return !f.has_repro || (f.reproduced && f.repro_error.empty());
         });
}

json FailureToJson(const Failure& f) {
  json j = {{"kind", std::string(FailureKindName(f.kind))}, {"step", f.step}, {"detail", f.detail}};
  if (!f.invariant.empty()) j["invariant"] = f.invariant;
  if (!f.who.empty()) j["who"] = f.who;
  if (!f.location.empty()) j["location"] = f.location;
  if (!f.waits.empty()) j["waits"] = f.waits;
  if (!f.notes.empty()) j["notes"] = f.notes;
  return j;
}

SweepReport ReportFromSweep(const SweepIdentity& identity, const SweepConfig& config,
                            const SweepResult& result) {
  SweepReport r;
  r.sweep = identity;
  r.shard_index = config.shard_index;
  r.shard_count = config.shard_count;
  r.runs = result.runs;
  r.failed_runs = result.failed_runs;
  r.trace_hash = result.fingerprint;
  for (const ProgramSweepStats& s : result.programs) {
    r.scenarios.push_back(ScenarioReport{.name = s.program->name,
                                         .bug_expected = s.program->bug_expected,
                                         .runs = s.runs,
                                         .failed_runs = s.failed_runs,
                                         .found_runs = s.found_runs,
                                         .steps = s.steps,
                                         .first_failing_seed = s.first_failing_seed,
                                         .first_found_seed = s.first_found_seed,
                                         .trace_hash = s.fingerprint,
                                         .coverage = s.coverage});
    for (const SweepFailure& f : s.failures) {
      r.failures.push_back(FailureReport{.scenario = f.program,
                                         .seed = f.seed,
                                         .outcome = std::string(OutcomeKindName(f.outcome.kind)),
                                         .message = f.outcome.message,
                                         .failure = FailureToJson(f.outcome.failure),
                                         .trace_hash = f.trace_hash,
                                         .replay = f.replay,
                                         .bug_expected = s.program->bug_expected});
    }
  }
  r.timing.jobs = config.jobs;
  r.timing.wall_seconds = result.wall_seconds;
  r.timing.seeds_per_second =
      result.wall_seconds > 0 ? static_cast<double>(result.runs) / result.wall_seconds : 0;
  return r;
}

json SweepReportToJson(const SweepReport& r) {
  json scenarios = json::array();
  for (const ScenarioReport& s : r.scenarios) scenarios.push_back(ScenarioToJson(s));
  json failures = json::array();
  for (const FailureReport& f : r.failures) failures.push_back(FailureEntryToJson(f));
  const SweepIdentity& id = r.sweep;
  return {{"format", std::string(kSweepReportFormat)},
          {"version", kSweepReportVersion},
          {"build", id.build},
          {"scenario", id.scenario},
          {"seeds", id.seeds},
          {"seed_start", id.seed_start},
          {"strategy", id.strategy},
          {"steps_max", id.steps_max},
          {"spurious_per_mille", id.spurious_per_mille},
          {"repros_max", id.repros_max},
          {"failures_kept_max", id.failures_kept_max},
          {"shard", fmt::format("{}/{}", r.shard_index, r.shard_count)},
          {"runs", r.runs},
          {"failed_runs", r.failed_runs},
          {"trace_hash", HashHex(r.trace_hash)},
          {"scenarios", std::move(scenarios)},
          {"failures", std::move(failures)},
          {"ok", r.Ok()},
          {"timing", TimingToJson(r.timing)}};
}

}  // namespace restoresim::sim
