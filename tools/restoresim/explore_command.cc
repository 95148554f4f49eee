// `restoresim explore`: a seed sweep over one or more scenarios. Prints the seed range and every
// option first, a progress bar on a terminal, a summary table, and for each failure the line
// that replays it; failing seeds are re-run with their schedule recorded (which also checks
// that they reproduce) and saved as repro files. A failure that was expected (a planted bug or
// a demo, found) takes one line, unless --all-failures; SIGINT or SIGTERM stops the sweep
// within a run, and what was done is reported, saved and exits 130.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "core/port/posix_file_system.h"
#include "sim/failure_signature.h"
#include "sim/repro.h"
#include "core/util/shown.h"
#include "sim/sweep.h"
#include "sim/sweep_report.h"
#include "tools/restoresim/build_id.h"
#include "tools/restoresim/command_run.h"
#include "tools/restoresim/commands.h"
#include "tools/restoresim/interrupt.h"
#include "tools/restoresim/output_file.h"
#include "tools/restoresim/run_options.h"
#include "tools/restoresim/sweep_summary.h"

namespace restoresim::tools {
namespace {

struct ExploreOptions {
  std::string scenario = "all";
  uint64_t seeds = 1000;
  uint64_t seed_start = 0;
  uint32_t jobs = 0;  // 0: one per core
  std::string shard = "0/1";
  bool json = false;
  std::string json_out;  // also write the JSON report here ("" none, "-" standard output)
  bool quiet = false;
  bool coverage = false;
  bool all_failures = false;  // a full block for expected findings too
  std::string repro_dir = "restoresim-repros";
  size_t repros_max = 3;  // per scenario
  RunOptions run;
};

absl::Status ParseShard(const std::string& text, uint32_t& index, uint32_t& count) {
  const size_t slash = text.find('/');
  auto parse = [](std::string_view s, uint32_t& out) {
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
  };
  if (slash == std::string::npos || !parse(std::string_view(text).substr(0, slash), index) ||
      !parse(std::string_view(text).substr(slash + 1), count) || count == 0 || index >= count) {
    return absl::InvalidArgumentError(
        fmt::format("--shard '{}': expected I/N with 0 <= I < N, e.g. 0/4", Shown(text)));
  }
  return absl::OkStatus();
}

// A progress bar on stderr, redrawn at most every 100 ms of real time.
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled) {}
  void Update(const sim::SweepProgress& p) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (p.runs_done != p.runs_total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * p.runs_done / std::max<uint64_t>(p.runs_total, 1));
    std::fprintf(stderr, "\r[%s%s] %llu/%llu runs, %llu failed", std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, '.').c_str(),
                 static_cast<unsigned long long>(p.runs_done),
                 static_cast<unsigned long long>(p.runs_total),
                 static_cast<unsigned long long>(p.failed_runs));
    if (p.runs_done == p.runs_total) std::fprintf(stderr, "\n");
  }
  // Ends a bar left unfinished (an interrupted sweep).
  void End() {
    if (enabled_ && last_ != std::chrono::steady_clock::time_point{}) std::fprintf(stderr, "\n");
    enabled_ = false;
  }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point last_{};
};

struct SavedRepro {
  std::string path;
  bool reproduced = false;
  std::string error;
};

// Re-runs a failure with its schedule recorded and saves it. A re-run that does not give the
// same trace hash is a determinism bug in the ports, and is reported as such.
SavedRepro SaveRepro(const ExploreOptions& o, const sim::Program& program,
                     const sim::SweepFailure& f, const sim::RunConfig& base) {
  SavedRepro saved;
  sim::RunConfig config = base;
  config.seed = f.seed;
  config.record_choices = true;
  const sim::RunResult rerun = sim::RunProgram(program, config);
  saved.reproduced = rerun.trace_hash == f.trace_hash &&
                     sim::SameFailure(f.outcome.kind, f.outcome.failure, rerun.outcome);
  sim::Repro repro;
  repro.scenario = program.name;
  repro.config = base;
  repro.config.seed = f.seed;
  repro.config.replay_choices = rerun.choices;
  repro.outcome = std::string(sim::OutcomeKindName(f.outcome.kind));
  repro.message = f.outcome.message;
  repro.failure = f.outcome.failure;
  repro.trace_hash = f.trace_hash;
  repro.steps = f.steps;
  repro.replay_command = f.replay;
  FileSystem& fs = *PosixFileSystem::Default();
  if (absl::Status s = fs.CreateDirIfMissing(o.repro_dir); !s.ok()) {
    saved.error = std::string(s.message());
    return saved;
  }
  saved.path = fmt::format("{}/{}-seed{}.json", o.repro_dir, program.name, f.seed);
  absl::StatusOr<std::string> text = sim::ReproToCheckedJson(repro, saved.path);
  if (absl::Status s = text.ok() ? WriteOutput(saved.path, *text) : text.status(); !s.ok()) {
    saved.error = std::string(s.message());
    saved.path.clear();
  }
  return saved;
}

