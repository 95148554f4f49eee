// `restoresim merge SHARD.json...`: combines the reports of a sweep's shards (`explore
// --shard I/N --json`, or `--json-out`) into the report one process running the whole sweep
// would have given (sim/sweep_merge.h), printed as explore prints it: the table, the totals
// with runs/s over the slowest shard, every saved failure with its replay line and repro
// file, the verdict; or, with --json, the merged report. --repros-to DIR copies the repro files
// the merged report keeps into one folder (checked to be the repro of that failure).
//
// Exit codes as explore: 0 as expected, 1 findings (or a repro that could not be copied), 2 a
// shard refused (unreadable, not a report, another sweep's, missing, twice), 130 interrupted:
// SIGINT or SIGTERM is polled between shards and between repro copies, and an interrupted merge
// writes no report (every file it did write, a copied repro, is whole: written atomically).
#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "core/port/posix_file_system.h"
#include "core/util/shown.h"
#include "sim/repro.h"
#include "sim/sweep_merge.h"
#include "tools/restoresim/command_run.h"
#include "tools/restoresim/commands.h"
#include "tools/restoresim/interrupt.h"
#include "tools/restoresim/output_file.h"
#include "tools/restoresim/sweep_summary.h"

namespace restoresim::tools {
namespace {

struct MergeOptions {
  std::vector<std::string> shard_paths;
  bool json = false;
  std::string json_out;
  std::string repros_to;
  bool coverage = false;
  bool quiet = false;
  bool all_failures = false;
};

std::string Dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash + 1);
}

absl::StatusOr<std::string> ReadInput(const std::string& path, uint64_t bytes_max) {
  if (absl::Status s = CheckInputFile(path, bytes_max); !s.ok()) return s;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return absl::UnavailableError(fmt::format("{}: cannot be read", path));
  }
  return text.str();
}

// A repro path as its shard wrote it is relative to that shard's working folder; when it is
// not found from here, it is looked for beside the shard's report.
void LocateRepros(const std::string& report_path, sim::SweepReport& report) {
  FileSystem& fs = *PosixFileSystem::Default();
  for (sim::FailureReport& f : report.failures) {
    if (f.repro.empty() || f.repro[0] == '/' || fs.FileExists(f.repro).ok()) continue;
    const std::string beside = Dir(report_path) + f.repro;
    if (fs.FileExists(beside).ok()) f.repro = beside;
  }
}

absl::StatusOr<sim::ShardReport> LoadShard(const std::string& path) {
  absl::StatusOr<std::string> text = ReadInput(path, sim::kSweepReportBytesMax);
  if (!text.ok()) return text.status();
  absl::StatusOr<sim::SweepReport> report = sim::SweepReportFromJson(*text);
  if (!report.ok()) {
    return absl::InvalidArgumentError(fmt::format("{}: not a shard report: {}", path,
                                                  std::string(report.status().message())));
  }
  LocateRepros(path, *report);
  return sim::ShardReport{path, *std::move(report)};
}

// Copies one failure's repro file to `dir`, under the name explore gives it, after checking
// that it is the repro of that failure.
absl::Status CopyRepro(const std::string& dir, sim::FailureReport& f) {
  absl::StatusOr<std::string> text = ReadInput(f.repro, sim::kReproBytesMax);
  if (!text.ok()) return text.status();
  absl::StatusOr<sim::Repro> repro = sim::ReproFromJson(*text);
  if (!repro.ok()) return repro.status();
  if (repro->scenario != f.scenario || repro->config.seed != f.seed ||
      repro->trace_hash != f.trace_hash) {
    return absl::InvalidArgumentError(fmt::format(
        "{} is the repro of {} seed {}, not of {} seed {}", f.repro, repro->scenario,
        repro->config.seed, f.scenario, f.seed));
  }
  const std::string to = fmt::format("{}/{}-seed{}.json", dir, f.scenario, f.seed);
  if (absl::Status s = WriteOutput(to, *text); !s.ok()) return s;
  f.repro = to;
  return absl::OkStatus();
}

// Copies the repros until `stop` is seen; returns how many were copied.
size_t CopyRepros(const std::string& dir, sim::SweepReport& merged,
                  const std::atomic<bool>& stop) {
  size_t copied = 0;
  for (sim::FailureReport& f : merged.failures) {
    if (stop.load()) break;
    if (!f.has_repro || f.repro.empty()) continue;
    ++copied;
    const std::string from = f.repro;
    if (absl::Status s = CopyRepro(dir, f); !s.ok()) {
      f.repro.clear();
      f.repro_error =
          fmt::format("cannot copy the repro {}: {}", from, std::string(s.message()));
    }
  }
  return copied;
}

int Interrupted(const std::string& what) {
  std::fprintf(stderr, "restoresim merge: interrupted by %s %s; no report written\n",
               InterruptSignalName().c_str(), what.c_str());
  return kExitInterrupted;
}

