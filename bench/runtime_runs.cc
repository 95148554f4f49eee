#include "bench/runtime_runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>

#include "bench/restore_limits.h"
#include "core/events/event_recorder.h"
#include "core/port/posix_file_system.h"
#include "core/port/system_clock.h"
#include "core/runtime/count_topology.h"
#include "core/runtime/runtime.h"
#include "properties/standalone_judge.h"

namespace restoresim::bench {
namespace {

constexpr TimeNs kCloseTimeoutNs = 120 * kSecond;
constexpr auto kWaitStep = std::chrono::milliseconds(2);

// What the stores reported when they closed: which write path restorations took.
struct StoreStatsSink {
  std::mutex mu;
  RocksDbStoreStats total;
  void Add(const RocksDbStoreStats& s) {
    std::lock_guard lock(mu);
    total.restores_bulk += s.restores_bulk;
    total.restores_batch += s.restores_batch;
    total.bulk.files += s.bulk.files;
    total.bulk.records_in += s.bulk.records_in;
  }
};

// A RocksDbStore that reports its statistics to the sink when it closes (on the runtime's
// threads; the benchmark reads the sink after Runtime::Close).
class ReportingStore final : public KeyValueStore {
 public:
  ReportingStore(std::unique_ptr<RocksDbStore> store, StoreStatsSink* sink)
      : store_(std::move(store)), sink_(sink) {}
  ~ReportingStore() override { (void)Close(); }

  const std::string& name() const override { return store_->name(); }
  absl::Status Put(std::string_view k, std::string_view v) override { return store_->Put(k, v); }
  absl::Status Delete(std::string_view k) override { return store_->Delete(k); }
  absl::StatusOr<std::optional<std::string>> Get(std::string_view k) override {
    return store_->Get(k);
  }
  absl::Status ApplyBatch(const std::vector<KeyValueWrite>& w) override {
    return store_->ApplyBatch(w);
  }
  void BeginRestore(int64_t records) override { store_->BeginRestore(records); }
  absl::Status RestoreBatch(std::vector<KeyValueWrite> w) override {
    return store_->RestoreBatch(std::move(w));
  }
  absl::Status EndRestore() override { return store_->EndRestore(); }
  absl::Status Flush() override { return store_->Flush(); }
  absl::Status Commit(int64_t changelog_offset) override {
    return store_->Commit(changelog_offset);
  }
  std::optional<int64_t> CommittedOffset() const override { return store_->CommittedOffset(); }
  absl::Status Close() override {
    if (!store_->IsOpen()) return absl::OkStatus();
    absl::Status s = store_->Close();
    sink_->Add(store_->stats());
    return s;
  }
  absl::StatusOr<std::map<std::string, std::string>> ReadAll() override {
    return store_->ReadAll();
  }
  uint64_t NumEntries() const override { return store_->NumEntries(); }
  bool IsOpen() const override { return store_->IsOpen(); }
  bool CreatedOnOpen() const override { return store_->CreatedOnOpen(); }

 private:
  std::unique_ptr<RocksDbStore> store_;
  StoreStatsSink* sink_;
};

StoreOpener OpenerFor(const RocksDbStoreOptions& options, StoreStatsSink* sink) {
  return [options, sink](const std::string& dir,
                         const std::string& name) -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
    absl::StatusOr<std::unique_ptr<RocksDbStore>> store = RocksDbStore::Open(dir, name, options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<KeyValueStore>(new ReportingStore(std::move(*store), sink));
  };
}

// Times restoration from the first start to the end of the last restoring changelog.
class RestoreTimer final : public StateRestoreListener {
 public:
  explicit RestoreTimer(int32_t restoring) : restoring_(restoring) {}

  void OnRestoreStart(const TopicPartition&, std::string_view, int64_t, int64_t) override {
    std::lock_guard lock(mu_);
    if (started_) return;
    started_ = true;
    span_ = Span::Begin();
    progress_.emplace_back(0.0, 0);
  }
  void OnBatchRestored(const TopicPartition&, std::string_view, int64_t, int64_t n) override {
    std::lock_guard lock(mu_);
    restored_ += n;
    const double t = MonoSeconds() - span_.start_s;
    if (t - progress_.back().first >= 0.005) progress_.emplace_back(t, restored_);
  }
  void OnRestoreEnd(const TopicPartition&, std::string_view, int64_t) override {
    std::lock_guard lock(mu_);
    if (++ended_ != restoring_) return;
    span_.End();
    progress_.emplace_back(span_.seconds, restored_);
  }
  void OnRestoreSuspended(const TopicPartition&, std::string_view, int64_t) override {
    std::lock_guard lock(mu_);
    ++suspended_;
  }

