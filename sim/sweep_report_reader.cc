// SweepReportFromJson: reads a report back strictly. Every field is checked for its type and
// range, and the report for its own consistency (totals equal the scenarios' sums, failures
// listed in order and as many as kept), so that a merge never builds on an edited or truncated
// file. Errors are InvalidArgument naming the field.
#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/util/shown.h"
#include "sim/sweep_report.h"

namespace restoresim::sim {
namespace {

using json = nlohmann::json;

absl::Status Bad(std::string_view where, std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", where, what));
}

absl::StatusOr<const json*> Field(const json& obj, std::string_view where, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) return Bad(where, fmt::format("field '{}' is missing", key));
  return &*it;
}

#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    if (absl::Status s_ = (expr); !s_.ok()) return s_; \
  } while (0)

absl::Status GetU64(const json& obj, std::string_view where, const char* key, uint64_t& out,
                    uint64_t max = UINT64_MAX) {
  absl::StatusOr<const json*> v = Field(obj, where, key);
  if (!v.ok()) return v.status();
  if (!(*v)->is_number_unsigned() || (*v)->get<uint64_t>() > max) {
    return Bad(where, fmt::format("field '{}' is not an integer in [0, {}]", key, max));
  }
  out = (*v)->get<uint64_t>();
  return absl::OkStatus();
}

absl::Status GetU32(const json& obj, std::string_view where, const char* key, uint32_t& out) {
  uint64_t v = 0;
  RETURN_IF_ERROR(GetU64(obj, where, key, v, UINT32_MAX));
  out = static_cast<uint32_t>(v);
  return absl::OkStatus();
}

absl::Status GetString(const json& obj, std::string_view where, const char* key,
                       std::string& out) {
  absl::StatusOr<const json*> v = Field(obj, where, key);
  if (!v.ok()) return v.status();
  if (!(*v)->is_string()) return Bad(where, fmt::format("field '{}' is not a string", key));
  out = (*v)->get<std::string>();
  return absl::OkStatus();
}

absl::Status GetBool(const json& obj, std::string_view where, const char* key, bool& out) {
  absl::StatusOr<const json*> v = Field(obj, where, key);
  if (!v.ok()) return v.status();
  if (!(*v)->is_boolean()) return Bad(where, fmt::format("field '{}' is not true or false", key));
  out = (*v)->get<bool>();
  return absl::OkStatus();
}

absl::Status GetSeconds(const json& obj, std::string_view where, const char* key, double& out) {
  absl::StatusOr<const json*> v = Field(obj, where, key);
  if (!v.ok()) return v.status();
  if (!(*v)->is_number() || !std::isfinite((*v)->get<double>()) || (*v)->get<double>() < 0) {
    return Bad(where, fmt::format("field '{}' is not a finite number >= 0", key));
  }
  out = (*v)->get<double>();
  return absl::OkStatus();
}

absl::Status GetHash(const json& obj, std::string_view where, const char* key, uint64_t& out) {
  std::string text;
  RETURN_IF_ERROR(GetString(obj, where, key, text));
  const char* end = text.data() + text.size();
  if (text.size() != 18 || text.compare(0, 2, "0x") != 0 ||
      std::from_chars(text.data() + 2, end, out, 16).ptr != end ||
      text != HashHex(out)) {
    return Bad(where, fmt::format("field '{}' is not 0x and 16 lower-case hex digits: '{}'", key,
                                  Shown(text)));
  }
  return absl::OkStatus();
}

// A seed, or null for none (UINT64_MAX).
absl::Status GetSeedOrNull(const json& obj, std::string_view where, const char* key,
                           uint64_t& out) {
  absl::StatusOr<const json*> v = Field(obj, where, key);
  if (!v.ok()) return v.status();
  if ((*v)->is_null()) {
    out = UINT64_MAX;
    return absl::OkStatus();
  }
  return GetU64(obj, where, key, out, UINT64_MAX - 1);
}

