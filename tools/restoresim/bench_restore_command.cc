// `restoresim bench restore --backend fake|kafka`: the restore benchmark
// (bench/restore_bench.h): our runtime restoring a changelog into RocksDB over the fake broker
// or a Kafka cluster (--bootstrap-servers, or a local broker started and stopped by the
// command), against the raw limits and, with --peer kafka-streams, Kafka Streams.
//
// --backend is required (no default: the kafka backend starts a broker, the fake one does
// not; a forgotten choice should not pick one) and parsed once, into bench::RestoreBackend.
#include <cstdio>

#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/restore_bench.h"
#include "core/util/check.h"
#include "core/util/shown.h"
#include "tools/restoresim/bench_command.h"
#include "tools/restoresim/command_run.h"

namespace restoresim::tools {
namespace {

struct RestoreOptions {
  std::string backend;  // as given; parsed into restore.backend
  std::string sizes;
  double tombstones = 0;
  bool transactions_given = false;  // --transaction-records or --aborted-share
  std::string restore_child;        // internal: bench::RunRestoreChild's spec
  bench::RestoreBenchOptions restore;
};

// The options' values, checked; "" or what is wrong with them.
std::string CheckValues(const RestoreOptions& o) {
  const bench::RestoreBenchOptions& r = o.restore;
  const bool kafka = r.backend == bench::RestoreBackend::kKafka;
  if (!r.peer.empty() && r.peer != "kafka-streams") {
    return "--peer must be kafka-streams (or absent)";
  }
  if (!r.peer.empty() && !kafka) return "--peer needs --backend kafka";
  if (!r.bootstrap_servers.empty() && !kafka) return "--bootstrap-servers needs --backend kafka";
  if (r.spec.records < 1 || r.spec.partitions < 1 || r.spec.key_bytes < 1 || r.rounds < 1 ||
      r.restore_max_poll_records < 1) {
    return "--records, --partitions, --key-bytes, --rounds and --max-poll-records must be "
           "positive";
  }
  if (r.spec.records < r.spec.partitions) return "--records must be >= --partitions";
  if (r.process_records < 0) {
    return "--process-records must be positive (or 0: sized by an untimed run)";
  }
  if (o.tombstones < 0 || o.tombstones > 1) return "--tombstones is a fraction in [0, 1]";
  if (r.guarantee != "at_least_once" && r.guarantee != "exactly_once_v2") {
    return "--guarantee must be at_least_once or exactly_once_v2, not '" + r.guarantee + "'";
  }
  if (o.transactions_given && r.guarantee != "exactly_once_v2") {
    return "--transaction-records and --aborted-share need --guarantee exactly_once_v2";
  }
  // Written as "!(x >= 0 && x < 1)" so that a NaN is refused too.
  if (!(r.transactions.aborted_share >= 0 && r.transactions.aborted_share < 1)) {
    return "--aborted-share is a share of transactions in [0, 1)";
  }
  if (r.transactions.records_per_transaction < 1) return "--transaction-records must be positive";
  if (r.checkpoint_fraction <= 0 || r.checkpoint_fraction > 10) {
    return "--checkpoint-fraction must be in (0, 10]";
  }
  if (r.restore_share_while_processing != -1 &&
      (r.restore_share_while_processing < 1 || r.restore_share_while_processing > 100)) {
    return "--restore-share is a percentage in 1..100";
  }
  if (r.rocksdb_library == "peer" && r.peer.empty()) {
    return "--rocksdb-library peer needs --peer kafka-streams";
  }
  if (!o.restore_child.empty() && (!kafka || r.bootstrap_servers.empty() || r.work_dir.empty())) {
    return "--restore-child needs --backend kafka, --bootstrap-servers and --work-dir";
  }
  return "";
}

// The benchmark's options, parsed and checked: the plan it runs, or what is wrong with them.
absl::StatusOr<bench::RestoreBenchOptions> Prepare(const RestoreOptions& given,
                                                   CommandRun& command) {
  RestoreOptions o = given;
  bench::RestoreBenchOptions& r = o.restore;
  const std::optional<bench::RestoreBackend> backend = bench::ParseRestoreBackend(o.backend);
  RS_CHECK(backend.has_value());  // CLI11 checked it is one of them
  r.backend = *backend;
  if (std::string wrong = CheckValues(o); !wrong.empty()) {
    return absl::InvalidArgumentError(wrong);
  }
  if (!r.rocksdb_library.empty() && r.rocksdb_library != "linked" && r.rocksdb_library != "peer") {
    // A path: loaded now, so a wrong one is a bad option, not a failed run.
    if (absl::Status s = bench::CheckRocksDbLibrary(r.rocksdb_library); !s.ok()) return s;
  }
  r.spec.tombstone_per_mille = static_cast<uint32_t>(o.tombstones * 1000 + 0.5);
  for (absl::string_view part : absl::StrSplit(o.sizes, ',', absl::SkipEmpty())) {
    int64_t size = 0;
    if (!absl::SimpleAtoi(part, &size) || size < 1) {
      return absl::InvalidArgumentError(
          "--sizes is a comma-separated list of positive record counts");
    }
    r.sizes.push_back(size);
  }
  r.progress = !r.json && isatty(STDERR_FILENO);
  r.stop = &command.Stop();
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) r.self_exe.assign(exe, static_cast<size_t>(n));
  return r;
}

int RunBenchRestore(const RestoreOptions& o, bench::RestoreBenchOptions& r, CommandRun&) {
  if (!o.restore_child.empty()) {
    return bench::RunRestoreChild(r.bootstrap_servers, o.restore_child, r.work_dir);
  }
  return bench::RunRestoreBench(r);
}

// The changelog's shape and the guarantee it is written and restored under.
void AddChangelogOptions(CLI::App& cmd, RestoreOptions& o) {
  bench::RestoreBenchOptions& r = o.restore;
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
}

// Where it runs, how it restores and processes, and what it writes.
void AddRunOptions(CLI::App& cmd, RestoreOptions& o) {
  bench::RestoreBenchOptions& r = o.restore;
  cmd.add_option("--backend", o.backend, "fake (the in-memory broker) or kafka")
      ->required()
      ->check(CLI::Validator(
          [](const std::string& value) -> std::string {
            if (bench::ParseRestoreBackend(value).has_value()) return "";
            if (value == "sim") return "sim is not a restore backend: `restoresim bench sim`";
            return "fake or kafka, not '" + Shown(value) + "'";
          },
          "fake|kafka"));
  cmd.add_option("--bootstrap-servers", r.bootstrap_servers,
                 "kafka: the cluster (default: start a local broker and stop it afterwards)");
  cmd.add_option("--peer", r.peer, "kafka-streams: Kafka Streams restores the same changelogs");
  cmd.add_option("--rocksdb-library", r.rocksdb_library,
                 "the RocksDB ours runs on: linked (Debian's), peer (Kafka Streams' own, from "
                 "its rocksdbjni jar) or a library's path (default: $RESTORESIM_ROCKSDB_LIBRARY, "
                 "else peer with --peer, else linked)");
  cmd.add_option("--rounds", r.rounds,
                 "rounds, interleaved: min/median/max and paired ratios (default 5)");
  cmd.add_option("--process-records", r.process_records,
                 "input records of the processing runs (default: sized by an untimed run so "
                 "that processing outlasts the restoration; at least N/2 and 20000)");
  cmd.add_option("--max-poll-records", r.restore_max_poll_records,
                 "restore.consumer.max.poll.records, also the limits' batch size (1000)");
  cmd.add_option("--restore-share", r.restore_share_while_processing,
                 "restoresim.restore.share.while.processing.percent of our runtime, 1..100 "
                 "(default: the runtime's)");
  cmd.add_option("--bulk-min-records", r.bulk_min_records,
                 "the store's bulk path threshold (default: the store's, 100000)");
  cmd.add_option("--bulk-chunk-min", r.bulk_chunk_bytes_min,
                 "the bulk path's smallest chunk in bytes: chunks ramp up from it and halve "
                 "towards the restoration's end; 0: every chunk 16 MiB (default: the store's, "
                 "2 MiB)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd.add_option("--work-dir", r.work_dir,
                 "where the run's directory restoresim-bench-PID goes (default /tmp)");
  cmd.add_option("--svg", r.svg_path, "the plot (default restore-bench.svg; '' for none)");
  cmd.add_option("--json-out", r.json_path, "also write the JSON report to this file");
  cmd.add_flag("--json", r.json, "print the JSON report instead of tables");
  // Internal: the child of the "own process" cases (bench/restore_bench.h, RunRestoreChild).
  cmd.add_option("--restore-child", o.restore_child)->group("");
}

}  // namespace

BenchSubcommand AddBenchRestoreCommand(CLI::App& bench) {
  auto o = std::make_shared<RestoreOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "restore",
      "The restore benchmark: our runtime restoring changelogs into RocksDB over --backend fake "
      "or kafka, against the machine's limits and (--peer kafka-streams) Kafka Streams");
  AddRunOptions(*cmd, *o);
  AddChangelogOptions(*cmd, *o);
  const CommandSteps<RestoreOptions, bench::RestoreBenchOptions> steps{.validate = Prepare,
                                                                       .run = RunBenchRestore};
  return {cmd, [o, steps]() { return RunCommand("bench restore", steps, *o); }};
}

}  // namespace restoresim::tools
