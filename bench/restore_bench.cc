#include "bench/restore_bench.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>

#include "bench/backend.h"
#include "bench/bench_report.h"
#include "bench/bench_results.h"
#include "bench/local_broker.h"
#include "bench/machine_cpu.h"
#include "bench/progress_bar.h"
#include "bench/project_paths.h"
#include "bench/restore_limits.h"
#include "bench/runtime_runs.h"
#include "bench/streams_peer.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "core/state/rocksdb_library.h"
#include "core/util/check.h"

namespace restoresim::bench {
namespace {

constexpr int64_t kInputKeys = 10'000;  // distinct keys of the processing runs' input
constexpr int kExitInterrupted = 130;   // as the CLI's (tools/restoresim/interrupt.h)

struct Case {
  size_t samples;  // index into results_.cases
  std::function<absl::StatusOr<Measurement>(const std::string& dir)> run;
};

int64_t BytesOf(const std::vector<KeyValueWrite>& records) {
  int64_t bytes = 0;
  for (const KeyValueWrite& w : records) {
    bytes += static_cast<int64_t>(w.key.size() + (w.value ? w.value->size() : 0));
  }
  return bytes;
}

int64_t BytesOf(const std::vector<std::vector<KeyValueWrite>>& partitions) {
  int64_t bytes = 0;
  for (const auto& records : partitions) bytes += BytesOf(records);
  return bytes;
}

// A changelog the runtime and Kafka Streams restore: its application, expected contents, size.
struct Changelog {
  AppSpec app;
  std::vector<StoreDigest> expected;
  int64_t records = 0;  // exactly_once: the committed ones
  int64_t bytes = 0;
  bool exactly_once = false;  // written in transactions, restored under exactly_once_v2
};

class Bench {
 public:
  explicit Bench(const RestoreBenchOptions& o) : o_(o) {}
  int Run();

 private:
  absl::Status Connect();
  absl::Status CreateApp(const AppSpec& app);
  absl::StatusOr<Changelog> MakeChangelog(const std::string& name, const ChangelogSpec& spec,
                                          std::vector<std::vector<KeyValueWrite>>* keep);
  absl::StatusOr<Changelog> MakeTransactionalChangelog();
  absl::Status ChooseRocksDb();
  absl::Status SetUp();
  absl::Status SetUpCheckpoint();
  absl::Status ProduceInput(const TopicPartition& tp, int64_t n);
  absl::StatusOr<AppSpec> MakeProcessingApp(const std::string& suffix,
                                            const std::vector<KeyValueWrite>* restoring,
                                            int64_t input);
  absl::Status SizeProcessingPair(std::vector<KeyValueWrite>& restoring);
  absl::Status SetUpProcessing();
  void AddCase(std::string id, std::string label, int64_t size,
               std::function<absl::StatusOr<Measurement>(const std::string&)> run);
  void AddOwnProcessCases(const Changelog& c);
  absl::StatusOr<Measurement> RunOwnProcess(const Changelog& c, const std::string& path,
                                            const std::string& dir);
  void AddLimitCases();
  // The main changelog's records in each partition (the bulk limit's expected ends).
  std::vector<int64_t> RecordsPerPartition() const {
    std::vector<int64_t> n;
    for (const auto& p : main_records_) n.push_back(static_cast<int64_t>(p.size()));
    return n;
  }
  void AddRestoreCases(const Changelog& c, const std::string& id_prefix,
                       const std::string& label_suffix);
  absl::StatusOr<ProcessingSample> RunProcessingPair(int32_t round);
  absl::StatusOr<ProcessingSample> RunPeerProcessingPair(int32_t round);
  absl::Status RunSlot(size_t i, int32_t round, const std::string& what);
  absl::Status RunRounds();
  bool Stopping() const { return o_.stop != nullptr && o_.stop->load(); }
  absl::Status Interrupted() const { return absl::CancelledError("interrupted"); }
  int32_t WholeRounds();
  RuntimeOptions Runtime(RocksDbStoreOptions::BulkRestore bulk, bool exactly_once = false) const;
  std::string Log(const std::string& name) const { return work_dir_ + "/" + name + ".log"; }
  void Say(const std::string& line) const;