absl::Status ParseShard(const json& obj, SweepReport& r) {
  std::string text;
  RETURN_IF_ERROR(GetString(obj, "report", "shard", text));
  const size_t slash = text.find('/');
  const char* end = text.data() + text.size();
  if (slash == std::string::npos ||
      std::from_chars(text.data(), text.data() + slash, r.shard_index).ptr !=
          text.data() + slash ||
      slash == 0 || std::from_chars(text.data() + slash + 1, end, r.shard_count).ptr != end ||
      slash + 1 == text.size() || r.shard_count == 0 || r.shard_index >= r.shard_count) {
    return Bad("report", fmt::format("field 'shard' is not I/N with 0 <= I < N: '{}'",
                                     Shown(text)));
  }
  return absl::OkStatus();
}

absl::Status ParseIdentity(const json& j, SweepIdentity& id) {
  const std::string_view w = "report";
  RETURN_IF_ERROR(GetString(j, w, "build", id.build));
  RETURN_IF_ERROR(GetString(j, w, "scenario", id.scenario));
  RETURN_IF_ERROR(GetU64(j, w, "seed_start", id.seed_start));
  RETURN_IF_ERROR(GetU64(j, w, "seeds", id.seeds));
  if (id.seeds == 0 || id.seed_start > UINT64_MAX - id.seeds) {
    return Bad(w, "seeds must be >= 1 and seed_start + seeds must fit 64 bits");
  }
  RETURN_IF_ERROR(GetString(j, w, "strategy", id.strategy));
  RETURN_IF_ERROR(GetU64(j, w, "steps_max", id.steps_max));
  RETURN_IF_ERROR(GetU32(j, w, "spurious_per_mille", id.spurious_per_mille));
  RETURN_IF_ERROR(GetU64(j, w, "repros_max", id.repros_max));
  return GetU64(j, w, "failures_kept_max", id.failures_kept_max, kSweepFailuresKeptMax);
}

absl::Status ParseScenario(const json& j, const std::string& where, ScenarioReport& s) {
  if (!j.is_object()) return Bad(where, "not an object");
  RETURN_IF_ERROR(GetString(j, where, "name", s.name));
  RETURN_IF_ERROR(GetBool(j, where, "bug_expected", s.bug_expected));
  RETURN_IF_ERROR(GetU64(j, where, "runs", s.runs));
  RETURN_IF_ERROR(GetU64(j, where, "failed", s.failed_runs, s.runs));
  RETURN_IF_ERROR(GetU64(j, where, "found_runs", s.found_runs, s.bug_expected ? s.failed_runs : 0));
  RETURN_IF_ERROR(GetU64(j, where, "steps", s.steps));
  RETURN_IF_ERROR(GetSeedOrNull(j, where, "first_failing_seed", s.first_failing_seed));
  RETURN_IF_ERROR(GetSeedOrNull(j, where, "first_found_seed", s.first_found_seed));
  if ((s.failed_runs == 0) != (s.first_failing_seed == UINT64_MAX) ||
      (s.found_runs == 0) != (s.first_found_seed == UINT64_MAX)) {
    return Bad(where, "a first seed is given without failures, or missing with them");
  }
  RETURN_IF_ERROR(GetHash(j, where, "trace_hash", s.trace_hash));
  absl::StatusOr<const json*> coverage = Field(j, where, "coverage");
  if (!coverage.ok()) return coverage.status();
  if (!(*coverage)->is_object()) return Bad(where, "field 'coverage' is not an object");
  for (const auto& [mark, runs] : (*coverage)->items()) {
    if (!runs.is_number_unsigned() || runs.get<uint64_t>() > s.runs) {
      return Bad(where, fmt::format("coverage mark '{}' is not a run count", Shown(mark)));
    }
    s.coverage[mark] = runs.get<uint64_t>();
  }
  return absl::OkStatus();
}

