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

int Usage(const std::string& message) {
  std::fprintf(stderr, "restoresim shrink: %s\n", message.c_str());
  return kExitUsage;
}

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

int RunShrink(const ShrinkOptions& o) {
  FileSystem& fs = *PosixFileSystem::Default();
  if (absl::Status s = CheckInputFile(o.repro_path, sim::kReproBytesMax); !s.ok()) {
    return Usage(std::string(s.message()));
  }
  absl::StatusOr<sim::Repro> input = sim::ReadRepro(fs, o.repro_path);
  if (!input.ok()) return Usage(std::string(input.status().message()));
  const sim::Program* program = Programs().Find(input->scenario);
  if (program == nullptr) {
    return Usage(fmt::format("{}: unknown scenario '{}' (see `restoresim scenarios`)", o.repro_path,
                             Shown(input->scenario)));
  }
  const std::string out = o.out_path.empty() ? sim::ShrunkReproPath(o.repro_path) : o.out_path;
  std::error_code same_error;
  if (out == o.repro_path || std::filesystem::equivalent(out, o.repro_path, same_error)) {
    return Usage("--out names the input file; write elsewhere");
  }
  // Checked before the work starts; "-" sends the repro to standard output, the report to
  // standard error.
  if (absl::Status s = CheckOutputPath(out); !s.ok()) return Usage(std::string(s.message()));
  if (out == "-") ReserveStdoutForData();
  const uint32_t jobs = o.jobs != 0 ? o.jobs
                                    : std::clamp(std::thread::hardware_concurrency(), 1u,
                                                 sim::kShrinkJobsMax);
  if (!o.json) {
    std::printf("%s", fmt::format("restoresim shrink: {} scenario={} seed={} strategy={} "
                                  "expected={} max-runs={} jobs={}\n",
                                  o.repro_path, program->name, input->config.seed,
                                  input->config.strategy.ToString(), input->outcome, o.max_runs,
                                  jobs)
                          .c_str());
  }
  sim::ShrinkOptions options{.runs_max = o.max_runs,
                             .jobs = jobs,
                             .on_progress = nullptr,
                             .stop = &InstallInterruptHandlers()};
  if (!o.json) options.on_progress = ProgressPrinter();
  absl::StatusOr<sim::ShrinkResult> result = sim::ShrinkRepro(*program, *input, options);
  if (!result.ok()) {
    const std::string message =
        fmt::format("{}: {}", o.repro_path, std::string(result.status().message()));
    if (result.status().code() == absl::StatusCode::kInternal) {
      std::fprintf(stderr, "restoresim shrink: %s\n", message.c_str());
      return kExitNotReproduced;
    }
    return Usage(message);
  }
  if (result->interrupted) {
    // The smallest failing run so far has replayed (ShrinkRepro checks it): it is written like
    // a finished result, and said to be one that more runs may shrink further.
    std::fprintf(stderr, "restoresim shrink: interrupted by %s after %llu runs: writing the "
                 "smallest failing run found so far\n", InterruptSignalName().c_str(),
                 static_cast<unsigned long long>(result->runs));
  }
  result->repro.replay_command = fmt::format("restoresim replay --repro {}", out);
  absl::StatusOr<std::string> text = sim::ReproToCheckedJson(result->repro, out);
  absl::Status written = text.ok() ? WriteOutput(out, *text) : text.status();
  if (!written.ok()) {
    return Usage(fmt::format("cannot write {}: {}", out, std::string(written.message())));
  }
  if (o.json) {
    PrintJson(o, *program, *input, *result, out);
    return result->interrupted ? kExitInterrupted : kExitOk;
  }
  if (!result->input_trace_hash_matched) {
    std::printf(
        "note: the input re-ran with the same failure but another trace hash than it "
        "records (was the program changed?); that run was shrunk\n");
  }
  PrintSummary(*result, out);
  return result->interrupted ? kExitInterrupted : kExitOk;
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
  return [o]() { return RunShrink(*o); };
}

}  // namespace restoresim::tools