  const RestoreBenchOptions o_;
  std::string run_id_;
  std::string work_dir_;
  std::unique_ptr<LocalBroker> local_broker_;
  std::unique_ptr<Backend> backend_;
  BenchResults results_;
  std::vector<Case> cases_;
  std::vector<std::vector<KeyValueWrite>> main_records_;
  Changelog main_;
  Changelog checkpoint_;
  std::string checkpoint_base_dir_;
  std::vector<std::pair<AppSpec, AppSpec>> processing_apps_;  // per round: restoring, idle
  std::vector<std::pair<AppSpec, AppSpec>> peer_processing_apps_;  // Kafka Streams' (--peer)
  std::string mix_input_topic_;  // the processing runs' input, shared
  std::unique_ptr<ProgressBar> bar_;
};

void Bench::Say(const std::string& line) const {
  if (o_.json) return;
  if (bar_ != nullptr) bar_->Clear();
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

RuntimeOptions Bench::Runtime(RocksDbStoreOptions::BulkRestore bulk, bool exactly_once) const {
  RuntimeOptions options;
  options.exactly_once = exactly_once;
  options.store.bulk_restore = bulk;
  if (o_.bulk_min_records >= 0) options.store.bulk_min_records = o_.bulk_min_records;
  if (o_.bulk_chunk_bytes_min >= 0) {
    options.store.bulk_chunk_bytes_min = static_cast<size_t>(o_.bulk_chunk_bytes_min);
  }
  options.restore_max_poll_records = o_.restore_max_poll_records;
  options.restore_share_while_processing = o_.restore_share_while_processing;
  return options;
}

absl::Status Bench::Connect() {
  if (o_.backend == RestoreBackend::kFake) {
    backend_ = NewFakeBackend();
    return absl::OkStatus();
  }
  std::string bootstrap = o_.bootstrap_servers;
  if (bootstrap.empty()) {
    Say("starting a local Kafka broker (tools/kafka/broker) ...");
    absl::StatusOr<std::unique_ptr<LocalBroker>> broker = LocalBroker::Start(Log("broker"));
    if (!broker.ok()) return broker.status();
    local_broker_ = std::move(*broker);
    bootstrap = local_broker_->bootstrap();
  }
  absl::StatusOr<std::unique_ptr<Backend>> backend = NewKafkaBackend(bootstrap);
  if (!backend.ok()) return backend.status();
  backend_ = std::move(*backend);
  return absl::OkStatus();
}

absl::Status Bench::CreateApp(const AppSpec& app) {
  if (absl::Status s = backend_->CreateTopic(app.input_topic, app.partitions); !s.ok()) return s;
  return backend_->CreateTopic(app.Changelog(), app.partitions);
}

absl::StatusOr<Changelog> Bench::MakeChangelog(const std::string& name,
                                               const ChangelogSpec& spec,
                                               std::vector<std::vector<KeyValueWrite>>* keep) {
  Changelog c;
  c.app = AppSpec{run_id_ + "-" + name, run_id_ + "-" + name + "-input", spec.partitions};
  if (absl::Status s = CreateApp(c.app); !s.ok()) return s;
  std::vector<std::vector<KeyValueWrite>> records(static_cast<size_t>(spec.partitions));
  for (int32_t p = 0; p < spec.partitions; ++p) {
    records[p] = GenerateChangelog(spec, p);
    c.expected.push_back(DigestOfFold(records[p]));
    c.records += static_cast<int64_t>(records[p].size());
    if (absl::Status s = backend_->Produce({c.app.Changelog(), p}, records[p]); !s.ok()) return s;
  }
  c.bytes = BytesOf(records);
  if (keep != nullptr) *keep = std::move(records);
  return c;
}

void Bench::AddCase(std::string id, std::string label, int64_t size,
                    std::function<absl::StatusOr<Measurement>(const std::string&)> run) {
  results_.cases.push_back(CaseSamples{std::move(id), std::move(label), size, {}});
  cases_.push_back(Case{results_.cases.size() - 1, std::move(run)});
}

// Ours from scratch on both write paths, and Kafka Streams, on one changelog.
void Bench::AddRestoreCases(const Changelog& c, const std::string& id_prefix,
                            const std::string& label_suffix) {
  using Bulk = RocksDbStoreOptions::BulkRestore;
  for (const auto& [path, bulk, label] :
       {std::tuple{"default", Bulk::kAuto, "ours, default path"},
        std::tuple{"writebatch", Bulk::kOff, "ours, WriteBatch path"}}) {
    AddCase(fmt::format("ours.{}.{}", id_prefix, path), label + label_suffix, c.records,
            [this, c, bulk = bulk](const std::string& dir) -> absl::StatusOr<Measurement> {
              absl::StatusOr<Measurement> m =
                  RunRestore(*backend_, c.app, dir, Runtime(bulk, c.exactly_once),
                             c.app.partitions, c.expected);
              if (m.ok()) m->bytes = c.bytes;
              return m;
            });
  }
  if (id_prefix == "scratch") {
    // The oracle's cost on real threads (issue 22: within 5% of the run without it).
    AddCase("ours.scratch.writebatch.oracle", "ours, WriteBatch path, oracle on" + label_suffix,
            c.records, [this, c](const std::string& dir) -> absl::StatusOr<Measurement> {
              RuntimeOptions options = Runtime(RocksDbStoreOptions::BulkRestore::kOff);
              options.oracle = true;
              absl::StatusOr<Measurement> m =
                  RunRestore(*backend_, c.app, dir, options, c.app.partitions, c.expected);
              if (m.ok()) m->bytes = c.bytes;
              return m;
            });
  }
  if (id_prefix == "scratch") AddOwnProcessCases(c);
  if (o_.peer.empty()) return;
  AddCase(fmt::format("peer.{}", id_prefix), "Kafka Streams" + label_suffix, c.records,
          [this, c](const std::string& dir) -> absl::StatusOr<Measurement> {
            absl::StatusOr<Measurement> m = RunStreamsPeer(
                backend_->bootstrap_servers(), c.app,
                c.exactly_once ? "exactly_once_v2" : "at_least_once", dir, c.expected,
                Log("kafka-streams"), &results_.peer_version);
            if (m.ok()) m->bytes = c.bytes;
            return m;
          });
}

// Ours restoring from scratch in a process of its own (RunRestoreChild), for its peak RSS
// beside Kafka Streams' JVM: kafka backend only (the fake broker lives in this process).
void Bench::AddOwnProcessCases(const Changelog& c) {
  if (o_.backend != RestoreBackend::kKafka || o_.self_exe.empty()) return;
  for (const char* path : {"default", "writebatch"}) {
    AddCase(fmt::format("ours.scratch.{}.own_process", path),
            fmt::format("ours, {} path, own process, from scratch",
                        std::string(path) == "default" ? "default" : "WriteBatch"),
            c.records, [this, c, path](const std::string& dir) -> absl::StatusOr<Measurement> {
              return RunOwnProcess(c, path, dir);
            });
  }
}

absl::StatusOr<Measurement> Bench::RunOwnProcess(const Changelog& c, const std::string& path,
                                                 const std::string& dir) {
  const std::string spec =
      fmt::format("{},{},{},{},{},{},{},{}", c.app.app_id, c.app.input_topic, c.app.partitions,
                  path, c.exactly_once ? "exactly_once_v2" : "at_least_once",
                  o_.restore_max_poll_records, o_.bulk_min_records, o_.bulk_chunk_bytes_min);
  const std::string command = fmt::format(
      "{} bench restore --backend kafka --bootstrap-servers {} --svg '' --restore-child {} "
      "--work-dir {}",
      ShellQuote(o_.self_exe), ShellQuote(backend_->bootstrap_servers()), ShellQuote(spec),
      ShellQuote(dir));
  std::string out;
  int64_t peak = -1;
  const int rc = RunCommand(command, Log("own-process"), &out, &peak);
  const nlohmann::json j = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (rc != 0 || j.is_discarded() || !j.is_object()) {
    return absl::UnavailableError(fmt::format("the own-process restoration failed (exit {}): {}; "
                                              "see {}", rc, out.substr(0, 300),
                                              Log("own-process")));
  }
  Measurement m;
  m.records = j.value("records", int64_t{0});
  m.bytes = c.bytes;
  m.seconds = j.value("seconds", 0.0);
  m.cpu_seconds = j.value("cpu_seconds", 0.0);
  m.peak_rss_bytes = peak;  // the child's whole life (RunCommand), as Kafka Streams' JVM
  // The path first: OverlappedLimitOf reads it.
  m.note = j.value("note", std::string()) +
           "; a process of its own (contents checked by the in-process cases)";
  return m;
}

// The main changelog's records again, as exactly_once_v2 writes a changelog: in transactions
// (o_.transactions), some aborted. Its stores must end with the fold of the committed records,
// which are the main changelog's: the same contents, checked here once against its digests.
absl::StatusOr<Changelog> Bench::MakeTransactionalChangelog() {
  Changelog c;
  c.exactly_once = true;
  c.app = AppSpec{run_id_ + "-eos", run_id_ + "-eos-input", o_.spec.partitions};
  if (absl::Status s = CreateApp(c.app); !s.ok()) return s;
  int64_t commits = 0, aborts = 0, aborted_records = 0;
  for (int32_t p = 0; p < o_.spec.partitions; ++p) {
    std::vector<KeyValueWrite> records = GenerateChangelog(o_.spec, p);
    c.records += static_cast<int64_t>(records.size());
    c.bytes += BytesOf(records);
    const std::vector<ChangelogTransaction> transactions =
        TransactionalChangelog(std::move(records), o_.transactions);
    c.expected.push_back(DigestOfCommitted(transactions));
    RS_CHECK(c.expected.back() == main_.expected[static_cast<size_t>(p)],
             "partition {}: the committed records' fold {} is not the main changelog's {}", p,
             c.expected.back().ToString(), main_.expected[static_cast<size_t>(p)].ToString());
    for (const ChangelogTransaction& txn : transactions) {
      (txn.commit ? commits : aborts) += 1;
      if (!txn.commit) aborted_records += static_cast<int64_t>(txn.records.size());
    }
    if (absl::Status s = backend_->ProduceTransactions({c.app.Changelog(), p}, transactions);
        !s.ok()) {
      return s;
    }
  }
  results_.eos_changelog = fmt::format(
      "{} committed records in {} transactions of up to {}, {} aborted transactions ({} "
      "records, aborted share {}), {} markers; at-least-once baseline: the main changelog (the "
      "same committed records, no transactions), restored in the same rounds",
      c.records, commits, o_.transactions.records_per_transaction, aborts, aborted_records,
      o_.transactions.aborted_share, commits + aborts);
  return c;
}

// A checkpointed store: restored from scratch once (not timed), closed cleanly (checkpoint at
// N), then the changelog grows by checkpoint_fraction * N records; each round restores those
// from a copy of that state directory.
absl::Status Bench::SetUpCheckpoint() {
  const int64_t extra = std::max<int64_t>(
      o_.spec.partitions, static_cast<int64_t>(o_.spec.records * o_.checkpoint_fraction));
  ChangelogSpec whole = o_.spec;
  whole.records = o_.spec.records + extra;
  checkpoint_.app = AppSpec{run_id_ + "-ckpt", run_id_ + "-ckpt-input", o_.spec.partitions};
  if (absl::Status s = CreateApp(checkpoint_.app); !s.ok()) return s;
  std::vector<std::vector<KeyValueWrite>> tails;
  for (int32_t p = 0; p < o_.spec.partitions; ++p) {
    std::vector<KeyValueWrite> records = GenerateChangelog(whole, p);
    checkpoint_.expected.push_back(DigestOfFold(records));
    const auto split = records.begin() + o_.spec.RecordsOf(p);
    tails.emplace_back(split, records.end());
    records.erase(split, records.end());
    if (absl::Status s = backend_->Produce({checkpoint_.app.Changelog(), p}, records); !s.ok()) {
      return s;
    }
  }
  checkpoint_base_dir_ = work_dir_ + "/checkpoint-base";
  absl::StatusOr<Measurement> base =
      RunRestore(*backend_, checkpoint_.app, checkpoint_base_dir_,
                 Runtime(RocksDbStoreOptions::BulkRestore::kAuto), o_.spec.partitions, {});
  if (!base.ok()) return base.status();
  for (int32_t p = 0; p < o_.spec.partitions; ++p) {
    if (absl::Status s = backend_->Produce({checkpoint_.app.Changelog(), p}, tails[p]); !s.ok()) {
      return s;
    }
    checkpoint_.records += static_cast<int64_t>(tails[p].size());
  }
  checkpoint_.bytes = BytesOf(tails);
  results_.checkpoint_records = checkpoint_.records;
  using Bulk = RocksDbStoreOptions::BulkRestore;
  for (const auto& [path, bulk, label] :
       {std::tuple{"default", Bulk::kAuto, "ours, from a checkpoint, default path"},
        std::tuple{"writebatch", Bulk::kOff, "ours, from a checkpoint, WriteBatch path"}}) {
    AddCase(fmt::format("ours.checkpoint.{}", path), label, checkpoint_.records,
            [this, bulk = bulk](const std::string& dir) -> absl::StatusOr<Measurement> {
              std::filesystem::copy(checkpoint_base_dir_, dir,
                                    std::filesystem::copy_options::recursive);
              absl::StatusOr<Measurement> m =
                  RunRestore(*backend_, checkpoint_.app, dir, Runtime(bulk),
                             checkpoint_.app.partitions, checkpoint_.expected);
              if (m.ok()) m->bytes = checkpoint_.bytes;
              return m;
            });
  }
  return absl::OkStatus();
}

// The input of a processing run: `n` records over kInputKeys keys, produced in chunks.
absl::Status Bench::ProduceInput(const TopicPartition& tp, int64_t n) {
  constexpr int64_t kChunk = 100'000;
  for (int64_t from = 0; from < n; from += kChunk) {
    std::vector<KeyValueWrite> chunk;
    for (int64_t i = from; i < std::min(n, from + kChunk); ++i) {
      chunk.push_back({fmt::format("input-key-{:06d}", i % kInputKeys), "1"});
    }
    if (absl::Status s = backend_->Produce(tp, chunk); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// A processing application of two partitions: partition 0's changelog holds `restoring` (none
// when null) and no input; partition 1 has an empty changelog and `input` input records. With
// `input` < 0 it reads the pair's shared input topic instead (every round's applications, ours
// and Kafka Streams', read the same input in groups of their own: produced once).
absl::StatusOr<AppSpec> Bench::MakeProcessingApp(const std::string& suffix,
                                                 const std::vector<KeyValueWrite>* restoring,
                                                 int64_t input) {
  const std::string name = fmt::format("{}-mix{}", run_id_, suffix);
  AppSpec app{name, input < 0 ? mix_input_topic_ : name + "-input", 2};
  absl::Status created = input < 0 ? backend_->CreateTopic(app.Changelog(), app.partitions)
                                   : CreateApp(app);
  if (!created.ok()) return created;
  if (restoring != nullptr) {
    if (absl::Status s = backend_->Produce({app.Changelog(), 0}, *restoring); !s.ok()) return s;
  }
  if (input < 0) return app;
  if (absl::Status s = ProduceInput({app.input_topic, 1}, input); !s.ok()) return s;
  return app;
}

// How the input was sized, for the report (no negative figure: what came first is said).
std::string ProcessSizing(const ProcessingRun& run, int64_t first, int64_t sized) {
  std::string how = fmt::format("sized by an untimed run of {} input records while {} restored",
                                first, run.restored);
  if (run.first_processed_s < 0 || run.DoneAt() < 0 || run.restore_end_s < 0) {
    return how + ": it timed no processing or no restoration, so the input stays as it was";
  }
  how += fmt::format(": it processed them in {:.2f} s from its first; ",
                     run.DoneAt() - run.first_processed_s);
  const double after = run.restore_end_s - run.first_processed_s;
  how += after <= 0 ? fmt::format("the restoration ended {:.2f} s before that first record",
                                  -after)
                    : fmt::format("the restoration ended {:.2f} s after that first record", after);
  return how + fmt::format("; {} input records per run", sized);
}

// Without --process-records: one untimed run of the pair's restoring application says how
// fast the task processes and when the restoration ends; the restoration (if it ended too
// soon) and the input are then sized so that they overlap (SizeProcessingPair).
absl::Status Bench::SizeProcessingPair(std::vector<KeyValueWrite>& restoring) {
  if (o_.process_records > 0) {
    results_.process_sizing = "--process-records";
    return absl::OkStatus();
  }
  Say("sizing the processing pair (one untimed run) ...");
  const int64_t first = results_.process_records;
  absl::StatusOr<AppSpec> app = MakeProcessingApp("cal", &restoring, first);
  if (!app.ok()) return app.status();
  absl::StatusOr<ProcessingRun> run =
      RunProcessing(*backend_, *app, work_dir_ + "/mix-cal",
                    Runtime(RocksDbStoreOptions::BulkRestore::kOff), 1, first);
  std::filesystem::remove_all(work_dir_ + "/mix-cal");
  if (!run.ok()) return run.status();
  const PairSizing given{static_cast<int64_t>(restoring.size()), first};
  // The restoration may grow to 4 N: on Kafka Streams' RocksDB our WriteBatch path restores
  // about 1M records/s, so 1M records ended as the processing app's first record came (about
  // 1.1 s of joining the group) and the pair measured nothing (the cap was max(N, 1M) then).
  PairSizing cap{std::max<int64_t>(given.restore, std::max<int64_t>(4 * o_.spec.records,
                                                                    1'000'000)),
                 std::max({first, 4 * o_.spec.records, 2 * std::max<int64_t>(given.restore,
                                                                             1'000'000)})};
  // The fake producer queues at most 2^20 records between flushes, and at-least-once commits
  // (flushes) every 30 s: a run processing more would fail there.
  if (o_.backend == RestoreBackend::kFake) cap.input = std::min<int64_t>(cap.input, 1'000'000);
  const PairSizing sized = bench::SizeProcessingPair(*run, given, cap);
  results_.process_records = sized.input;
  results_.process_sizing = ProcessSizing(*run, first, sized.input);
  if (sized.restore > given.restore) {
    results_.process_sizing += fmt::format("; the restoration ended too soon to overlap {} s of "
                                           "processing: its changelog grown to {} records",
                                           kMinPairOverlapS, sized.restore);
    ChangelogSpec grown = o_.spec;
    grown.partitions = 1;
    grown.records = sized.restore;
    restoring = GenerateChangelog(grown, 0);
  }
  return absl::OkStatus();
}

// Per round two applications (MakeProcessingApp): one whose partition 0 restores N records
// (more if SizeProcessingPair grew it), and an "idle" one with nothing to restore; both with
// the same input. With --peer, the same again for Kafka Streams.
absl::Status Bench::SetUpProcessing() {
  ChangelogSpec one = o_.spec;
  one.partitions = 1;
  std::vector<KeyValueWrite> restoring = GenerateChangelog(one, 0);
  if (absl::Status s = SizeProcessingPair(restoring); !s.ok()) return s;
  results_.process_restore_records = static_cast<int64_t>(restoring.size());
  Say(fmt::format("producing the processing runs' input ({} records, read by every run) ...",
                  results_.process_records));
  mix_input_topic_ = run_id_ + "-mix-input";
  if (absl::Status s = backend_->CreateTopic(mix_input_topic_, 2); !s.ok()) return s;
  if (absl::Status s = ProduceInput({mix_input_topic_, 1}, results_.process_records); !s.ok()) {
    return s;
  }
  for (int32_t r = 0; r < o_.rounds; ++r) {
    if (Stopping()) return Interrupted();
    absl::StatusOr<AppSpec> busy = MakeProcessingApp(fmt::format("{}a", r), &restoring, -1);
    if (!busy.ok()) return busy.status();
    absl::StatusOr<AppSpec> idle = MakeProcessingApp(fmt::format("{}b", r), nullptr, -1);
    if (!idle.ok()) return idle.status();
    processing_apps_.emplace_back(*busy, *idle);
    if (o_.peer.empty()) continue;
    busy = MakeProcessingApp(fmt::format("{}pa", r), &restoring, -1);
    if (!busy.ok()) return busy.status();
    idle = MakeProcessingApp(fmt::format("{}pb", r), nullptr, -1);
    if (!idle.ok()) return idle.status();
    peer_processing_apps_.emplace_back(*busy, *idle);
  }
  return absl::OkStatus();
}

// The machine's limits on the main changelog: raw consumption, each write path alone and
// overlapped with fetching, and (--peer) the WriteBatch write alone in Kafka Streams' JVM.
void Bench::AddLimitCases() {
  const std::string& topic = main_.app.Changelog();
  const int32_t partitions = o_.spec.partitions;
  LimitConfig limit{.batch_records = o_.restore_max_poll_records};
  if (o_.bulk_chunk_bytes_min >= 0) {
    limit.bulk_chunk_bytes_min = static_cast<size_t>(o_.bulk_chunk_bytes_min);
  }
  const bool kafka = o_.backend == RestoreBackend::kKafka;
  AddCase("limit.consume",
          kafka ? "raw consumption (librdkafka batch API)" : "raw consumption (fake consumer)",
          main_.records, [this, topic, partitions](const std::string&) {
            return MeasureConsume(*backend_, topic, partitions);
          });
  for (WritePath path : {WritePath::kWriteBatch, WritePath::kBulk}) {
    const std::string name = path == WritePath::kWriteBatch ? "writebatch" : "bulk";
    AddCase("limit.write." + name, fmt::format("{} alone, from memory", WritePathName(path)),
            main_.records, [this, path, limit](const std::string& dir) {
              LimitConfig c = limit;
              c.dir = dir;
              c.records_per_partition = RecordsPerPartition();
              return MeasureWrites(main_records_, path, c, main_.expected);
            });
    AddCase("limit.overlap." + name,
            fmt::format("fetch ‖ {} (two threads)", WritePathName(path)), main_.records,
            [this, path, limit, topic, partitions](const std::string& dir) {
              LimitConfig c = limit;
              c.dir = dir;
              c.records_per_partition = RecordsPerPartition();
              return MeasureOverlapped(*backend_, topic, partitions, path, c, main_.expected);
            });
  }
  if (!o_.peer.empty()) {
    // The same write alone through Kafka Streams' RocksDB (rocksdbjni) in its JVM: the library
    // apart from the loop (issue 27).
    AddCase("limit.write.writebatch.java", "WriteBatch alone, from memory, Kafka Streams' JVM",
            main_.records, [this, limit](const std::string& dir) {
              return RunJavaWriteLimit(main_records_, limit.batch_records,
                                       work_dir_ + "/java-limit-records", dir, main_.expected,
                                       Log("java-write-limit"), nullptr);
            });
  }
}

// The RocksDB our cases run on, chosen before any of them opens a store: set in the
// environment (RESTORESIM_ROCKSDB_LIBRARY), so the own-process children run on it too.
absl::Status Bench::ChooseRocksDb() {
  std::string choice = o_.rocksdb_library;
  const char* env = std::getenv(kRocksDbLibraryEnv);
  if (choice.empty()) {
    choice = env != nullptr && *env != '\0' ? env : o_.peer.empty() ? "linked" : "peer";
  }
  std::string how;
  if (choice == "linked") {
    ::unsetenv(kRocksDbLibraryEnv);
  } else {
    if (choice == "peer") {
      absl::StatusOr<std::string> path = StreamsPeerRocksDbLibrary(Log("rocksdb-library"));
      if (!path.ok()) return path.status();
      choice = *path;
      how = "Kafka Streams' own, from its rocksdbjni jar: ";
    }
    ::setenv(kRocksDbLibraryEnv, choice.c_str(), 1);
  }
  absl::StatusOr<const RocksDbLibrary*> lib = RocksDb();
  if (!lib.ok()) return lib.status();
  const bool linked = choice == "linked";
  if ((*lib)->loaded == linked || (!linked && (*lib)->source != choice)) {
    return absl::FailedPreconditionError(fmt::format(
        "RocksDB was chosen before the benchmark could choose it ({})", (*lib)->source));
  }
  results_.rocksdb = how + (*lib)->source;
  RS_CHECK(!results_.rocksdb.empty());
  return absl::OkStatus();
}

absl::Status Bench::SetUp() {
  results_.process_records = o_.process_records > 0
                                 ? o_.process_records
                                 : std::max<int64_t>(20'000, o_.spec.records / 2);
  if (!o_.peer.empty()) {
    Say("building the Kafka Streams peer (tools/kafka/peer build) ...");
    if (absl::Status s = BuildStreamsPeer(Log("kafka-streams-build")); !s.ok()) return s;
  }
  if (absl::Status s = ChooseRocksDb(); !s.ok()) return s;
  Say("our RocksDB: " + results_.rocksdb);
  Say(fmt::format("producing the changelogs ({}) ...", o_.spec.Describe()));
  absl::StatusOr<Changelog> main = MakeChangelog("main", o_.spec, &main_records_);
  if (!main.ok()) return main.status();
  main_ = std::move(*main);
  AddLimitCases();
  AddRestoreCases(main_, "scratch", ", from scratch");
  if (o_.guarantee == "exactly_once_v2") {
    if (Stopping()) return Interrupted();
    Say(fmt::format("producing the transactional changelog ({} records per transaction, "
                    "aborted share {}) ...",
                    o_.transactions.records_per_transaction, o_.transactions.aborted_share));
    absl::StatusOr<Changelog> eos = MakeTransactionalChangelog();
    if (!eos.ok()) return eos.status();
    AddRestoreCases(*eos, "eos", ", from scratch, exactly_once_v2");
  }
  std::vector<int64_t> sizes = o_.sizes;
  if (sizes.empty()) sizes = {o_.spec.records / 16, o_.spec.records / 4};
  for (int64_t size : sizes) {
    if (size < o_.spec.partitions || size == o_.spec.records) continue;
    ChangelogSpec spec = o_.spec;
    spec.records = size;
    if (Stopping()) return Interrupted();
    absl::StatusOr<Changelog> c = MakeChangelog(fmt::format("size{}", size), spec, nullptr);
    if (!c.ok()) return c.status();
    AddRestoreCases(*c, fmt::format("size{}", size), fmt::format(", {} records", size));
  }
  if (Stopping()) return Interrupted();
  Say("restoring the checkpoint's base state (not timed) ...");
  if (absl::Status s = SetUpCheckpoint(); !s.ok()) return s;
  if (Stopping()) return Interrupted();
  return SetUpProcessing();
}

// How long the idle run must process after its first record to cover the other run's window
// (its end, from the first processed record) with a margin; -1 (all its input) if unknown.
double IdleStretch(const ProcessingRun& restoring) {
  if (restoring.first_processed_s < 0 || restoring.restore_end_s < 0) return -1;
  return std::max(0.0, restoring.restore_end_s - restoring.first_processed_s) + 0.5;
}

absl::StatusOr<ProcessingSample> Bench::RunProcessingPair(int32_t round) {
  const auto& [busy, idle] = processing_apps_[round];
  // The restoring task takes the WriteBatch path: its restoration lasts long enough to overlap
  // the other task's processing (the bulk path of 1M records ends about when a task with
  // nothing to restore processes its first record), and it loads the machine the way a
  // standby's or a small restoration's writes do, through the memtable, flushes, compactions.
  const RuntimeOptions options = Runtime(RocksDbStoreOptions::BulkRestore::kOff);
  absl::StatusOr<ProcessingRun> a = RunProcessing(*backend_, busy, work_dir_ + "/mix-a", options,
                                                  1, results_.process_records,
                                                  {.at_restore_end = true});
  std::filesystem::remove_all(work_dir_ + "/mix-a");
  if (!a.ok()) return a.status();
  absl::StatusOr<ProcessingRun> b = RunProcessing(*backend_, idle, work_dir_ + "/mix-b", options,
                                                  0, results_.process_records,
                                                  {.after_first_s = IdleStretch(*a)});
  std::filesystem::remove_all(work_dir_ + "/mix-b");
  if (!b.ok()) return b.status();
  return PairSample(*a, *b);
}

// The same pair run by Kafka Streams, on applications of its own (same changelog and input).
absl::StatusOr<ProcessingSample> Bench::RunPeerProcessingPair(int32_t round) {
  const auto& [busy, idle] = peer_processing_apps_[round];
  std::vector<ProcessingRun> runs;
  for (const auto& [app, restoring] : {std::pair{busy, 1}, std::pair{idle, 0}}) {
    const std::string dir = work_dir_ + "/peer-mix";
    const ProcessingStop stop = restoring > 0
                                    ? ProcessingStop{.at_restore_end = true}
                                    : ProcessingStop{.after_first_s = IdleStretch(runs[0])};
    absl::StatusOr<ProcessingRun> run =
        RunStreamsPeerProcessing(backend_->bootstrap_servers(), app, restoring,
                                 results_.process_records, stop, dir, Log("kafka-streams"));
    std::filesystem::remove_all(dir);
    if (!run.ok()) return run.status();
    runs.push_back(std::move(*run));
  }
  return PairSample(runs[0], runs[1]);
}

// Runs slot `i` of a round: a case, our processing pair, or Kafka Streams'.
absl::Status Bench::RunSlot(size_t i, int32_t round, const std::string& what) {
  if (i == cases_.size() || i == cases_.size() + 1) {
    const bool ours = i == cases_.size();
    absl::StatusOr<ProcessingSample> s = ours ? RunProcessingPair(round)
                                              : RunPeerProcessingPair(round);
    if (!s.ok()) return absl::Status(s.status().code(), what + ": " + s.status().ToString());
    (ours ? results_.processing : results_.peer_processing).push_back(*s);
    return absl::OkStatus();
  }
  const std::string dir = fmt::format("{}/case-{}", work_dir_, i);
  std::filesystem::remove_all(dir);
  absl::StatusOr<Measurement> m = cases_[i].run(dir);
  std::filesystem::remove_all(dir);
  if (!m.ok()) return absl::Status(m.status().code(), what + ": " + m.status().ToString());
  CaseSamples& samples = results_.cases[cases_[i].samples];
  if (m->contents_checked && !m->contents_ok) {
    results_.problems.push_back(fmt::format("round {}, {}: wrong store contents{}", round + 1,
                                            samples.label, m->note));
  }
  samples.rounds.push_back(std::move(*m));
  return absl::OkStatus();
}

absl::Status Bench::RunRounds() {
  // + our processing pair, + Kafka Streams' with --peer
  const size_t per_round = cases_.size() + (o_.peer.empty() ? 1 : 2);
  const size_t total = per_round * static_cast<size_t>(o_.rounds);
  size_t done = 0;
  // Ours: this process, its children (our restorations in their own process, Kafka Streams'
  // JVM) and the brokers serving us, found by their ports.
  const OwnCpuMeter cpu(PortsOf(backend_->bootstrap_servers()));
  for (int32_t round = 0; round < o_.rounds; ++round) {
    // Rotated by one more each round: every case runs early and late.
    std::vector<size_t> order(per_round);
    for (size_t i = 0; i < per_round; ++i) order[i] = (i + static_cast<size_t>(round)) % per_round;
    results_.loads.push_back(RoundLoad{.before = LoadAverage1()});
    const OwnCpuMeter::Sample cpu_before = cpu.Take();
    for (size_t i : order) {
      if (Stopping()) return Interrupted();  // between cases: each leaves no directory behind
      const std::string what =
          i == cases_.size()       ? "processing while another task restores"
          : i == cases_.size() + 1 ? "Kafka Streams processing while another task restores"
                                   : results_.cases[cases_[i].samples].label;
      if (bar_ != nullptr) bar_->Show(done, total, fmt::format("round {}: {}", round + 1, what));
      if (absl::Status s = RunSlot(i, round, what); !s.ok()) return s;
      ++done;
    }
    const CpuShare share = OwnCpuMeter::Between(cpu_before, cpu.Take());
    results_.loads.back().after = LoadAverage1();
    results_.loads.back().own_cores = share.own_cores;
    results_.loads.back().others_cores = share.others_cores;
  }
  if (bar_ != nullptr) bar_->Show(total, total, "done");
  return absl::OkStatus();
}

int Bench::Run() {
  const double start = MonoSeconds();
  // A stop (SIGINT/SIGTERM) also ends the command running then (the Kafka Streams peer's JVM),
  // instead of waiting for it or leaving it behind.
  SetCommandStop(o_.stop);
  struct ClearStop {
    ~ClearStop() { SetCommandStop(nullptr); }
  } clear_stop;
  run_id_ = fmt::format("rsb-{}-{}", getpid(), static_cast<int64_t>(std::time(nullptr)));
  // A directory of the run's own under --work-dir, removed after a good run (never the
  // directory given, which may hold other things).
  work_dir_ = fmt::format("{}/restoresim-bench-{}", o_.work_dir.empty() ? "/tmp" : o_.work_dir,
                          getpid());
  std::filesystem::create_directories(work_dir_);
  if (o_.progress) bar_ = std::make_unique<ProgressBar>();
  results_.rounds = o_.rounds;
  results_.records = o_.spec.records;
  results_.spec = o_.spec.Describe();
  results_.machine = MachineDescription();
  results_.cores = static_cast<int32_t>(sysconf(_SC_NPROCESSORS_ONLN));
  absl::Status s = Connect();
  if (s.ok()) {
    results_.backend = backend_->Describe();
    Say(fmt::format("restoresim bench restore: backend {}; {}; {} rounds; {}", results_.backend,
                    results_.spec, o_.rounds, results_.machine));
    s = SetUp();
  }
  if (s.ok()) s = RunRounds();
  if (bar_ != nullptr) bar_->Clear();
  const bool interrupted = absl::IsCancelled(s) && Stopping();
  if (!s.ok() && !interrupted) {
    std::fprintf(stderr, "restoresim bench restore: %s (work directory %s kept)\n",
                 s.ToString().c_str(), work_dir_.c_str());
    return 3;
  }
  if (interrupted) {
    results_.rounds = WholeRounds();
    std::fprintf(stderr,
                 "restoresim bench restore: interrupted: reporting the %d whole rounds done\n",
                 results_.rounds);
  }
  results_.machine += "; at the end: " + LoadAverages();
  results_.seconds = MonoSeconds() - start;
  if (!interrupted || results_.rounds > 0) Report(results_, o_);
  // Removed after a good run and after an interrupted one (its files are the benchmark's own
  // scratch, of no use to anyone); kept only after an error, to look at.
  std::filesystem::remove_all(work_dir_);
  if (interrupted) return kExitInterrupted;
  return results_.problems.empty() ? 0 : 1;
}

// Cuts the samples to the rounds every case finished (a round cut short would weigh its early
// cases twice), and returns how many those are.
int32_t Bench::WholeRounds() {
  size_t whole = results_.processing.size();
  if (!o_.peer.empty()) whole = std::min(whole, results_.peer_processing.size());
  for (const CaseSamples& c : results_.cases) whole = std::min(whole, c.rounds.size());
  for (CaseSamples& c : results_.cases) c.rounds.resize(whole);
  results_.processing.resize(whole);
  results_.peer_processing.resize(std::min(results_.peer_processing.size(), whole));
  results_.loads.resize(std::min(results_.loads.size(), whole));
  return static_cast<int32_t>(whole);
}

}  // namespace

absl::Status CheckRocksDbLibrary(const std::string& path) {
  absl::StatusOr<RocksDbLibrary> lib = LoadRocksDbLibrary(path);
  return lib.ok() ? absl::OkStatus() : lib.status();
}

int RunRestoreBench(const RestoreBenchOptions& options) { return Bench(options).Run(); }

int RunRestoreChild(const std::string& bootstrap, const std::string& spec,
                    const std::string& state_dir) {
  const std::vector<std::string> f = absl::StrSplit(spec, ',');
  int32_t partitions = 0;
  int32_t max_poll = 0;
  int64_t bulk_min = 0;
  int64_t chunk_min = 0;
  if (f.size() != 8 || !absl::SimpleAtoi(f[2], &partitions) || partitions < 1 ||
      (f[3] != "default" && f[3] != "writebatch") || !absl::SimpleAtoi(f[5], &max_poll) ||
      max_poll < 1 || !absl::SimpleAtoi(f[6], &bulk_min) || !absl::SimpleAtoi(f[7], &chunk_min)) {
    std::fprintf(stderr, "restoresim bench restore: --restore-child wants APP,INPUT,PARTITIONS,"
                 "default|writebatch,GUARANTEE,MAX_POLL,BULK_MIN,CHUNK_MIN, not '%s'\n",
                 spec.c_str());
    return 2;
  }
  absl::StatusOr<std::unique_ptr<Backend>> backend = NewKafkaBackend(bootstrap);
  RuntimeOptions options;
  options.store.bulk_restore = f[3] == "default" ? RocksDbStoreOptions::BulkRestore::kAuto
                                                 : RocksDbStoreOptions::BulkRestore::kOff;
  options.exactly_once = f[4] == "exactly_once_v2";
  options.restore_max_poll_records = max_poll;
  options.reset_peak_rss = false;
  if (bulk_min >= 0) options.store.bulk_min_records = bulk_min;
  if (chunk_min >= 0) options.store.bulk_chunk_bytes_min = static_cast<size_t>(chunk_min);
  absl::StatusOr<Measurement> m =
      backend.ok() ? RunRestore(**backend, AppSpec{f[0], f[1], partitions},
                                state_dir + "/own-process", options, partitions, {})
                   : absl::StatusOr<Measurement>(backend.status());
  std::filesystem::remove_all(state_dir + "/own-process");
  if (!m.ok()) {
    std::fprintf(stderr, "restoresim bench restore: %s\n", m.status().ToString().c_str());
    return 3;
  }
  const nlohmann::json j = {{"records", m->records}, {"seconds", m->seconds},
                            {"cpu_seconds", m->cpu_seconds},
                            {"peak_rss_bytes", PeakResidentBytes()}, {"note", m->note}};
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

}  // namespace restoresim::bench
