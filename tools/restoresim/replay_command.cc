// `restoresim replay`: re-runs one run exactly, from a scenario and seed or from a repro file,
// prints the seed and every derived option first, then the outcome; --timeline writes the
// Chrome trace-event JSON (open it in the Perfetto UI); --events writes the run's events (the
// ones the invariant oracle judged, docs/EVENTS.md) for `restoresim check`.
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/events/event_codec.h"
#include "core/port/posix_file_system.h"
#include "properties/oracle.h"
#include "sim/chrome_trace.h"
#include "core/util/shown.h"
#include "sim/failure_signature.h"
#include "sim/repro.h"
#include "sim/sweep_report.h"
#include "tools/restoresim/command_run.h"
#include "tools/restoresim/commands.h"
#include "tools/restoresim/json_output.h"
#include "tools/restoresim/output_file.h"
#include "tools/restoresim/run_options.h"

namespace restoresim::tools {
namespace {

struct ReplayOptions {
  std::string scenario;
  std::optional<uint64_t> seed;
  std::string repro_path;
  std::string timeline_path;
  std::string events_path;
  bool timeline_sync = false;
  bool ignore_schedule = false;
  bool json = false;
  RunOptions run;
  // The run options given on the command line (a repro file carries its own).
  std::vector<std::string> run_options_given;
};

// The program a replay runs: a repro file's by its exact name; the command line's SCENARIO
// by `--scenario`'s syntax (names, globs, lists), which must select exactly one program.
absl::StatusOr<const sim::Program*> ReplayedProgram(const std::string& scenario,
                                                    bool from_repro) {
  if (from_repro) {
    const sim::Program* program = Programs().Find(scenario);
    if (program != nullptr) return program;
    return absl::NotFoundError(
        fmt::format("unknown scenario '{}' (see `restoresim scenarios`)", Shown(scenario)));
  }
  absl::StatusOr<std::vector<const sim::Program*>> selected = Programs().Select(scenario);
  if (!selected.ok()) return selected.status();
  if (selected->size() == 1) return selected->front();
  std::string names;
  for (size_t i = 0; i < selected->size() && i < 3; ++i) {
    names += (i > 0 ? ", " : "") + (*selected)[i]->name;
  }
  return absl::InvalidArgumentError(
      fmt::format("'{}' selects {} programs ({}{}); replay runs one: give its name",
                  Shown(scenario), selected->size(), names, selected->size() > 3 ? ", ..." : ""));
}

// What `replay --json` prints: the run's identity, its outcome, what was written, and for a
// repro file whether it reproduced (format restoresim-replay, docs/USING.md).
void PrintReplayJson(const ReplayOptions& o, const sim::Program& program, uint64_t seed,
                     uint64_t steps_max, const sim::RunResult& r,
                     const std::optional<sim::Repro>& repro, bool reproduced) {
  const auto PathOrNull = [](const std::string& path) {
    return path.empty() ? nlohmann::json() : nlohmann::json(path);
  };
  const nlohmann::json failure =
      r.outcome.ok() ? nlohmann::json() : sim::FailureToJson(r.outcome.failure);
  nlohmann::json fields = {{"scenario", program.name},
                           {"seed", seed},
                           {"strategy", r.strategy.ToString()},
                           {"steps_max", steps_max},
                           {"outcome", std::string(sim::OutcomeKindName(r.outcome.kind))},
                           {"message", r.outcome.message},
                           {"failure", failure},
                           {"steps", r.steps},
                           {"threads", r.threads},
                           {"virtual_time_ns", r.end_time_ns},
                           {"trace_events", r.trace_events},
                           {"trace_hash", fmt::format("0x{:016x}", r.trace_hash)},
                           {"schedule_diverged", r.replay_diverged},
                           {"timeline", PathOrNull(o.timeline_path)},
                           {"events", PathOrNull(o.events_path)}};
  nlohmann::json j = JsonDocument("restoresim-replay", 1, std::move(fields));
  if (repro.has_value()) {
    j["repro"] = {{"file", o.repro_path},
                  {"expected_outcome", repro->outcome},
                  {"expected_trace_hash", fmt::format("0x{:016x}", repro->trace_hash)},
                  {"reproduced", reproduced}};
  } else {
    j["repro"] = nullptr;
  }
  std::printf("%s\n", j.dump(2).c_str());
}

// What a replay runs: the program, its configuration, and the repro file it came from.
struct ReplayPlan {
  const sim::Program* program = nullptr;
  sim::RunConfig config;
  std::optional<sim::Repro> repro;
};

// --repro FILE: the file fixes the run; nothing else that decides one may be given.
absl::Status LoadReplayedRepro(const ReplayOptions& o, ReplayPlan& plan) {
  if (!o.scenario.empty() || o.seed.has_value()) {
    return absl::InvalidArgumentError("give either --repro FILE or SCENARIO --seed N, not both");
  }
  if (!o.run_options_given.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("{} cannot be used with --repro: the repro file fixes the run "
                    "(replay SCENARIO --seed N to choose them)",
                    o.run_options_given.front()));
  }
  if (absl::Status s = CheckInputFile(o.repro_path, sim::kReproBytesMax); !s.ok()) return s;
  absl::StatusOr<sim::Repro> loaded = sim::ReadRepro(*PosixFileSystem::Default(), o.repro_path);
  if (!loaded.ok()) return loaded.status();
  // Moved, not copied: a long schedule is 8 bytes a choice, and each copy was one more.
  plan.repro = *std::move(loaded);
  plan.config = std::move(plan.repro->config);
  if (o.ignore_schedule) plan.config.replay_choices.reset();
  return absl::OkStatus();
}

// SCENARIO --seed N with the run options of the command line.
absl::Status SeedReplay(const ReplayOptions& o, ReplayPlan& plan) {
  if (o.scenario.empty() || !o.seed.has_value()) {
    return absl::InvalidArgumentError("needs SCENARIO --seed N, or --repro FILE");
  }
  if (o.ignore_schedule) {
    return absl::InvalidArgumentError("--ignore-schedule only applies to --repro FILE (a seed "
                                      "has no recorded schedule to ignore)");
  }
  absl::StatusOr<sim::RunConfig> parsed = o.run.ToRunConfig();
  if (!parsed.ok()) return parsed.status();
  plan.config = *parsed;
  plan.config.seed = *o.seed;
  return absl::OkStatus();
}

absl::StatusOr<ReplayPlan> ValidateReplay(const ReplayOptions& o, CommandRun& command) {
  if (o.json && o.timeline_path == "-") {
    return absl::InvalidArgumentError(
        "--json and --timeline - both write standard output: give --timeline a file");
  }
  // Checked before the run; "-" sends the timeline to standard output, the report to stderr.
  if (absl::Status s = command.OpenOutput(o.timeline_path); !s.ok()) return s;
  ReplayPlan plan;
  absl::Status s = o.repro_path.empty() ? SeedReplay(o, plan) : LoadReplayedRepro(o, plan);
  if (!s.ok()) return s;
  const std::string& scenario = plan.repro.has_value() ? plan.repro->scenario : o.scenario;
  absl::StatusOr<const sim::Program*> found = ReplayedProgram(scenario, plan.repro.has_value());
  if (!found.ok()) return found.status();
  plan.program = *found;
  return plan;
}

void PrintReplayHeader(FILE* text, const sim::Program& program, const sim::RunConfig& config,
                       uint64_t steps_max) {
  const sim::SeedStreams streams = sim::SeedStreams::Derive(config.seed);
  std::fprintf(text, "%s", fmt::format("restoresim replay: scenario={} seed={} strategy={} "
                                "steps-max={} spurious-per-mille={}{}\n"
                                "  derived: strategy-stream=0x{:016x} program-stream=0x{:016x}\n",
                                program.name, config.seed, config.strategy.ToString(),
                                steps_max,
                                config.spurious_wakeup_per_mille,
                                config.replay_choices
                                    ? fmt::format(" schedule={} recorded choices",
                                                  config.replay_choices->size())
                                    : std::string(),
                                streams.strategy, streams.program)
                        .c_str());
}

// Runs the plan, with the oracle's events written to --events when asked for.
absl::StatusOr<sim::RunResult> RunReplayed(const ReplayOptions& o, ReplayPlan& plan,
                                           FILE* text) {
  plan.config.trace_mode =
      o.timeline_path.empty() ? sim::TraceMode::kHashOnly : sim::TraceMode::kFull;
  std::ofstream events_out;
  std::optional<events::EventStreamWriter> events_writer;
  const std::string cannot = fmt::format("cannot write events to '{}'", o.events_path);
  if (!o.events_path.empty()) {
    events_out.open(o.events_path, std::ios::binary | std::ios::trunc);
    if (!events_out) return absl::InvalidArgumentError(cannot);
    events_writer.emplace(events_out);
    properties::Oracle::SetDefaultTap(&*events_writer);
  }
  sim::RunResult r = sim::RunProgram(*plan.program, std::move(plan.config));  // its choices only
  properties::Oracle::SetDefaultTap(nullptr);
  if (events_writer.has_value()) {
    events_out.flush();
    if (!events_out) return absl::InvalidArgumentError(cannot);
    std::fprintf(text, "%s",
                 fmt::format("events: {} written to {} (judge them: restoresim check {})\n",
                                  events_writer->events(), o.events_path, o.events_path)
                          .c_str());
  }
  return r;
}

// Whether the run gave what its repro file records (true without a repro file).
bool Reproduced(const std::optional<sim::Repro>& repro, const sim::RunResult& r, FILE* text) {
  if (!repro.has_value()) return true;
  const std::optional<sim::RunOutcome::Kind> expected = sim::ParseOutcomeKind(repro->outcome);
  const bool same = repro->trace_hash == r.trace_hash && expected.has_value() &&
                    sim::SameFailure(*expected, repro->failure, r.outcome);
  std::fprintf(text, "%s", fmt::format("repro: expected {} trace-hash=0x{:016x}: {}\n",
                                repro->outcome, repro->trace_hash,
                                same ? "reproduced" : "NOT REPRODUCED")
                        .c_str());
  return same;
}

int RunReplay(const ReplayOptions& o, ReplayPlan& plan, CommandRun& command) {
  // With --json the text report goes to standard error, the JSON alone to standard output.
  FILE* text = o.json ? stderr : stdout;
  const sim::Program& program = *plan.program;
  const uint64_t seed = plan.config.seed;
  const uint64_t steps_max =
      plan.config.steps_max != 0 ? plan.config.steps_max : program.steps_max;
  PrintReplayHeader(text, program, plan.config, steps_max);
  absl::StatusOr<sim::RunResult> run = RunReplayed(o, plan, text);
  if (!run.ok()) return command.Usage(run.status());
  const sim::RunResult& r = *run;
  std::fprintf(text, "%s", fmt::format("outcome: {}{}\n  steps={} threads={} virtual-time={}ns "
                                "trace-events={} trace-hash=0x{:016x}\n",
                                sim::OutcomeKindName(r.outcome.kind),
                                r.outcome.ok() ? "" : "\n  " + r.outcome.message, r.steps,
                                r.threads, r.end_time_ns, r.trace_events, r.trace_hash)
                        .c_str());
  if (r.replay_diverged) {
    std::fprintf(text,
                 "  note: the recorded schedule did not fit this run (the program changed?)\n");
  }
  if (!o.timeline_path.empty()) {
    sim::ChromeTraceInfo info{program.name, seed, r.strategy.ToString(),
                              std::string(sim::OutcomeKindName(r.outcome.kind)),
                              r.outcome.message, o.timeline_sync};
    absl::Status s = WriteOutput(o.timeline_path, sim::ChromeTraceJson(*r.simulation, info));
    if (!s.ok()) {
      return command.Usage(fmt::format("cannot write timeline: {}", std::string(s.message())));
    }
    std::fprintf(text, "timeline: %s (open in https://ui.perfetto.dev)\n",
                 o.timeline_path.c_str());
  }
  const bool same = Reproduced(plan.repro, r, text);
  if (o.json) PrintReplayJson(o, program, seed, steps_max, r, plan.repro, same);
  if (!same) return kExitNotReproduced;
  return CommandRun::ExitCode(false, !r.outcome.ok());
}

}  // namespace

