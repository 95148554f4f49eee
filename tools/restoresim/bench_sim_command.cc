// `restoresim bench sim`: seeds per second of the runtime's scenarios, with the invariant
// oracle on and off, measured side by side in one process, and the oracle's share of the run
// time.
//
// For each selected program the same seeds run `--rounds` times with the oracle on and as many
// times with it off, alternating (on, off, on, off, ...) so that machine drift hits both; the
// fastest round of each counts. The oracle adds no scheduling point, so both modes must give
// the same sweep fingerprint — checked, and a difference is a finding (exit 1).
#include <algorithm>
#include <cstdio>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include "absl/status/statusor.h"
#include "bench/progress_bar.h"
#include "properties/oracle.h"
#include "sim/sweep.h"
#include "tools/restoresim/bench_command.h"
#include "tools/restoresim/command_run.h"
#include "tools/restoresim/interrupt.h"
#include "tools/restoresim/json_output.h"
#include "tools/restoresim/run_options.h"

namespace restoresim::tools {
namespace {

struct SimBenchOptions {
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
  uint32_t rounds_done = 0;  // per mode: pairs of an oracle-on and an oracle-off sweep
  double SeedsPerSecond(double seconds) const { return seeds / seconds; }
  double OracleShare() const { return std::max(0.0, (on_seconds - off_seconds) / on_seconds); }
};

// What the rounds of one program share: the runs' configuration, the stop flag, the bar.
struct SimBenchRun {
  const SimBenchOptions& o;
  sim::RunConfig run;
  const std::atomic<bool>& stop;
  std::optional<bench::ProgressBar> bar;  // on a terminal only
  size_t sweeps_done = 0;
  size_t sweeps_total = 0;
};

// The rounds of one program; a row with rounds_done 0 when interrupted before a whole pair.
absl::StatusOr<BenchRow> MeasureProgram(SimBenchRun& b, const sim::Program& program) {
  BenchRow row;
  row.program = program.name;
  row.seeds = b.o.seeds;
  for (uint32_t round = 0; round < 2 * b.o.rounds; ++round) {
    const bool on = round % 2 == 0;
    if (b.bar) {
      b.bar->Show(b.sweeps_done, b.sweeps_total,
                  fmt::format("{} round {}/{}, oracle {}", program.name, round / 2 + 1,
                              b.o.rounds, on ? "on" : "off"));
    }
    properties::Oracle::SetEnabled(on);
    const sim::SweepResult result = sim::RunSweep({.programs = {&program},
                                                   .seeds = b.o.seeds,
                                                   .jobs = b.o.jobs,
                                                   .run = b.run,
                                                   .stop = &b.stop});
    properties::Oracle::SetEnabled(true);
    if (!result.workers.ok()) return result.workers;
    if (result.interrupted) break;
    ++b.sweeps_done;
    const sim::ProgramSweepStats& stats = result.programs.front();
    row.steps_per_seed = static_cast<double>(stats.steps) / std::max<uint64_t>(stats.runs, 1);
    double& seconds = on ? row.on_seconds : row.off_seconds;
    seconds = std::min(seconds, result.wall_seconds);
    (on ? row.fingerprint_on : row.fingerprint_off) = result.fingerprint;
    if (on) row.failed = stats.failed_runs;
    if (!on) ++row.rounds_done;
  }
  return row;
}

// A run the oracle fails ends there, the same run without it goes on: fingerprints compare
// only when every run passed.
bool SameSchedule(const BenchRow& r) { return r.fingerprint_on == r.fingerprint_off; }

void PrintJson(const std::vector<BenchRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const BenchRow& r : rows) {
    out.push_back({{"scenario", r.program},
                   {"seeds", r.seeds},
                   {"steps_per_seed", r.steps_per_seed},
                   {"seeds_per_second_oracle_on", r.SeedsPerSecond(r.on_seconds)},
                   {"seeds_per_second_oracle_off", r.SeedsPerSecond(r.off_seconds)},
                   {"oracle_share", r.OracleShare()},
                   {"same_schedule", r.failed == 0 ? nlohmann::json(SameSchedule(r))
                                                   : nlohmann::json(nullptr)},
                   {"failed_runs", r.failed},
                   {"rounds", r.rounds_done}});
  }
  const nlohmann::json doc = JsonDocument("restoresim-bench-sim", 1, {{"rows", out}});
  std::printf("%s\n", doc.dump(2).c_str());
}

void PrintTable(const std::vector<BenchRow>& rows) {
  std::printf("%-58s %10s %12s %12s %12s %8s\n", "scenario", "steps/seed", "seeds/s on",
              "seeds/s off", "oracle share", "same");
  for (const BenchRow& r : rows) {
    std::printf("%-58s %10.0f %12.0f %12.0f %11.1f%% %8s\n", r.program.c_str(),
                r.steps_per_seed, r.SeedsPerSecond(r.on_seconds),
                r.SeedsPerSecond(r.off_seconds), 100 * r.OracleShare(),
                r.failed > 0 ? "n/a" : SameSchedule(r) ? "yes" : "NO");
  }
  std::printf("\noracle share: (time with the oracle - time without) / time with it; 'same': "
              "both modes gave the same sweep fingerprint (the oracle adds no scheduling "
              "point; n/a when runs failed: a run the oracle fails stops there)\n");
}

// What the rounds run: the runs' configuration and the selected programs.
struct SimBenchPlan {
  sim::RunConfig run;
  std::vector<const sim::Program*> programs;
};

absl::StatusOr<SimBenchPlan> ValidateBenchSim(const SimBenchOptions& o, CommandRun&) {
  absl::StatusOr<sim::RunConfig> run = o.run.ToRunConfig();
  if (!run.ok()) return run.status();
  absl::StatusOr<std::vector<const sim::Program*>> programs = Programs().Select(o.scenario);
  if (!programs.ok()) return programs.status();
  if (o.seeds == 0 || o.jobs == 0 || o.rounds == 0) {
    return absl::InvalidArgumentError("--seeds, --jobs and --rounds must be positive");
  }
  return SimBenchPlan{.run = *run, .programs = *std::move(programs)};
}

int RunBenchSim(const SimBenchOptions& o, SimBenchPlan& plan, CommandRun& command) {
  if (!o.json) {
    std::printf("restoresim bench sim: scenario=%s seeds=%llu jobs=%u rounds=%u strategy=%s\n\n",
                o.scenario.c_str(), static_cast<unsigned long long>(o.seeds), o.jobs, o.rounds,
                o.run.strategy.c_str());
    std::fflush(stdout);  // seen at once when piped, before the rounds
  }
  // SIGINT/SIGTERM: the sweep in progress stops within a run and is dropped; the rounds done
  // so far are reported (a scenario without a whole on/off pair is left out) and exit is 130.
  SimBenchRun b{.o = o, .run = plan.run, .stop = command.Stop()};
  if (!o.json && isatty(STDERR_FILENO)) b.bar.emplace();
  b.sweeps_total = plan.programs.size() * 2 * o.rounds;
  std::vector<BenchRow> rows;
  bool findings = false;
  for (const sim::Program* program : plan.programs) {
    if (b.stop.load()) break;
    absl::StatusOr<BenchRow> row = MeasureProgram(b, *program);
    if (!row.ok()) return command.Usage(row.status());
    if (row->rounds_done == 0) break;  // interrupted before a whole pair
    findings |= row->failed == 0 && !SameSchedule(*row);
    rows.push_back(*row);
  }
  if (b.bar) b.bar->Clear();
  if (o.json) {
    PrintJson(rows);
  } else {
    PrintTable(rows);
  }
  if (b.stop.load()) {
    command.Say(fmt::format("interrupted by {}: the rows above are of the rounds done so far",
                            InterruptSignalName()));
  }
  return CommandRun::ExitCode(b.stop.load(), findings);
}

}  // namespace

BenchSubcommand AddBenchSimCommand(CLI::App& bench) {
  auto o = std::make_shared<SimBenchOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "sim", "Seeds per second of scenarios with the oracle on and off, side by side");
  cmd->add_option("--scenario", o->scenario,
                  "'all', a name, or a prefix ending in '*' (default scenario.*)");
  cmd->add_option("--seeds", o->seeds, "seeds per scenario and round (default 200)");
  cmd->add_option("--jobs", o->jobs, "worker threads (default 2)");
  cmd->add_option("--rounds", o->rounds,
                  "rounds per mode, alternating on and off; the fastest counts (default 2)");
  cmd->add_flag("--json", o->json, "print JSON instead of a table");
  o->run.AddTo(*cmd);
  const CommandSteps<SimBenchOptions, SimBenchPlan> steps{.validate = ValidateBenchSim,
                                                          .run = RunBenchSim};
  return {cmd, [o, steps]() { return RunCommand("bench sim", steps, *o); }};
}

}  // namespace restoresim::tools