void PrintHeader(const sim::SweepReport& r, size_t shards) {
  const sim::SweepIdentity& id = r.sweep;
  std::printf("%s", fmt::format("restoresim merge: {} shards of scenario={} seeds=[{}, {}) "
                                "strategy={} steps-max={} spurious-per-mille={} build={}\n",
                                shards, id.scenario, id.seed_start, id.seed_start + id.seeds,
                                id.strategy,
                                id.steps_max == 0 ? std::string("scenario default")
                                                  : std::to_string(id.steps_max),
                                id.spurious_per_mille, id.build)
                        .c_str());
}

// The shard files to read: the count is checked (and --json-out) before any is opened.
absl::StatusOr<std::vector<std::string>> ValidateMerge(const MergeOptions& o,
                                                       CommandRun& command) {
  if (absl::Status s = command.OpenOutput(o.json_out); !s.ok()) return s;
  if (o.shard_paths.size() > sim::kMergeShardsMax) {
    return absl::InvalidArgumentError(fmt::format("{} shard files (at most {})",
                                                  o.shard_paths.size(), sim::kMergeShardsMax));
  }
  return o.shard_paths;
}

int RunMerge(const MergeOptions& o, std::vector<std::string>& shard_paths,
             CommandRun& command) {
  const auto Refuse = [&command](std::string_view message) { return command.Usage(message); };
  const std::atomic<bool>& stop = command.Stop();
  std::vector<sim::ShardReport> shards;
  for (const std::string& path : shard_paths) {
    if (stop.load()) {
      return Interrupted(fmt::format("after reading {} of {} shards", shards.size(),
                                     shard_paths.size()));
    }
    absl::StatusOr<sim::ShardReport> shard = LoadShard(path);
    if (!shard.ok()) return Refuse(std::string(shard.status().message()));
    shards.push_back(*std::move(shard));
  }
  absl::StatusOr<sim::SweepReport> merged = sim::MergeShardReports(shards);
  if (!merged.ok()) return Refuse(std::string(merged.status().message()));
  if (!o.repros_to.empty()) {
    if (absl::Status s = PosixFileSystem::Default()->CreateDirIfMissing(o.repros_to); !s.ok()) {
      return Refuse(fmt::format("--repros-to: {}", std::string(s.message())));
    }
    const size_t copied = CopyRepros(o.repros_to, *merged, stop);
    if (stop.load()) {
      return Interrupted(fmt::format("after copying {} repro files to {}", copied, o.repros_to));
    }
  }
  if (stop.load()) return Interrupted("before writing the merged report");

  const std::string json = sim::SweepReportToJson(*merged).dump(2) + "\n";
  if (!o.json_out.empty()) {
    if (absl::Status s = WriteOutput(o.json_out, json); !s.ok()) {
      return Refuse(std::string(s.message()));
    }
  }
  const int code = merged->Ok() ? kExitOk : kExitFindings;
  if (o.json) {
    std::fputs(json.c_str(), stdout);
    return code;
  }
  PrintHeader(*merged, shards.size());
  const sim::SweepTiming& t = merged->timing;
  // Over the slowest shard: the rate when every shard has a machine of its own. Shards that
  // share workers run one after another, so the sum over shards is printed too.
  double shard_seconds = 0;
  for (const sim::ShardTiming& s : t.shards) shard_seconds += s.wall_seconds;
  const std::string totals = fmt::format(
      "{} runs, {} failed, {:.0f} runs/s over the slowest of {} shards ({} jobs in all, "
      "{:.2f} s; {:.2f} s summed over shards), trace hash {}",
      merged->runs, merged->failed_runs, t.seeds_per_second, shards.size(), t.jobs,
      t.wall_seconds, shard_seconds, sim::HashHex(merged->trace_hash));
  PrintSweepSummary(*merged, totals,
                    SummaryOptions{
                        .coverage = o.coverage, .quiet = o.quiet, .all_failures = o.all_failures});
  return code;
}

}  // namespace

Command AddMergeCommand(CLI::App& app) {
  auto o = std::make_shared<MergeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "combine the --json reports of a sweep's shards into the whole sweep's report");
  cmd->add_option("shards", o->shard_paths,
                  "the shard reports (`explore --shard I/N --json`), one per shard, any order")
      ->required();
  cmd->add_flag("--json", o->json, "print the merged report as JSON (as explore --json)");
  cmd->add_option("--json-out", o->json_out,
                  "also write the merged JSON report to this file ('-': standard output)");
  cmd->add_option("--repros-to", o->repros_to,
                  "copy the repro files the merged report keeps into this folder");
  cmd->add_flag("--coverage", o->coverage, "list each scenario's coverage marks");
  cmd->add_flag("--quiet", o->quiet, "no failure details");
  cmd->add_flag("--all-failures", o->all_failures,
                "print every failure in full, expected findings (planted bugs and demos found) "
                "too");
  const CommandSteps<MergeOptions, std::vector<std::string>> steps{.validate = ValidateMerge,
                                                                   .run = RunMerge};
  return [o, steps]() { return RunCommand("merge", steps, *o); };
}

}  // namespace restoresim::tools