absl::Status ParseFailure(const json& j, const std::string& where, FailureReport& f) {
  if (!j.is_object()) return Bad(where, "not an object");
  RETURN_IF_ERROR(GetString(j, where, "scenario", f.scenario));
  RETURN_IF_ERROR(GetU64(j, where, "seed", f.seed));
  RETURN_IF_ERROR(GetString(j, where, "outcome", f.outcome));
  RETURN_IF_ERROR(GetString(j, where, "message", f.message));
  absl::StatusOr<const json*> failure = Field(j, where, "failure");
  if (!failure.ok()) return failure.status();
  if (!(*failure)->is_object()) return Bad(where, "field 'failure' is not an object");
  f.failure = **failure;
  RETURN_IF_ERROR(GetHash(j, where, "trace_hash", f.trace_hash));
  RETURN_IF_ERROR(GetString(j, where, "replay", f.replay));
  RETURN_IF_ERROR(GetBool(j, where, "bug_expected", f.bug_expected));
  f.has_repro = j.contains("repro");
  if (!f.has_repro) return absl::OkStatus();
  RETURN_IF_ERROR(GetString(j, where, "repro", f.repro));
  RETURN_IF_ERROR(GetBool(j, where, "reproduced", f.reproduced));
  if (j.contains("repro_error")) RETURN_IF_ERROR(GetString(j, where, "repro_error", f.repro_error));
  return absl::OkStatus();
}

absl::Status ParseTiming(const json& j, SweepTiming& t) {
  const std::string_view w = "timing";
  if (!j.is_object()) return Bad(w, "not an object");
  RETURN_IF_ERROR(GetU32(j, w, "jobs", t.jobs));
  RETURN_IF_ERROR(GetSeconds(j, w, "wall_seconds", t.wall_seconds));
  RETURN_IF_ERROR(GetSeconds(j, w, "seeds_per_second", t.seeds_per_second));
  if (!j.contains("shards")) return absl::OkStatus();
  const json& shards = j["shards"];
  if (!shards.is_array() || shards.size() > kSweepShardTimingsMax) {
    return Bad(w, "field 'shards' is not an array of shard timings");
  }
  for (const json& s : shards) {
    ShardTiming st;
    if (!s.is_object()) return Bad(w, "a shard timing is not an object");
    RETURN_IF_ERROR(GetU32(s, "timing.shards", "shard", st.shard_index));
    RETURN_IF_ERROR(GetU32(s, "timing.shards", "jobs", st.jobs));
    RETURN_IF_ERROR(GetSeconds(s, "timing.shards", "wall_seconds", st.wall_seconds));
    RETURN_IF_ERROR(GetSeconds(s, "timing.shards", "seeds_per_second", st.seeds_per_second));
    t.shards.push_back(st);
  }
  return absl::OkStatus();
}

absl::Status ParseScenarios(const json& j, SweepReport& r) {
  absl::StatusOr<const json*> list = Field(j, "report", "scenarios");
  if (!list.ok()) return list.status();
  if (!(*list)->is_array() || (*list)->empty() || (*list)->size() > kSweepScenariosMax) {
    return Bad("report", fmt::format("field 'scenarios' is not an array of 1 to {} scenarios",
                                     kSweepScenariosMax));
  }
  std::set<std::string> names;
  uint64_t runs = 0;
  uint64_t failed = 0;
  for (size_t i = 0; i < (*list)->size(); ++i) {
    ScenarioReport s;
    RETURN_IF_ERROR(ParseScenario((**list)[i], fmt::format("scenarios[{}]", i), s));
    if (!names.insert(s.name).second) {
      return Bad("report", fmt::format("scenario '{}' is listed twice", Shown(s.name)));
    }
    if (__builtin_add_overflow(runs, s.runs, &runs)) return Bad("report", "runs overflow");
    failed += s.failed_runs;  // <= runs
    r.scenarios.push_back(std::move(s));
  }
  if (runs != r.runs || failed != r.failed_runs) {
    return Bad("report", "runs or failed_runs is not the sum over its scenarios");
  }
  return absl::OkStatus();
}