Command AddReplayCommand(CLI::App& app) {
  auto o = std::make_shared<ReplayOptions>();
  CLI::App* cmd = app.add_subcommand("replay", "re-run one seed (or a repro file) exactly");
  cmd->add_option("scenario", o->scenario, "scenario name (or a glob that selects one)");
  cmd->add_option("--seed", o->seed, "the run's master seed");
  cmd->add_option("--repro", o->repro_path, "a repro file written by explore");
  cmd->add_flag("--json", o->json,
                "print one JSON object (format restoresim-replay); the text goes to stderr");
  cmd->add_option("--timeline", o->timeline_path,
                  "write the run as Chrome trace-event JSON (Perfetto UI)");
  cmd->add_option("--events", o->events_path,
                  "write the run's events (what the oracle judged) to FILE, for restoresim check");
  cmd->add_flag("--timeline-sync", o->timeline_sync,
                "with --timeline: every scheduling point (mutex lock/unlock, atomics, yields) "
                "as an instant of its own");
  cmd->add_flag("--ignore-schedule", o->ignore_schedule,
                "with --repro: re-derive the schedule from the seed, not the recorded choices");
  o->run.AddTo(*cmd);
  const CommandSteps<ReplayOptions, ReplayPlan> steps{.validate = ValidateReplay,
                                                      .run = RunReplay};
  return [o, cmd, steps]() {
    for (const char* name : {"--strategy", "--steps-max", "--spurious-per-mille"}) {
      if (cmd->count(name) > 0) o->run_options_given.push_back(name);
    }
    return RunCommand("replay", steps, *o);
  };
}

}  // namespace restoresim::tools
