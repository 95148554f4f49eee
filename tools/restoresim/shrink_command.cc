// `restoresim shrink REPRO`: minimises a failing run — fewer preemptions, fewer scenario events,
// fewer steps — while it still fails the same way (sim/shrink.h), and writes the smaller repro
// next to the input (x.json -> x.min.json) or to --out. Prints each improvement as it is found,
// then the sizes before and after and the line that replays the result.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "core/port/posix_file_system.h"
#include "sim/repro.h"
#include "core/util/shown.h"
#include "sim/shrink.h"
#include "tools/restoresim/command_run.h"
#include "tools/restoresim/commands.h"
#include "tools/restoresim/json_output.h"
#include "tools/restoresim/interrupt.h"
#include "tools/restoresim/invocation.h"
#include "tools/restoresim/output_file.h"

namespace restoresim::tools {
namespace {

struct ShrinkOptions {
  std::string repro_path;
  std::string out_path;  // empty: sim::ShrunkReproPath(repro_path)
  uint64_t max_runs = 2000;
  uint32_t jobs = 0;  // 0: one per core
  bool json = false;
};

nlohmann::json MetricsJson(const sim::ScheduleMetrics& m) {
  return {{"choices", m.choices},           {"preemptions", m.preemptions},
          {"sched_events", m.sched_events}, {"data_events", m.data_events},
          {"data_sum", m.data_sum},         {"steps", m.steps}};
}

void PrintSummary(const sim::ShrinkResult& r, const std::string& out) {
  const sim::ScheduleMetrics& a = r.before;
  const sim::ScheduleMetrics& b = r.after;
  const std::string how = r.interrupted        ? "interrupted by " + InterruptSignalName()
                          : r.budget_exhausted ? std::string("budget spent (--max-runs)")
                                               : std::string("shrunk to a fixed point");
  std::printf("%s", fmt::format("\n{} in {} runs{}\n", how, r.runs,
                                r.budget_exhausted || r.interrupted
                                    ? ": more runs may shrink further"
                                    : "")
                        .c_str());
  std::printf("%s", fmt::format("  signature:    {}\n"
                                "  preemptions:  {} -> {}\n"
                                "  data events:  {} -> {} (data-choice sum {} -> {})\n"
                                "  wake-ups:     {} -> {} (spurious, or notify_one past the "
                                "first waiter)\n"
                                "  steps:        {} -> {}\n"
                                "  choices:      {} -> {}\n",
                                r.signature.ToString(), a.preemptions, b.preemptions, a.data_events,
                                b.data_events, a.data_sum, b.data_sum, a.sched_events,
                                b.sched_events, a.steps, b.steps, a.choices, b.choices)
                        .c_str());
  std::string passes;
  for (const sim::ShrinkPassStats& p : r.passes) {
    passes += fmt::format("{}{} {}/{}", passes.empty() ? "" : ", ", p.pass, p.improvements, p.runs);
  }
  std::printf("%s", fmt::format("  passes (kept/runs): {}\n", passes).c_str());
  std::printf("%s",
              fmt::format("wrote {}\n  replay: {}\n", out, Runnable(r.repro.replay_command))
                  .c_str());
}

// Prints one line per improvement of a count (a data sum being lowered would print one per run).
std::function<void(const sim::ShrinkProgress&)> ProgressPrinter() {
  auto shown = std::make_shared<sim::ScheduleMetrics>();
  return [shown](const sim::ShrinkProgress& p) {
    const sim::ScheduleMetrics& m = p.metrics;
    if (m.preemptions == shown->preemptions && m.sched_events == shown->sched_events &&
        m.data_events == shown->data_events && m.steps == shown->steps) {
      return;
    }
    *shown = m;
    std::printf("%s", fmt::format("  run {:>6}  {:<16} preemptions {}, data events {} (sum {}), "
                                  "steps {}, choices {}\n",
                                  p.runs, p.pass, p.metrics.preemptions, p.metrics.data_events,
                                  p.metrics.data_sum, p.metrics.steps, p.metrics.choices)
                          .c_str());
    std::fflush(stdout);
  };
}

void PrintJson(const ShrinkOptions& o, const sim::Program& program, const sim::Repro& input,
               const sim::ShrinkResult& result, const std::string& out) {
  nlohmann::json passes = nlohmann::json::array();
  for (const sim::ShrinkPassStats& p : result.passes) {
    passes.push_back({{"pass", p.pass}, {"runs", p.runs}, {"kept", p.improvements}});
  }
  nlohmann::json fields = {{"input", o.repro_path},
                           {"output", out},
                           {"scenario", program.name},
                           {"seed", input.config.seed},
                           {"strategy", input.config.strategy.ToString()},
                           {"signature", result.signature.ToString()},
                           {"runs", result.runs},
                           {"runs_speculative", result.runs_speculative},
                           {"improvements", result.improvements},
                           {"fixed_point", !result.budget_exhausted && !result.interrupted},
                           {"input_reproduced_exactly", result.input_trace_hash_matched},
                           {"passes", passes},
                           {"before", MetricsJson(result.before)},
                           {"after", MetricsJson(result.after)},
                           {"replay", result.repro.replay_command}};
  nlohmann::json j = JsonDocument("restoresim-shrink", 1, std::move(fields));
  if (result.interrupted) j["interrupted"] = InterruptSignalName();
  std::printf("%s\n", j.dump(2).c_str());
}

// What a shrink works on: the repro, its program, where the result goes, how many threads.
struct ShrinkPlan {
  sim::Repro input;
  const sim::Program* program = nullptr;
  std::string out;
  uint32_t jobs = 1;
};

absl::StatusOr<ShrinkPlan> ValidateShrink(const ShrinkOptions& o, CommandRun& command) {
  if (absl::Status s = CheckInputFile(o.repro_path, sim::kReproBytesMax); !s.ok()) return s;
  absl::StatusOr<sim::Repro> input = sim::ReadRepro(*PosixFileSystem::Default(), o.repro_path);
  if (!input.ok()) return input.status();
  ShrinkPlan plan{.input = *std::move(input)};
  plan.program = Programs().Find(plan.input.scenario);
  if (plan.program == nullptr) {
    return absl::NotFoundError(fmt::format("{}: unknown scenario '{}' (see `restoresim "
                                           "scenarios`)",
                                           o.repro_path, Shown(plan.input.scenario)));
  }
  plan.out = o.out_path.empty() ? sim::ShrunkReproPath(o.repro_path) : o.out_path;
  std::error_code same_error;
  if (plan.out == o.repro_path || std::filesystem::equivalent(plan.out, o.repro_path,
                                                              same_error)) {
    return absl::InvalidArgumentError("--out names the input file; write elsewhere");
  }
  // Checked before the work starts; "-" sends the repro to standard output, the report to
  // standard error.
  if (absl::Status s = command.OpenOutput(plan.out); !s.ok()) return s;
  plan.jobs = o.jobs != 0 ? o.jobs
                          : std::clamp(std::thread::hardware_concurrency(), 1u,
                                       sim::kShrinkJobsMax);
  return plan;
}

// Writes the shrunk repro (an interrupted shrink's too: the smallest failing run so far has
// replayed, ShrinkRepro checks it) and reports it.
int ReportShrink(const ShrinkOptions& o, const ShrinkPlan& plan, sim::ShrinkResult& result,
                 CommandRun& command) {
  if (result.interrupted) {
    command.Say(fmt::format("interrupted by {} after {} runs: writing the smallest failing run "
                            "found so far",
                            InterruptSignalName(), result.runs));
  }
  result.repro.replay_command = fmt::format("restoresim replay --repro {}", plan.out);
  absl::StatusOr<std::string> text = sim::ReproToCheckedJson(result.repro, plan.out);
  absl::Status written = text.ok() ? WriteOutput(plan.out, *text) : text.status();
  if (!written.ok()) {
    return command.Usage(
        fmt::format("cannot write {}: {}", plan.out, std::string(written.message())));
  }
  const int code = CommandRun::ExitCode(result.interrupted, false);
  if (o.json) {
    PrintJson(o, *plan.program, plan.input, result, plan.out);
    return code;
  }
  if (!result.input_trace_hash_matched) {
    std::printf(
        "note: the input re-ran with the same failure but another trace hash than it "
        "records (was the program changed?); that run was shrunk\n");
  }
  PrintSummary(result, plan.out);
  return code;
}

int RunShrink(const ShrinkOptions& o, ShrinkPlan& plan, CommandRun& command) {
  const sim::Repro& input = plan.input;
  if (!o.json) {
    std::printf("%s", fmt::format("restoresim shrink: {} scenario={} seed={} strategy={} "
                                  "expected={} max-runs={} jobs={}\n",
                                  o.repro_path, plan.program->name, input.config.seed,
                                  input.config.strategy.ToString(), input.outcome, o.max_runs,
                                  plan.jobs)
                          .c_str());
  }
  sim::ShrinkOptions options{.runs_max = o.max_runs,
                             .jobs = plan.jobs,
                             .on_progress = nullptr,
                             .stop = &command.Stop()};
  if (!o.json) options.on_progress = ProgressPrinter();
  absl::StatusOr<sim::ShrinkResult> result = sim::ShrinkRepro(*plan.program, input, options);
  if (!result.ok()) {
    const std::string message =
        fmt::format("{}: {}", o.repro_path, std::string(result.status().message()));
    if (result.status().code() != absl::StatusCode::kInternal) return command.Usage(message);
    command.Say(message);
    return kExitNotReproduced;
  }
  return ReportShrink(o, plan, *result, command);
}

}  // namespace

Command AddShrinkCommand(CLI::App& app) {
  auto o = std::make_shared<ShrinkOptions>();
  CLI::App* cmd = app.add_subcommand(
      "shrink", "minimise a failing repro (fewer preemptions, scenario events, steps)");
  cmd->add_option("repro", o->repro_path, "a repro file (written by explore)")->required();
  cmd->add_option("--out", o->out_path, "where to write the shrunk repro (default: X.min.json)");
  cmd->add_option("--max-runs", o->max_runs, "candidate runs to spend at most")
      ->check(CLI::Range(uint64_t{0}, sim::kShrinkRunsMax))
      ->capture_default_str();
  cmd->add_option("--jobs", o->jobs,
                  "threads running candidates (0: one per core); the result does not depend on it")
      ->check(CLI::Range(0u, sim::kShrinkJobsMax))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "print one JSON object instead of progress and a summary");
  const CommandSteps<ShrinkOptions, ShrinkPlan> steps{.validate = ValidateShrink,
                                                      .run = RunShrink};
  return [o, steps]() { return RunCommand("shrink", steps, *o); };
}

}  // namespace restoresim::tools