  bool done() {
    std::lock_guard lock(mu_);
    return ended_ >= restoring_;
  }
  // Under the lock, a copy.
  Measurement Result() {
    std::lock_guard lock(mu_);
    Measurement m;
    m.records = restored_;
    m.seconds = span_.seconds;
    m.cpu_seconds = span_.cpu_seconds;
    m.progress = progress_;
    return m;
  }
  double start_s() {
    std::lock_guard lock(mu_);
    return started_ ? span_.start_s : -1;
  }
  double end_s() {
    std::lock_guard lock(mu_);
    return ended_ >= restoring_ && started_ ? span_.start_s + span_.seconds : -1;
  }
  int64_t restored() {
    std::lock_guard lock(mu_);
    return restored_;
  }

 private:
  const int32_t restoring_;
  std::mutex mu_;
  bool started_ = false;
  Span span_;
  int64_t restored_ = 0;
  int32_t ended_ = 0;
  int32_t suspended_ = 0;
  std::vector<std::pair<double, int64_t>> progress_;
};

RuntimeConfig ConfigFor(const AppSpec& app, const std::string& state_dir,
                        const RuntimeOptions& options) {
  RuntimeConfig config;
  config.application_id = app.app_id;
  config.input_topic = app.input_topic;
  config.state_dir = state_dir;
  config.num_stream_threads = 1;
  config.restore_max_poll_records = options.restore_max_poll_records;
  if (options.exactly_once) config.processing_guarantee = "exactly_once_v2";
  return config;
}

std::string PathNote(const RocksDbStoreStats& s) {
  if (s.restores_bulk > 0 && s.restores_batch == 0) {
    return fmt::format("bulk path ({} SST file(s))", s.bulk.files);
  }
  if (s.restores_bulk == 0) return "WriteBatch path";
  return fmt::format("bulk path for {} store(s) ({} SST files), WriteBatch for {}",
                     s.restores_bulk, s.bulk.files, s.restores_batch);
}

void CheckStores(const AppSpec& app, const std::string& state_dir,
                 const std::vector<StoreDigest>& expected, Measurement& m) {
  if (expected.empty()) return;
  m.contents_checked = true;
  for (size_t p = 0; p < expected.size(); ++p) {
    const std::string dir = fmt::format("{}/{}/0_{}/{}", state_dir, app.app_id, p,
                                        kCountsStoreName);
    absl::StatusOr<StoreDigest> got = DigestOfRocksDb(dir);
    if (!got.ok() || !(*got == expected[p])) {
      m.contents_ok = false;
      m.note += fmt::format("; partition {} holds {} (expected {})", p,
                            got.ok() ? got->ToString() : got.status().ToString(),
                            expected[p].ToString());
    }
  }
}

}  // namespace

std::string AppSpec::Changelog() const { return ChangelogTopic(app_id, kCountsStoreName); }

absl::StatusOr<Measurement> RunRestore(Backend& backend, const AppSpec& app,
                                       const std::string& state_dir,
                                       const RuntimeOptions& options, int32_t restoring,
                                       const std::vector<StoreDigest>& expected) {
  StoreStatsSink stats;
  RestoreTimer timer(restoring);
  properties::StandaloneJudge judge;
  events::EventRecorder recorder(
      judge, events::RecorderOptions{.clock = SystemClock::Default(), .read_stores = false});
  std::optional<ScopedObserver> observing;  // the runtime's threads inherit it
  if (options.oracle) observing.emplace(&recorder);
  Runtime runtime(ConfigFor(app, state_dir, options), backend.transport(),
                  *SystemClock::Default(), *PosixFileSystem::Default(),
                  OpenerFor(options.store, &stats), &timer);
  if (absl::Status s = runtime.Start(); !s.ok()) return s;
  const double deadline = MonoSeconds() + options.timeout_s;
  while (!timer.done() && IsRunningOrRebalancing(runtime.state()) &&
         MonoSeconds() < deadline) {
    std::this_thread::sleep_for(kWaitStep);
  }
  const bool done = timer.done();
  const RuntimeState state = runtime.state();
  absl::Status closed = runtime.Close(kCloseTimeoutNs);
  if (!done) {
    return absl::DeadlineExceededError(fmt::format(
        "restoration of {} did not end (runtime {}, {} records restored; closing it: {})",
        app.Changelog(), RuntimeStateName(state), timer.restored(), closed.ToString()));
  }
  if (!closed.ok()) return closed;
  if (options.oracle) {
    recorder.OnRunFinished();
    if (judge.failure().has_value()) {
      return absl::InternalError("the oracle: " + judge.failure()->Render());
    }
  }
  Measurement m = timer.Result();
  m.bytes = 0;  // filled in by the caller, who knows the records
  m.note = PathNote(stats.total);
  CheckStores(app, state_dir, expected, m);
  return m;
}

double ProcessingRun::RateBetween(double from_s, double to_s) const {
  if (processed.empty() || to_s <= from_s || to_s > processed.back().first) return -1;
  return (ProcessedAt(to_s) - ProcessedAt(from_s)) / (to_s - from_s);
}

double ProcessingRun::DoneAt() const {
  if (processed.empty()) return -1;
  const int64_t total = processed.back().second;
  for (const auto& [t, n] : processed) {
    if (n >= total) return t;
  }
  return -1;
}

int64_t ProcessingRun::ProcessedAt(double t_s) const {
  auto it = std::lower_bound(processed.begin(), processed.end(), t_s,
                             [](const auto& sample, double t) { return sample.first < t; });
  if (it == processed.begin()) return processed.empty() ? 0 : processed.front().second;
  if (it == processed.end()) return processed.back().second;
  const auto& [t1, n1] = *it;
  const auto& [t0, n0] = *(it - 1);
  return n0 + static_cast<int64_t>((n1 - n0) * (t_s - t0) / std::max(t1 - t0, 1e-9));
}

absl::StatusOr<ProcessingRun> RunProcessing(Backend& backend, const AppSpec& app,
                                            const std::string& state_dir,
                                            const RuntimeOptions& options, int32_t restoring,
                                            int64_t input_records) {
  StoreStatsSink stats;
  RestoreTimer timer(restoring);
  Runtime runtime(ConfigFor(app, state_dir, options), backend.transport(),
                  *SystemClock::Default(), *PosixFileSystem::Default(),
                  OpenerFor(options.store, &stats), &timer);
  ProcessingRun run;
  const double start = MonoSeconds();
  const TimeNs start_clock_ns = SystemClock::Default()->NowNs();
  if (absl::Status s = runtime.Start(); !s.ok()) return s;
  const double deadline = start + options.timeout_s;
  RuntimeMetrics metrics;
  do {
    std::this_thread::sleep_for(kWaitStep);
    metrics = runtime.Metrics();
    run.processed.emplace_back(MonoSeconds() - start, metrics.records_processed);
  } while ((metrics.records_processed < input_records || !timer.done()) &&
           IsRunningOrRebalancing(runtime.state()) && MonoSeconds() < deadline);
  const RuntimeState state = runtime.state();
  absl::Status closed = runtime.Close(kCloseTimeoutNs);
  if (metrics.records_processed < input_records || !timer.done()) {
    return absl::DeadlineExceededError(fmt::format(
        "processing run of {} did not finish (runtime {}, {} of {} processed, {} restored; "
        "closing it: {})",
        app.app_id, RuntimeStateName(state), metrics.records_processed, input_records,
        timer.restored(), closed.ToString()));
  }
  if (!closed.ok()) return closed;
  if (metrics.first_processed_ns >= 0) {
    run.first_processed_s = static_cast<double>(metrics.first_processed_ns - start_clock_ns) / 1e9;
  }
  if (restoring > 0) {
    run.restore_start_s = timer.start_s() - start;
    run.restore_end_s = timer.end_s() - start;
  }
  run.restored = timer.restored();
  return run;
}

}  // namespace restoresim::bench
