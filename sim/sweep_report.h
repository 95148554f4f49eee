// A sweep's report: what `restoresim explore --json` prints and `restoresim merge` reads back
// and prints again. One report describes one shard (`--shard I/N`) or, merged, the whole sweep.
//
// Everything but `timing` is a pure function of the sweep's options and the build: two
// processes that ran the same seeds give the same report with `timing` removed, and a merge
// of all shards gives the report of one process (sim/sweep_merge.h). `timing` holds what
// belongs to one process: its worker threads, wall time and seeds per second.
//
// Thread-safety: plain values; the functions are pure.
#ifndef RESTORESIM_SIM_SWEEP_REPORT_H_
#define RESTORESIM_SIM_SWEEP_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "sim/sweep.h"

namespace restoresim::sim {

inline constexpr std::string_view kSweepReportFormat = "restoresim-sweep";
inline constexpr int kSweepReportVersion = 1;
// Limits of what a reader accepts (a report of 32 scenarios with 50 failures each is ~1 MB).
inline constexpr uint64_t kSweepReportBytesMax = uint64_t{256} << 20;
inline constexpr size_t kSweepScenariosMax = 100'000;
inline constexpr size_t kSweepFailuresKeptMax = 100'000;  // per scenario
inline constexpr size_t kSweepShardTimingsMax = 1'000'000;

// What makes two reports shards of one sweep: they agree on all of it.
struct SweepIdentity {
  std::string build;     // the binary that ran it (tools/restoresim/build_id.h)
  std::string scenario;  // the selector given to --scenario
  uint64_t seed_start = 0;
  uint64_t seeds = 0;  // seeds per scenario, before sharding
  std::string strategy;
  uint64_t steps_max = 0;
  uint32_t spurious_per_mille = 0;
  uint64_t repros_max = 0;          // repro files saved per scenario
  uint64_t failures_kept_max = 0;   // failures listed per scenario
  bool operator==(const SweepIdentity&) const = default;
};

struct ScenarioReport {
  std::string name;
  bool bug_expected = false;
  uint64_t runs = 0;
  uint64_t failed_runs = 0;
  uint64_t found_runs = 0;  // bug_expected: failed runs naming an expected invariant
  uint64_t steps = 0;       // summed over runs
  uint64_t first_failing_seed = UINT64_MAX;  // UINT64_MAX: none
  uint64_t first_found_seed = UINT64_MAX;
  uint64_t trace_hash = 0;  // ProgramSweepStats::fingerprint
  std::map<std::string, uint64_t> coverage;

  // As ProgramSweepStats::AsExpected, except that a planted bug not found within the seeds
  // given is not unexpected: a short sweep may miss a bug that needs more seeds (issue 24;
  // `restoresim zoo` and catalogue_test are where finding it within a bound is required). A
  // scenario without runs found nothing unexpected either.
  bool AsExpected() const;
  // A planted bug that no run failed on: "not found within N seeds" says so, not as a failure.
  bool NotFound() const { return bug_expected && runs > 0 && failed_runs == 0; }
  // "ok", "FAILED", "bug found", "not found", "NOT NAMED" (failed, but by no expected
  // invariant) or "no runs" (a shard whose seeds all went to other shards).
  std::string Verdict() const;
  // The seed shown as "first-fail": the first finding of a planted bug, else the first failure.
  uint64_t FirstSeedShown() const;
};

struct FailureReport {
  std::string scenario;
  uint64_t seed = 0;
  std::string outcome;     // OutcomeKindName
  std::string message;
  nlohmann::json failure;  // the structured failure (FailureJson), kept as read
  uint64_t trace_hash = 0;
  std::string replay;
  bool bug_expected = false;
  // The first repros_max failures of each scenario were re-run and saved (when a repro folder
  // was given): where, whether the re-run reproduced, and why it could not be saved.
  bool has_repro = false;
  std::string repro;  // empty when it could not be saved
  bool reproduced = false;
  std::string repro_error;
};

struct ShardTiming {
  uint32_t shard_index = 0;
  uint32_t jobs = 0;
  double wall_seconds = 0;
  double seeds_per_second = 0;
};

struct SweepTiming {
  uint32_t jobs = 0;  // worker threads (summed over shards, merged)
  double wall_seconds = 0;      // merged: the slowest shard's
  double seeds_per_second = 0;  // runs / wall_seconds
  std::vector<ShardTiming> shards;  // merged reports only, by shard index
};

struct SweepReport {
  SweepIdentity sweep;
  uint32_t shard_index = 0;
  uint32_t shard_count = 1;
  uint64_t runs = 0;
  uint64_t failed_runs = 0;
  uint64_t trace_hash = 0;  // SweepResult::fingerprint
  std::vector<ScenarioReport> scenarios;  // in the sweep's order
  std::vector<FailureReport> failures;    // by scenario (in that order), then by seed
  SweepTiming timing;

  bool AllAsExpected() const;
  // Every scenario as expected, every saved failure reproduced, every repro saved.
  bool Ok() const;
};

// The structured failure as --json shows it (the same fields as a repro file's).
nlohmann::json FailureToJson(const Failure& failure);

// The report of one RunSweep, without repro files (has_repro false everywhere).
SweepReport ReportFromSweep(const SweepIdentity& identity, const SweepConfig& config,
                            const SweepResult& result);

nlohmann::json SweepReportToJson(const SweepReport& report);
// Parses and validates the JSON text of a report (InvalidArgument saying which field is wrong).
absl::StatusOr<SweepReport> SweepReportFromJson(std::string_view text);

std::string HashHex(uint64_t value);  // 0x + 16 lower-case hex digits

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_SWEEP_REPORT_H_
