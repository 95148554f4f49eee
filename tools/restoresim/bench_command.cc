// `restoresim bench`: two benchmarks under one command, chosen by --backend.
//
// --backend sim (the default): seeds per second of the runtime's scenarios, with the invariant
// oracle on and off, measured side by side in one process, and the oracle's share of the run
// time.
//
// --backend fake | kafka: the restore benchmark (bench/restore_bench.h): our runtime restoring
// a changelog into RocksDB over the fake broker or a Kafka cluster (--bootstrap-servers, or a
// local broker started and stopped by the command), against the raw limits and, with --peer
// kafka-streams, Kafka Streams. One subcommand with a backend switch rather than a new
// subcommand: "bench" is where a user looks for throughput, and --backend says which world.
//
// For each selected program the same seeds run `--rounds` times with the oracle on and as many
// times with it off, alternating (on, off, on, off, ...) so that machine drift hits both; the
// fastest round of each counts. The oracle adds no scheduling point, so both modes must give
// the same sweep fingerprint — checked, and a difference is a finding (exit 1).
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/restore_bench.h"
#include "properties/oracle.h"
#include "sim/sweep.h"
#include "tools/restoresim/commands.h"
#include "tools/restoresim/interrupt.h"
#include "tools/restoresim/run_options.h"

namespace restoresim::tools {
namespace {

struct BenchOptions {
  std::string backend = "sim";
  std::string sizes;
  double tombstones = 0;
  bool transactions_given = false;  // --transaction-records or --aborted-share
  bench::RestoreBenchOptions restore;
  std::string scenario = "scenario.*";
  uint64_t seeds = 200;
  uint32_t jobs = 2;
  uint32_t rounds = 2;
  bool rounds_given = false;
  bool json = false;
  std::string restore_child;  // internal: bench::RunRestoreChild's spec
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
    std::fflush(stdout);  // seen at once when piped, before the rounds
  }
  std::vector<BenchRow> rows;
  bool findings = false;
  // SIGINT/SIGTERM: the sweep in progress stops within a run and is dropped; the rounds done
  // so far are reported (a scenario without a whole on/off pair is left out) and exit is 130.
  const std::atomic<bool>& stop = InstallInterruptHandlers();
  for (const sim::Program* program : *programs) {
    if (stop.load()) break;
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
      sweep.stop = &stop;
      const sim::SweepResult result = sim::RunSweep(sweep);
      if (!result.workers.ok()) {
        std::fprintf(stderr, "restoresim bench: %s\n",
                     std::string(result.workers.message()).c_str());
        return kExitUsage;
      }
      if (result.interrupted) break;
      const sim::ProgramSweepStats& stats = result.programs.front();
      row.steps_per_seed = static_cast<double>(stats.steps) / std::max<uint64_t>(stats.runs, 1);
      (on ? row.on_seconds : row.off_seconds) =
          std::min(on ? row.on_seconds : row.off_seconds, result.wall_seconds);
      (on ? row.fingerprint_on : row.fingerprint_off) = result.fingerprint;
      if (on) row.failed = stats.failed_runs;
      if (!on) ++row.rounds_done;
    }
    properties::Oracle::SetEnabled(true);
    if (row.rounds_done == 0) break;  // interrupted before a whole pair
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
                     {"failed_runs", r.failed},
                     {"rounds", r.rounds_done}});
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
  if (stop.load()) {
    std::fprintf(stderr, "restoresim bench: interrupted by %s: the rows above are of the rounds "
                 "done so far\n", InterruptSignalName().c_str());
    return kExitInterrupted;
  }
  return findings ? kExitFindings : kExitOk;
}