// What makes this run a shard of one sweep (and not of another).
sim::SweepIdentity Identity(const ExploreOptions& o, const sim::SweepConfig& c) {
  return sim::SweepIdentity{.build = BuildId(),
                            .scenario = o.scenario,
                            .seed_start = c.seed_start,
                            .seeds = c.seeds,
                            .strategy = c.run.strategy.ToString(),
                            .steps_max = c.run.steps_max,
                            .spurious_per_mille = c.run.spurious_wakeup_per_mille,
                            .repros_max = o.repros_max,
                            .failures_kept_max = c.failures_kept_max};
}

// Re-runs and saves the first repros_max failures of each scenario (report.failures lists the
// result's failures in the same order).
void SaveRepros(const ExploreOptions& o, const sim::SweepConfig& config,
                const sim::SweepResult& result, sim::SweepReport& report) {
  size_t k = 0;
  for (const sim::ProgramSweepStats& s : result.programs) {
    for (size_t i = 0; i < s.failures.size(); ++i, ++k) {
      if (i >= o.repros_max || o.repro_dir.empty()) continue;
      const SavedRepro saved = SaveRepro(o, *s.program, s.failures[i], config.run);
      sim::FailureReport& f = report.failures[k];
      f.has_repro = true;
      f.repro = saved.path;
      f.reproduced = saved.reproduced;
      f.repro_error = saved.error;
    }
  }
}

void PrintHeader(const ExploreOptions& o, const sim::SweepConfig& c) {
  std::printf("%s", fmt::format("restoresim explore: scenario={} seeds=[{}, {}) strategy={} "
                                "jobs={} shard={}/{} steps-max={} spurious-per-mille={}\n",
                                o.scenario, c.seed_start, c.seed_start + c.seeds,
                                c.run.strategy.ToString(), c.jobs, c.shard_index, c.shard_count,
                                c.run.steps_max == 0 ? std::string("scenario default")
                                                     : std::to_string(c.run.steps_max),
                                c.run.spurious_wakeup_per_mille)
                        .c_str());
  std::fflush(stdout);  // seen at once when piped, before a long sweep
}

