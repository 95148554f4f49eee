// The restore benchmark (`restoresim bench restore --backend fake|kafka`): our runtime
// restoring a changelog into RocksDB, side by side in one run with the limits of the machine
// and, with --peer kafka-streams, with Kafka Streams restoring the same changelog on the same
// broker.
//
// What one run measures (every case in every round, rounds interleaved: the order of the cases
// rotates from round to round, so that drift in the machine's load hits every case alike):
//   limits      raw consumption; the store's write paths alone (WriteBatch, bulk) from memory;
//               fetch ‖ write on two threads, for both write paths (restore_limits.h);
//   ours        the runtime restoring from scratch (the default path: bulk for a large
//               restoration; and the WriteBatch path, "the standard restore path"), then from a
//               checkpoint (both paths), and from scratch at each --sizes changelog size;
//   peer        Kafka Streams restoring each of those changelogs from scratch;
//   eos         with --guarantee exactly_once_v2: the same records written transactionally as
//               a second changelog (TransactionSpec: a commit marker every N records, a share
//               of transactions aborted), restored by ours (both paths) and Kafka Streams with
//               processing.guarantee=exactly_once_v2 (read_committed), checked against the fold
//               of the committed records; its at-least-once baseline is the main changelog,
//               restored in the same rounds;
//   processing  two tasks, one restoring the changelog and one with an empty changelog and
//               input to process: time to its first processed record, and its processing rate
//               while the other restores, against the same run with nothing to restore.
// Every restored store is checked against the changelog's fold. The report gives records/s,
// MB/s and CPU-seconds per million records as min/median/max over rounds, and every figure of
// ours as a ratio to the overlapped limit of its write path and to Kafka Streams (the median of
// the per-round ratios, their min..max, and the ratio of medians), the peak RSS of our
// restorations and of Kafka Streams', the load average before and after each round, and the
// CPU each round's own processes and everyone else's used (a run in which others used more
// than a quarter of the cores is flagged unreliable: bench_report.h, BusyReason).
//
// Thread-safety: Run is called once per process, on the main thread.
#ifndef RESTORESIM_BENCH_RESTORE_BENCH_H_
#define RESTORESIM_BENCH_RESTORE_BENCH_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/changelog_data.h"

namespace restoresim::bench {

// Where the changelogs live (bench/backend.h): parsed once from --backend, compared as this.
enum class RestoreBackend { kFake, kKafka };

// The spelling of --backend: "fake" or "kafka"; and back (nullopt for any other string).
inline const char* RestoreBackendName(RestoreBackend backend) {
  return backend == RestoreBackend::kFake ? "fake" : "kafka";
}
inline std::optional<RestoreBackend> ParseRestoreBackend(std::string_view name) {
  if (name == "fake") return RestoreBackend::kFake;
  if (name == "kafka") return RestoreBackend::kKafka;
  return std::nullopt;
}

struct RestoreBenchOptions {
  RestoreBackend backend = RestoreBackend::kKafka;
  std::string bootstrap_servers;     // kafka: empty starts (and stops) a local broker
  std::string peer;                  // "" or "kafka-streams"
  ChangelogSpec spec;                // the changelog (records = the main size)
  // "at_least_once", or "exactly_once_v2": also the transactional changelog and its cases.
  std::string guarantee = "at_least_once";
  TransactionSpec transactions;      // exactly_once_v2: how its changelog is written
  std::vector<int64_t> sizes;        // more changelog sizes for the size plot (empty: N/16, N/4)
  double checkpoint_fraction = 0.1;  // records appended after the checkpoint, as a share of N
  // Input of the processing runs (0: sized by an untimed run so that processing outlasts the
  // restoration, at least N/2 and 20,000).
  int64_t process_records = 0;
  int32_t rounds = 5;
  int32_t restore_max_poll_records = 1000;
  // restoresim.restore.share.while.processing.percent of our runtime; -1: its default.
  int32_t restore_share_while_processing = -1;
  int64_t bulk_min_records = -1;     // -1: the store's default
  int64_t bulk_chunk_bytes_min = -1; // -1: the store's default (bulk_chunking.h)
  // The RocksDB our cases run on: "linked" (Debian's), "peer" (the one Kafka Streams runs on,
  // from its rocksdbjni jar), or a library's path. Empty: RESTORESIM_ROCKSDB_LIBRARY if set,
  // else "peer" with --peer kafka-streams, else "linked".
  std::string rocksdb_library;
  std::string work_dir;              // the run's directory goes under it (empty: /tmp)
  std::string svg_path = "restore-bench.svg";  // empty: no plot
  std::string json_path;             // also write the JSON report here
  bool json = false;                 // print the JSON report instead of tables
  bool progress = false;             // a progress bar on stderr
  std::string self_exe;              // this binary (kafka: the "own process" cases run it)
  // Set (by a signal handler) to stop: polled between set-up steps and between cases; the run
  // then reports its whole rounds so far, removes its work directory, and returns 130. May be
  // null.
  const std::atomic<bool>* stop = nullptr;
};

// The child of the "own process" cases (`restoresim bench restore --backend kafka
// --bootstrap-servers B --restore-child APP,INPUT,PARTITIONS,PATH,GUARANTEE,MAX_POLL,BULK_MIN`,
// PATH default or writebatch, BULK_MIN -1 for the store's default):
// our runtime restores the application's changelog from scratch into `state_dir`, alone in
// this process, and prints one JSON line (records, seconds, cpu_seconds, the process's peak
// RSS). The parent takes the peak of the child's whole life (RunCommand), like Kafka Streams'.
// Returns 0, 2 (a bad spec) or 3 (the restoration failed).
int RunRestoreChild(const std::string& bootstrap, const std::string& spec,
                    const std::string& state_dir);

// OK when `path` is a RocksDB library the benchmark could run on (rocksdb_library.h), else
// what is wrong with it (kInvalidArgument).
absl::Status CheckRocksDbLibrary(const std::string& path);

// Runs the benchmark; returns the process exit code (0 ok, 1 a store ended with the wrong
// contents, 2 bad options, 3 the benchmark could not run: a broker, topic or peer failed, 130
// interrupted: options.stop was set).
int RunRestoreBench(const RestoreBenchOptions& options);

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_RESTORE_BENCH_H_