// The restore benchmark's options, checked; kExitOk or kExitUsage.
int PrepareRestoreBench(BenchOptions& o) {
  bench::RestoreBenchOptions& r = o.restore;
  r.backend = o.backend;
  r.json = o.json;
  r.progress = !o.json && isatty(STDERR_FILENO);
  r.stop = &InstallInterruptHandlers();
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) r.self_exe.assign(exe, static_cast<size_t>(n));
  if (o.rounds_given) r.rounds = static_cast<int32_t>(o.rounds);
  auto usage = [](const std::string& message) {
    std::fprintf(stderr, "restoresim bench: %s\n", message.c_str());
    return kExitUsage;
  };
  if (!r.peer.empty() && r.peer != "kafka-streams") {
    return usage("--peer must be kafka-streams (or absent)");
  }
  if (!r.peer.empty() && r.backend != "kafka") return usage("--peer needs --backend kafka");
  if (!r.bootstrap_servers.empty() && r.backend != "kafka") {
    return usage("--bootstrap-servers needs --backend kafka");
  }
  if (r.spec.records < 1 || r.spec.partitions < 1 || r.spec.key_bytes < 1 || r.rounds < 1 ||
      r.restore_max_poll_records < 1) {
    return usage("--records, --partitions, --key-bytes, --rounds and --max-poll-records must "
                 "be positive");
  }
  if (r.spec.records < r.spec.partitions) return usage("--records must be >= --partitions");
  if (r.process_records < 0) {
    return usage("--process-records must be positive (or 0: sized by an untimed run)");
  }
  if (o.tombstones < 0 || o.tombstones > 1) return usage("--tombstones is a fraction in [0, 1]");
  if (r.guarantee != "at_least_once" && r.guarantee != "exactly_once_v2") {
    return usage("--guarantee must be at_least_once or exactly_once_v2, not '" + r.guarantee +
                 "'");
  }
  if (o.transactions_given && r.guarantee != "exactly_once_v2") {
    return usage("--transaction-records and --aborted-share need --guarantee exactly_once_v2");
  }
  // Written as "!(x >= 0 && x < 1)" so that a NaN is refused too.
  if (!(r.transactions.aborted_share >= 0 && r.transactions.aborted_share < 1)) {
    return usage("--aborted-share is a share of transactions in [0, 1)");
  }
  if (r.transactions.records_per_transaction < 1) {
    return usage("--transaction-records must be positive");
  }
  r.spec.tombstone_per_mille = static_cast<uint32_t>(o.tombstones * 1000 + 0.5);
  if (r.checkpoint_fraction <= 0 || r.checkpoint_fraction > 10) {
    return usage("--checkpoint-fraction must be in (0, 10]");
  }
  for (absl::string_view part : absl::StrSplit(o.sizes, ',', absl::SkipEmpty())) {
    int64_t size = 0;
    if (!absl::SimpleAtoi(part, &size) || size < 1) {
      return usage("--sizes is a comma-separated list of positive record counts");
    }
    r.sizes.push_back(size);
  }
  return kExitOk;
}

void AddRestoreOptions(CLI::App& cmd, BenchOptions& o) {
  bench::RestoreBenchOptions& r = o.restore;
  cmd.add_option("--backend", o.backend,
                 "sim: seeds/s of the scenarios (default); fake or kafka: the restore benchmark")
      ->check(CLI::IsMember({"sim", "fake", "kafka"}));
  cmd.add_option("--bootstrap-servers", r.bootstrap_servers,
                 "kafka: the cluster (default: start a local broker and stop it afterwards)");
  cmd.add_option("--peer", r.peer, "kafka-streams: Kafka Streams restores the same changelogs");
  cmd.add_option("--records", r.spec.records, "changelog records (default 1000000)");
  cmd.add_option("--partitions", r.spec.partitions, "changelog partitions (default 1)");
  cmd.add_option("--key-bytes", r.spec.key_bytes, "key size (default 16)");
  cmd.add_option("--value-bytes", r.spec.value_bytes, "value size (default 100)");
  cmd.add_option("--key-space", r.spec.key_space,
                 "distinct keys; fewer than --records repeats keys (default: one per record)");
  cmd.add_option("--tombstones", o.tombstones, "share of records that are tombstones (0)");
  cmd.add_option("--guarantee", r.guarantee,
                 "at_least_once (default), or exactly_once_v2: also a transactional changelog of "
                 "the same records, restored by ours and Kafka Streams under exactly_once_v2");
  auto transactions = [&o](const std::string&) { o.transactions_given = true; };
  cmd.add_option("--transaction-records", r.transactions.records_per_transaction,
                 "exactly_once_v2: records per committed transaction (1000)")
      ->each(transactions);
  cmd.add_option("--aborted-share", r.transactions.aborted_share,
                 "exactly_once_v2: aborted transactions as a share of all, in [0, 1) (0.1)")
      ->each(transactions);
  cmd.add_option("--data-seed", r.spec.seed, "seed of the generated records (default 1)");
  cmd.add_option("--sizes", o.sizes,
                 "more changelog sizes for the size plot, e.g. 100000,300000 (default N/16,N/4)");
  cmd.add_option("--checkpoint-fraction", r.checkpoint_fraction,
                 "records written after the checkpoint, as a share of --records (0.1)");
  cmd.add_option("--process-records", r.process_records,
                 "input records of the processing runs (default: sized by an untimed run so "
                 "that processing outlasts the restoration; at least N/2 and 20000)");
  cmd.add_option("--max-poll-records", r.restore_max_poll_records,
                 "restore.consumer.max.poll.records, also the limits' batch size (1000)");
  cmd.add_option("--bulk-min-records", r.bulk_min_records,
                 "the store's bulk path threshold (default: the store's, 100000)");
  cmd.add_option("--work-dir", r.work_dir,
                 "where the run's directory restoresim-bench-PID goes (default /tmp)");
  cmd.add_option("--svg", r.svg_path, "the plot (default restore-bench.svg; '' for none)");
  cmd.add_option("--json-out", r.json_path, "also write the JSON report to this file");
  // Internal: the child of the "own process" cases (bench/restore_bench.h, RunRestoreChild).
  cmd.add_option("--restore-child", o.restore_child)->group("");
}

}  // namespace