// Options -> the sweep to run; every refusal comes before any work. A repro directory that
// cannot be one (a regular file, say) is refused here, not found out at the first failure,
// after the sweep (issue 25).
absl::StatusOr<sim::SweepConfig> ValidateExplore(const ExploreOptions& o, CommandRun& command) {
  absl::StatusOr<sim::RunConfig> run = o.run.ToRunConfig();
  if (!run.ok()) return run.status();
  absl::StatusOr<std::vector<const sim::Program*>> programs = Programs().Select(o.scenario);
  if (!programs.ok()) return programs.status();
  sim::SweepConfig config;
  config.programs = *programs;
  config.seed_start = o.seed_start;
  config.seeds = o.seeds;
  config.run = *run;
  config.jobs = o.jobs != 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  if (absl::Status s = ParseShard(o.shard, config.shard_index, config.shard_count); !s.ok()) {
    return s;
  }
  if (absl::Status s = sim::ValidateSweepConfig(config); !s.ok()) return s;
  if (absl::Status s = command.OpenOutput(o.json_out); !s.ok()) {
    return absl::InvalidArgumentError(fmt::format("--json-out: {}", std::string(s.message())));
  }
  if (!o.repro_dir.empty()) {
    struct stat st;
    if (::stat(o.repro_dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(
          fmt::format("--repro-dir {}: not a directory", Shown(o.repro_dir)));
    }
  }
  return config;
}

// The report of a finished or interrupted sweep: repro files, the JSON (--json, --json-out),
// the table.
int ReportExplore(const ExploreOptions& o, const sim::SweepConfig& config,
                  const sim::SweepResult& result, CommandRun& command) {
  const std::string interrupted =
      result.interrupted
          ? fmt::format("interrupted by {} after {} of {} runs: the results below are of those",
                        InterruptSignalName(), result.runs, result.runs_planned)
          : std::string();
  if (result.interrupted) command.Say(interrupted);
  sim::SweepReport report = sim::ReportFromSweep(Identity(o, config), config, result);
  SaveRepros(o, config, result, report);
  nlohmann::json report_json = sim::SweepReportToJson(report);
  // An interrupted report is not a shard's whole result: merge refuses it (its run counts do
  // not match its seeds), and this field says why.
  if (result.interrupted) report_json["interrupted"] = interrupted;
  const std::string json = report_json.dump(2) + "\n";
  if (!o.json_out.empty()) {
    if (absl::Status s = WriteOutput(o.json_out, json); !s.ok()) {
      return command.Usage(fmt::format("--json-out: {}", std::string(s.message())));
    }
  }
  const int code = CommandRun::ExitCode(result.interrupted, !report.Ok());
  if (o.json) {
    std::fputs(json.c_str(), stdout);
    return code;
  }
  const std::string totals = fmt::format(
      "{} runs, {} failed, {:.0f} runs/s ({} jobs, {:.2f} s), trace hash {}", report.runs,
      report.failed_runs, report.timing.seeds_per_second, report.timing.jobs,
      report.timing.wall_seconds, sim::HashHex(report.trace_hash));
  PrintSweepSummary(report, totals,
                    SummaryOptions{.coverage = o.coverage,
                                   .quiet = o.quiet,
                                   .all_failures = o.all_failures,
                                   .interrupted = interrupted});
  return code;
}

int RunExplore(const ExploreOptions& o, sim::SweepConfig& config, CommandRun& command) {
  if (!o.json) PrintHeader(o, config);
  ProgressBar bar(!o.json && !o.quiet && isatty(STDERR_FILENO));
  config.stop = &command.Stop();
  const sim::SweepResult result =
      sim::RunSweep(config, [&bar](const sim::SweepProgress& p) { bar.Update(p); });
  bar.End();
  if (!result.workers.ok()) return command.Usage(result.workers);
  return ReportExplore(o, config, result, command);
}

}  // namespace

Command AddExploreCommand(CLI::App& app) {
  auto o = std::make_shared<ExploreOptions>();
  CLI::App* cmd = app.add_subcommand("explore", "sweep seeds over scenarios and report failures");
  cmd->add_option("--scenario", o->scenario,
                  "'all', scenario names or globs ('*', '?'), comma-separated")
      ->capture_default_str();
  cmd->add_option("--seeds", o->seeds, "seeds per scenario")->capture_default_str();
  cmd->add_option("--seed-start", o->seed_start, "first seed")->capture_default_str();
  cmd->add_option("--jobs", o->jobs, "worker threads (0: one per core)")->capture_default_str();
  cmd->add_option("--shard", o->shard, "run only shard I of N (seed offsets i % N == I)")
      ->capture_default_str();
  cmd->add_flag("--json", o->json,
                "print the report as one JSON object instead of the table (the input of "
                "`restoresim merge`)");
  cmd->add_option("--json-out", o->json_out,
                  "also write the JSON report to this file ('-': standard output)");
  cmd->add_flag("--quiet", o->quiet, "no progress bar, no failure details");
  cmd->add_flag("--coverage", o->coverage,
                "list each scenario's coverage marks (the windows its runs reached) and in how "
                "many runs");
  cmd->add_flag("--all-failures", o->all_failures,
                "print every failure in full, expected findings (planted bugs and demos found) "
                "too; without it each of those takes one line");
  cmd->add_option("--repro-dir", o->repro_dir, "where failing runs are saved ('' to disable)")
      ->capture_default_str();
  cmd->add_option("--repros-max", o->repros_max, "repro files saved per scenario")
      ->capture_default_str();
  o->run.AddTo(*cmd);
  const CommandSteps<ExploreOptions, sim::SweepConfig> steps{.validate = ValidateExplore,
                                                            .run = RunExplore};
  return [o, steps]() { return RunCommand("explore", steps, *o); };
}

}  // namespace restoresim::tools