// Failures come by scenario in the scenarios' order, then by seed; each scenario lists
// min(failed, failures_kept_max) of them.
absl::Status ParseFailures(const json& j, SweepReport& r) {
  absl::StatusOr<const json*> list = Field(j, "report", "failures");
  if (!list.ok()) return list.status();
  if (!(*list)->is_array()) return Bad("report", "field 'failures' is not an array");
  size_t scenario = 0;
  std::vector<uint64_t> listed(r.scenarios.size(), 0);
  for (size_t i = 0; i < (*list)->size(); ++i) {
    const std::string where = fmt::format("failures[{}]", i);
    FailureReport f;
    RETURN_IF_ERROR(ParseFailure((**list)[i], where, f));
    while (scenario < r.scenarios.size() && r.scenarios[scenario].name != f.scenario) ++scenario;
    if (scenario == r.scenarios.size()) {
      return Bad(where, fmt::format("scenario '{}' is not listed, or out of order",
                                    Shown(f.scenario)));
    }
    if (listed[scenario] > 0 && r.failures.back().seed >= f.seed) {
      return Bad(where, "failures of a scenario are not in increasing seed order");
    }
    if (f.bug_expected != r.scenarios[scenario].bug_expected) {
      return Bad(where, "bug_expected disagrees with its scenario's");
    }
    ++listed[scenario];
    r.failures.push_back(std::move(f));
  }
  for (size_t s = 0; s < r.scenarios.size(); ++s) {
    if (listed[s] != std::min(r.scenarios[s].failed_runs, r.sweep.failures_kept_max)) {
      return Bad("report", fmt::format("scenario '{}' lists {} failures, not min(failed, "
                                       "failures_kept_max)",
                                       Shown(r.scenarios[s].name), listed[s]));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SweepReport> SweepReportFromJson(std::string_view text) {
  if (text.size() > kSweepReportBytesMax) {
    return Bad("report", fmt::format("{} bytes (at most {})", text.size(), kSweepReportBytesMax));
  }
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad("report", "not JSON");
  if (!j.is_object()) return Bad("report", "not a JSON object");
  std::string format;
  uint64_t version = 0;
  if (!GetString(j, "report", "format", format).ok() || format != kSweepReportFormat) {
    return Bad("report", fmt::format("not a sweep report (field 'format' is not '{}'; the "
                                     "output of `restoresim explore --json`)",
                                     kSweepReportFormat));
  }
  RETURN_IF_ERROR(GetU64(j, "report", "version", version));
  if (version != kSweepReportVersion) {
    return Bad("report", fmt::format("version {} (this build reads {})", version,
                                     kSweepReportVersion));
  }
  SweepReport r;
  RETURN_IF_ERROR(ParseIdentity(j, r.sweep));
  RETURN_IF_ERROR(ParseShard(j, r));
  RETURN_IF_ERROR(GetU64(j, "report", "runs", r.runs));
  RETURN_IF_ERROR(GetU64(j, "report", "failed_runs", r.failed_runs, r.runs));
  RETURN_IF_ERROR(GetHash(j, "report", "trace_hash", r.trace_hash));
  RETURN_IF_ERROR(ParseScenarios(j, r));
  RETURN_IF_ERROR(ParseFailures(j, r));
  absl::StatusOr<const json*> timing = Field(j, "report", "timing");
  if (!timing.ok()) return timing.status();
  RETURN_IF_ERROR(ParseTiming(**timing, r.timing));
  bool ok = false;
  RETURN_IF_ERROR(GetBool(j, "report", "ok", ok));
  if (ok != r.Ok()) return Bad("report", "field 'ok' disagrees with its verdicts and repros");
  return r;
}

#undef RETURN_IF_ERROR

}  // namespace restoresim::sim
