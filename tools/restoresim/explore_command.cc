// `restoresim explore`: a seed sweep over one or more scenarios. Prints the seed range and every
// option first, a progress bar on a terminal, a summary table, and for each failure the line
// that replays it; failing seeds are re-run with their schedule recorded (which also checks
// that they reproduce) and saved as repro files. A failure that was expected (a planted bug or
// a demo, found) takes one line, unless --all-failures; SIGINT or SIGTERM stops the sweep
// within a run, and what was done is reported, saved and exits 130.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/port/posix_file_system.h"
#include "sim/failure_signature.h"
#include "sim/repro.h"
#include "core/util/shown.h"
#include "sim/sweep.h"
#include "tools/restoresim/commands.h"
#include "tools/restoresim/interrupt.h"
#include "tools/restoresim/output_file.h"
#include "tools/restoresim/run_options.h"

namespace restoresim::tools {
namespace {

struct ExploreOptions {
  std::string scenario = "all";
  uint64_t seeds = 1000;
  uint64_t seed_start = 0;
  uint32_t jobs = 0;  // 0: one per core
  std::string shard = "0/1";
  bool json = false;
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

std::string Hex(uint64_t v) { return fmt::format("0x{:016x}", v); }

// The structured failure, for --json readers (the same fields as a repro file's).
nlohmann::json FailureJson(const Failure& f) {
  nlohmann::json j = {{"kind", std::string(FailureKindName(f.kind))},
                      {"step", f.step},
                      {"detail", f.detail}};
  if (!f.invariant.empty()) j["invariant"] = f.invariant;
  if (!f.who.empty()) j["who"] = f.who;
  if (!f.location.empty()) j["location"] = f.location;
  if (!f.waits.empty()) j["waits"] = f.waits;
  if (!f.notes.empty()) j["notes"] = f.notes;
  return j;
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

void PrintTable(const sim::SweepResult& r) {
  size_t width = std::string_view("scenario").size();
  for (const sim::ProgramSweepStats& s : r.programs) {
    width = std::max(width, s.program->name.size());
  }
  std::printf("\n%s", fmt::format("{:<{}} {:>8} {:>8} {:>11} {:>11} {:>10}\n", "scenario", width,
                                  "runs", "failed", "verdict", "first-fail", "steps/run")
                          .c_str());
  for (const sim::ProgramSweepStats& s : r.programs) {
    std::string verdict;
    if (s.program->bug_expected) {
      // Found only by a failure naming an expected invariant (not by a crash of a check).
      verdict = s.found_runs > 0 ? "bug found" : s.failed_runs > 0 ? "NOT NAMED" : "NOT FOUND";
    } else {
      verdict = s.failed_runs == 0 ? "ok" : "FAILED";
    }
    const uint64_t first_seed = s.program->bug_expected && s.found_runs > 0
                                    ? s.first_found_seed
                                    : s.first_failing_seed;
    const std::string first = s.failed_runs > 0 ? std::to_string(first_seed) : std::string("-");
    std::printf("%s", fmt::format("{:<{}} {:>8} {:>8} {:>11} {:>11} {:>10.1f}\n",
                                  s.program->name, width, s.runs, s.failed_runs, verdict, first,
                                  s.runs ? static_cast<double>(s.steps) / s.runs : 0.0)
                          .c_str());
  }
}

// Each scenario's coverage marks: the windows its runs reached, in how many of them.
void PrintCoverage(const sim::SweepResult& r) {
  std::printf("\ncoverage (runs that reached each window):\n");
  for (const sim::ProgramSweepStats& s : r.programs) {
    if (s.coverage.empty()) continue;
    std::printf("%s\n", s.program->name.c_str());
    for (const auto& [mark, runs] : s.coverage) {
      std::printf("%s", fmt::format("  {:>8}  {}\n", runs, mark).c_str());
    }
  }
}

int RunExplore(const ExploreOptions& o) {
  absl::StatusOr<sim::RunConfig> run = o.run.ToRunConfig();
  if (!run.ok()) {
    std::fprintf(stderr, "restoresim explore: %s\n", std::string(run.status().message()).c_str());
    return kExitUsage;
  }
  absl::StatusOr<std::vector<const sim::Program*>> programs = Programs().Select(o.scenario);
  if (!programs.ok()) {
    std::fprintf(stderr, "restoresim explore: %s\n",
                 std::string(programs.status().message()).c_str());
    return kExitUsage;
  }
  sim::SweepConfig config;
  config.programs = *programs;
  config.seed_start = o.seed_start;
  config.seeds = o.seeds;
  config.run = *run;
  config.jobs = o.jobs != 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  if (absl::Status s = ParseShard(o.shard, config.shard_index, config.shard_count); !s.ok()) {
    std::fprintf(stderr, "restoresim explore: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }
  if (absl::Status s = sim::ValidateSweepConfig(config); !s.ok()) {
    std::fprintf(stderr, "restoresim explore: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }
  if (!o.json) PrintHeader(o, config);
  ProgressBar bar(!o.json && !o.quiet && isatty(STDERR_FILENO));
  config.stop = &InstallInterruptHandlers();
  const sim::SweepResult result =
      sim::RunSweep(config, [&bar](const sim::SweepProgress& p) { bar.Update(p); });
  bar.End();
  if (!result.workers.ok()) {
    std::fprintf(stderr, "restoresim explore: %s\n",
                 std::string(result.workers.message()).c_str());
    return kExitUsage;
  }
  const uint64_t runs_planned =
      static_cast<uint64_t>(config.programs.size()) *
      (config.shard_index >= config.seeds
           ? 0
           : (config.seeds - config.shard_index - 1) / config.shard_count + 1);
  const std::string interrupted =
      result.interrupted
          ? fmt::format("interrupted by {} after {} of {} runs: the results below are of those",
                        InterruptSignalName(), result.runs, runs_planned)
          : std::string();
  if (result.interrupted) std::fprintf(stderr, "restoresim explore: %s\n", interrupted.c_str());
  const double seeds_per_second =
      result.wall_seconds > 0 ? static_cast<double>(result.runs) / result.wall_seconds : 0;

  nlohmann::json failures = nlohmann::json::array();
  bool all_reproduced = true;
  bool all_saved = true;  // every repro that should have been saved was
  for (const sim::ProgramSweepStats& s : result.programs) {
    for (size_t i = 0; i < s.failures.size(); ++i) {
      const sim::SweepFailure& f = s.failures[i];
      nlohmann::json entry = {{"scenario", f.program},
                              {"seed", f.seed},
                              {"outcome", std::string(sim::OutcomeKindName(f.outcome.kind))},
                              {"message", f.outcome.message},
                              {"failure", FailureJson(f.outcome.failure)},
                              {"trace_hash", Hex(f.trace_hash)},
                              {"replay", f.replay},
                              {"bug_expected", s.program->bug_expected}};
      if (i < o.repros_max && !o.repro_dir.empty()) {
        const SavedRepro saved = SaveRepro(o, *s.program, f, config.run);
        entry["repro"] = saved.path;
        entry["reproduced"] = saved.reproduced;
        if (!saved.error.empty()) {
          entry["repro_error"] = saved.error;
          all_saved = false;
        }
        all_reproduced = all_reproduced && saved.reproduced;
      }
      failures.push_back(std::move(entry));
    }
  }
  const bool ok = result.AllAsExpected() && all_reproduced && all_saved;

  if (o.json) {
    nlohmann::json scenarios = nlohmann::json::array();
    for (const sim::ProgramSweepStats& s : result.programs) {
      scenarios.push_back(
          {{"name", s.program->name},
           {"runs", s.runs},
           {"failed", s.failed_runs},
           {"bug_expected", s.program->bug_expected},
           {"as_expected", s.AsExpected()},
           {"first_failing_seed",
            s.failed_runs > 0 ? nlohmann::json(s.first_failing_seed) : nlohmann::json()},
           {"found_runs", s.found_runs},
           {"first_found_seed",
            s.found_runs > 0 ? nlohmann::json(s.first_found_seed) : nlohmann::json()},
           {"steps_per_run", s.runs ? static_cast<double>(s.steps) / s.runs : 0.0},
           {"coverage", s.coverage},
           {"trace_hash", Hex(s.fingerprint)}});
    }
    nlohmann::json out = {{"seeds", config.seeds},
                          {"seed_start", config.seed_start},
                          {"strategy", config.run.strategy.ToString()},
                          {"jobs", config.jobs},
                          {"shard", o.shard},
                          {"runs", result.runs},
                          {"failed_runs", result.failed_runs},
                          {"trace_hash", Hex(result.fingerprint)},
                          {"seeds_per_second", seeds_per_second},
                          {"wall_seconds", result.wall_seconds},
                          {"scenarios", scenarios},
                          {"failures", failures},
                          {"ok", ok}};
    if (result.interrupted) out["interrupted"] = interrupted;
    std::printf("%s\n", out.dump(2).c_str());
    if (result.interrupted) return kExitInterrupted;
    return ok ? kExitOk : kExitFindings;
  }

  PrintTable(result);
  if (o.coverage) PrintCoverage(result);
  std::printf("%s", fmt::format("\n{} runs, {} failed, {:.0f} seeds/s ({} jobs, {:.2f} s), "
                                "trace hash {}\n",
                                result.runs, result.failed_runs, seeds_per_second, config.jobs,
                                result.wall_seconds, Hex(result.fingerprint))
                        .c_str());
  if (!o.quiet) {
    // One line per program whose failures were all expected (a planted bug or a demo found
    // by an expected invariant): its first finding and how to replay it.
    bool listed_any = false;
    for (const sim::ProgramSweepStats& s : result.programs) {
      if (o.all_failures || !s.program->bug_expected || !s.AsExpected()) continue;
      auto first = std::find_if(s.failures.begin(), s.failures.end(),
                                [&](const sim::SweepFailure& f) {
                                  return sim::FindsPlantedBug(*s.program, f.outcome);
                                });
      if (first == s.failures.end()) continue;
      if (!listed_any) std::printf("\nexpected findings (--all-failures shows each in full):\n");
      listed_any = true;
      const std::string invariant = first->outcome.failure.invariant.empty()
                                        ? std::string(sim::OutcomeKindName(first->outcome.kind))
                                        : "invariant:" + first->outcome.failure.invariant;
      std::printf("%s", fmt::format("  {} found at seed {} [{}]: {}\n", s.program->name,
                                    first->seed, invariant, first->replay)
                            .c_str());
    }
    for (const nlohmann::json& f : failures) {
      const sim::ProgramSweepStats* stats = nullptr;
      for (const sim::ProgramSweepStats& s : result.programs) {
        if (s.program->name == f["scenario"].get<std::string>()) stats = &s;
      }
      const bool expected = stats != nullptr && stats->program->bug_expected && stats->AsExpected();
      const bool problem = f.contains("repro_error") ||
                           (f.contains("reproduced") && !f["reproduced"].get<bool>());
      if (expected && !o.all_failures && !problem) continue;
      if (f.contains("repro")) {  // the first few of each scenario
        std::printf("%s", fmt::format("\n{} seed {}: {}\n  replay: {}\n", f["scenario"].get<std::string>(),
                                      f["seed"].get<uint64_t>(), f["message"].get<std::string>(),
                                      f["replay"].get<std::string>())
                              .c_str());
        if (!f["repro"].get<std::string>().empty()) {
          std::printf("  repro:  %s\n", f["repro"].get<std::string>().c_str());
        }
        if (f.contains("repro_error")) {
          std::printf("  repro NOT SAVED: %s\n", f["repro_error"].get<std::string>().c_str());
        }
        if (!f["reproduced"].get<bool>()) {
          std::printf("  NOT REPRODUCED: a re-run gave another trace (non-determinism)\n");
        }
      }
    }
  }
  if (result.interrupted) {
    std::printf("\n%s\nverdict: INTERRUPTED (not every run was done)\n", interrupted.c_str());
    return kExitInterrupted;
  }
  std::printf("\n%s\n", ok ? "verdict: every scenario behaved as expected"
                           : !result.AllAsExpected() || !all_reproduced
                                 ? "verdict: UNEXPECTED results (see the table above)"
                                 : "verdict: repro files could not be saved (see above)");
  return ok ? kExitOk : kExitFindings;
}

}  // namespace

Command AddExploreCommand(CLI::App& app) {
  auto o = std::make_shared<ExploreOptions>();
  CLI::App* cmd = app.add_subcommand("explore", "sweep seeds over scenarios and report failures");
  cmd->add_option("--scenario", o->scenario, "a scenario name, a prefix ending in '*', or 'all'")
      ->capture_default_str();
  cmd->add_option("--seeds", o->seeds, "seeds per scenario")->capture_default_str();
  cmd->add_option("--seed-start", o->seed_start, "first seed")->capture_default_str();
  cmd->add_option("--jobs", o->jobs, "worker threads (0: one per core)")->capture_default_str();
  cmd->add_option("--shard", o->shard, "run only shard I of N (seed offsets i % N == I)")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "print one JSON object instead of the table");
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
  return [o]() { return RunExplore(*o); };
}

}  // namespace restoresim::tools