Command AddBenchCommand(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Seeds per second of scenarios with the oracle on and off (--backend sim), or the restore "
      "benchmark against the raw limits and Kafka Streams (--backend fake|kafka)");
  cmd->add_option("--scenario", options->scenario,
                  "sim: 'all', a name, or a prefix ending in '*' (default scenario.*)");
  cmd->add_option("--seeds", options->seeds, "sim: seeds per scenario and round (default 200)");
  cmd->add_option("--jobs", options->jobs, "sim: worker threads (default 2)");
  cmd->add_option("--rounds", options->rounds,
                  "rounds per mode (sim: the fastest counts, default 2; restore: interleaved, "
                  "min/median/max and paired ratios, default 5)")
      ->each([o = options.get()](const std::string&) { o->rounds_given = true; });
  cmd->add_flag("--json", options->json, "print JSON instead of a table");
  options->run.AddTo(*cmd);
  AddRestoreOptions(*cmd, *options);
  return [options, cmd]() {
    // An option of the other benchmark is a mistake, not something to ignore silently (a
    // forgotten --backend would otherwise run the scenarios for a minute).
    const bool sim = options->backend == "sim";
    for (const CLI::Option* option : cmd->get_options()) {
      if (option->count() == 0) continue;
      const std::string name = option->get_name();
      const bool sim_only = name == "--scenario" || name == "--seeds" || name == "--jobs" ||
                            name == "--strategy" || name == "--steps-max" ||
                            name == "--spurious-per-mille";
      const bool shared = name == "--backend" || name == "--rounds" || name == "--json" ||
                          name == "--help";
      if (sim && !sim_only && !shared) {
        const bool kafka_only = name == "--bootstrap-servers" || name == "--peer";
        std::fprintf(stderr, "restoresim bench: %s needs --backend %s\n", name.c_str(),
                     kafka_only ? "kafka" : "fake or kafka");
        return kExitUsage;
      }
      if (!sim && sim_only) {
        std::fprintf(stderr, "restoresim bench: %s is an option of --backend sim\n",
                     name.c_str());
        return kExitUsage;
      }
    }
    if (sim) return RunBench(*options);
    if (int rc = PrepareRestoreBench(*options); rc != kExitOk) return rc;
    if (!options->restore_child.empty()) {
      const bench::RestoreBenchOptions& r = options->restore;
      if (r.backend != "kafka" || r.bootstrap_servers.empty() || r.work_dir.empty()) {
        std::fprintf(stderr, "restoresim bench: --restore-child needs --backend kafka, "
                     "--bootstrap-servers and --work-dir\n");
        return kExitUsage;
      }
      return bench::RunRestoreChild(r.bootstrap_servers, options->restore_child, r.work_dir);
    }
    return bench::RunRestoreBench(options->restore);
  };
}

}  // namespace restoresim::tools
