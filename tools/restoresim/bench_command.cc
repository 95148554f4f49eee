// `restoresim bench`: seeds per second of the runtime's scenarios, with the invariant oracle on
// and off, measured side by side in one process, and the oracle's share of the run time.
//
// For each selected program the same seeds run `--rounds` times with the oracle on and as many
// times with it off, alternating (on, off, on, off, ...) so that machine drift hits both; the
// fastest round of each counts. The oracle adds no scheduling point, so both modes must give
// the same sweep fingerprint — checked, and a difference is a finding (exit 1).
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "properties/oracle.h"
#include "sim/sweep.h"
#include "tools/restoresim/commands.h"
#include "tools/restoresim/run_options.h"

namespace restoresim::tools {
namespace {

struct BenchOptions {
  std::string scenario = "scenario.*";
  uint64_t seeds = 200;
  uint32_t jobs = 2;
  uint32_t rounds = 2;
  bool json = false;
  RunOptions run;
};

struct BenchRow {
  std::string program;
  uint64_t seeds = 0;
  double steps_per_seed = 0;
  double on_seconds = 1e300;
  double off_seconds = 1e300;
  uint64_t fingerprint_on = 0;
  uint64_t fingerprint_off = 0;
  uint64_t failed = 0;
  double SeedsPerSecond(double seconds) const { return seeds / seconds; }
  double OracleShare() const { return std::max(0.0, (on_seconds - off_seconds) / on_seconds); }
};

int RunBench(const BenchOptions& o) {
  absl::StatusOr<sim::RunConfig> run = o.run.ToRunConfig();
  if (!run.ok()) {
    std::fprintf(stderr, "restoresim bench: %s\n", std::string(run.status().message()).c_str());
    return kExitUsage;
  }
  absl::StatusOr<std::vector<const sim::Program*>> programs = Programs().Select(o.scenario);
  if (!programs.ok()) {
    std::fprintf(stderr, "restoresim bench: %s\n",
                 std::string(programs.status().message()).c_str());
    return kExitUsage;
  }
  if (o.seeds == 0 || o.jobs == 0 || o.rounds == 0) {
    std::fprintf(stderr, "restoresim bench: --seeds, --jobs and --rounds must be positive\n");
    return kExitUsage;
  }
  if (!o.json) {
    std::printf("restoresim bench: scenario=%s seeds=%llu jobs=%u rounds=%u strategy=%s\n\n",
                o.scenario.c_str(), static_cast<unsigned long long>(o.seeds), o.jobs, o.rounds,
                o.run.strategy.c_str());
  }
  std::vector<BenchRow> rows;
  bool findings = false;
  for (const sim::Program* program : *programs) {
    BenchRow row;
    row.program = program->name;
    row.seeds = o.seeds;
    for (uint32_t round = 0; round < 2 * o.rounds; ++round) {
      const bool on = round % 2 == 0;
      properties::Oracle::SetEnabled(on);
      sim::SweepConfig sweep;
      sweep.programs = {program};
      sweep.seeds = o.seeds;
      sweep.jobs = o.jobs;
      sweep.run = *run;
      const sim::SweepResult result = sim::RunSweep(sweep);
      const sim::ProgramSweepStats& stats = result.programs.front();
      row.steps_per_seed = static_cast<double>(stats.steps) / std::max<uint64_t>(stats.runs, 1);
      (on ? row.on_seconds : row.off_seconds) =
          std::min(on ? row.on_seconds : row.off_seconds, result.wall_seconds);
      (on ? row.fingerprint_on : row.fingerprint_off) = result.fingerprint;
      if (on) row.failed = stats.failed_runs;
    }
    properties::Oracle::SetEnabled(true);
    // A run the oracle fails ends there, the same run without it goes on: fingerprints compare
    // only when every run passed.
    if (row.failed == 0 && row.fingerprint_on != row.fingerprint_off) findings = true;
    rows.push_back(row);
  }
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const BenchRow& r : rows) {
      out.push_back({{"scenario", r.program},
                     {"seeds", r.seeds},
                     {"steps_per_seed", r.steps_per_seed},
                     {"seeds_per_second_oracle_on", r.SeedsPerSecond(r.on_seconds)},
                     {"seeds_per_second_oracle_off", r.SeedsPerSecond(r.off_seconds)},
                     {"oracle_share", r.OracleShare()},
                     {"same_schedule", r.failed == 0
                                           ? nlohmann::json(r.fingerprint_on == r.fingerprint_off)
                                           : nlohmann::json(nullptr)},
                     {"failed_runs", r.failed}});
    }
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("%-58s %10s %12s %12s %12s %8s\n", "scenario", "steps/seed", "seeds/s on",
                "seeds/s off", "oracle share", "same");
    for (const BenchRow& r : rows) {
      std::printf("%-58s %10.0f %12.0f %12.0f %11.1f%% %8s\n", r.program.c_str(),
                  r.steps_per_seed, r.SeedsPerSecond(r.on_seconds),
                  r.SeedsPerSecond(r.off_seconds), 100 * r.OracleShare(),
                  r.failed > 0                              ? "n/a"
                  : r.fingerprint_on == r.fingerprint_off ? "yes"
                                                          : "NO");
    }
    std::printf("\noracle share: (time with the oracle - time without) / time with it; 'same': "
                "both modes gave the same sweep fingerprint (the oracle adds no scheduling "
                "point; n/a when runs failed: a run the oracle fails stops there)\n");
  }
  return findings ? kExitFindings : kExitOk;
}

}  // namespace

Command AddBenchCommand(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Seeds per second of scenarios with the invariant oracle on and off");
  cmd->add_option("--scenario", options->scenario,
                  "'all', a name, or a prefix ending in '*' (default scenario.*)");
  cmd->add_option("--seeds", options->seeds, "seeds per scenario and round (default 200)");
  cmd->add_option("--jobs", options->jobs, "worker threads (default 2)");
  cmd->add_option("--rounds", options->rounds,
                  "rounds per mode; the fastest counts (default 2)");
  cmd->add_flag("--json", options->json, "print JSON instead of a table");
  options->run.AddTo(*cmd);
  return [options]() { return RunBench(*options); };
}

}  // namespace restoresim::tools
