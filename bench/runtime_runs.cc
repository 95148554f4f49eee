#include "bench/runtime_runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <set>
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
  return [options, sink](const std::string& dir, const std::string& name)
             -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
    absl::StatusOr<std::unique_ptr<RocksDbStore>> store = RocksDbStore::Open(dir, name, options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<KeyValueStore>(new ReportingStore(std::move(*store), sink));
  };
}

// Times restoration from the first start to the end of the last restoring changelog
// partition: one with records to restore (its start offset below its end). A partition with
// nothing to restore starts and ends at once, whenever its task is assigned: it counts for
// neither the start nor the end (it used to close the timer of the processing pair, whose
// processing task has an empty changelog, before the other task's restoration began).
class RestoreTimer final : public StateRestoreListener {
 public:
  explicit RestoreTimer(int32_t restoring) : restoring_(restoring) {}

  void OnRestoreStart(const TopicPartition& tp, std::string_view, int64_t start,
                      int64_t end) override {
    std::lock_guard lock(mu_);
    if (end <= start) return;
    timed_.insert(tp);
    if (started_) return;
    started_ = true;
    span_ = Span::Begin();
    progress_.emplace_back(0.0, 0);
  }
  void OnBatchRestored(const TopicPartition&, std::string_view, int64_t, int64_t n) override {
    std::lock_guard lock(mu_);
    restored_ += n;
    if (!started_ || ended_ >= restoring_) return;
    const double t = MonoSeconds() - span_.start_s;
    if (t - progress_.back().first >= 0.005) progress_.emplace_back(t, restored_);
  }
  void OnRestoreEnd(const TopicPartition& tp, std::string_view, int64_t) override {
    std::lock_guard lock(mu_);
    if (timed_.erase(tp) == 0) return;
    if (++ended_ != restoring_) return;
    span_.End();
    restored_at_end_ = restored_;
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
    m.records = ended_ >= restoring_ && started_ ? restored_at_end_ : restored_;
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
  int64_t restored_at_end() {
    std::lock_guard lock(mu_);
    return restored_at_end_;
  }

 private:
  const int32_t restoring_;
  std::mutex mu_;
  bool started_ = false;
  Span span_;
  std::set<TopicPartition> timed_;  // started with records to restore, not ended yet
  int64_t restored_ = 0;
  int64_t restored_at_end_ = 0;
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
  if (options.restore_share_while_processing > 0) {
    config.restore_share_while_processing_percent = options.restore_share_while_processing;
  }
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
  const bool peak_reset = options.reset_peak_rss && ResetPeakResident();
  const int64_t rss_at_start = ResidentBytes();
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
  const int64_t peak_rss = peak_reset ? PeakResidentBytes() : -1;
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
  m.peak_rss_bytes = peak_rss;
  m.rss_at_start_bytes = rss_at_start;
  m.bytes = 0;  // filled in by the caller, who knows the records
  m.note = PathNote(stats.total);
  CheckStores(app, state_dir, expected, m);
  return m;
}

std::optional<double> ProcessingRun::RateBetween(double from_s, double to_s) const {
  if (processed.empty() || to_s <= from_s || to_s > processed.back().first) return std::nullopt;
  return (ProcessedAt(to_s) - ProcessedAt(from_s)) / (to_s - from_s);
}

double ProcessingRun::DoneAt() const {
  if (processed.empty() || processed.back().second < input_records) return -1;
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
                                            int64_t input_records, ProcessingStop stop) {
  StoreStatsSink stats;
  RestoreTimer timer(restoring);
  Runtime runtime(ConfigFor(app, state_dir, options), backend.transport(),
                  *SystemClock::Default(), *PosixFileSystem::Default(),
                  OpenerFor(options.store, &stats), &timer);
  // A stream thread's failure, for the message below (Kafka Streams' default response).
  std::mutex error_mu;
  std::string thread_error;
  (void)runtime.SetUncaughtExceptionHandler([&](const absl::Status& error) {
    std::lock_guard lock(error_mu);
    thread_error = error.ToString();
    return StreamThreadExceptionResponse::kShutdownClient;
  });
  ProcessingRun run;
  const double start = MonoSeconds();
  const TimeNs start_clock_ns = SystemClock::Default()->NowNs();
  if (absl::Status s = runtime.Start(); !s.ok()) return s;
  const double deadline = start + options.timeout_s;
  RuntimeMetrics metrics;
  // Done: the restoration over, and the input too unless `stop` says it may stop sooner.
  auto finished = [&] {
    if (!timer.done()) return false;
    if (metrics.records_processed >= input_records || stop.at_restore_end) return true;
    return stop.after_first_s >= 0 && metrics.first_processed_ns >= 0 &&
           SystemClock::Default()->NowNs() - metrics.first_processed_ns >=
               static_cast<TimeNs>(stop.after_first_s * 1e9);
  };
  do {
    std::this_thread::sleep_for(kWaitStep);
    metrics = runtime.Metrics();
    run.processed.emplace_back(MonoSeconds() - start, metrics.records_processed);
  } while (!finished() && IsRunningOrRebalancing(runtime.state()) && MonoSeconds() < deadline);
  const RuntimeState state = runtime.state();
  absl::Status closed = runtime.Close(kCloseTimeoutNs);
  if (!finished()) {
    return absl::DeadlineExceededError(fmt::format(
        "processing run of {} did not finish (runtime {}{}, {} of {} processed, {} restored; "
        "closing it: {})",
        app.app_id, RuntimeStateName(state),
        thread_error.empty() ? "" : ": a stream thread failed: " + thread_error,
        metrics.records_processed, input_records, timer.restored(), closed.ToString()));
  }
  if (!closed.ok()) return closed;
  if (metrics.first_processed_ns >= 0) {
    run.first_processed_s = static_cast<double>(metrics.first_processed_ns - start_clock_ns) / 1e9;
  }
  if (restoring > 0 && timer.start_s() >= 0 && timer.end_s() >= 0) {
    run.restore_start_s = timer.start_s() - start;
    run.restore_end_s = timer.end_s() - start;
  }
  run.restored = timer.restored_at_end();
  run.input_records = input_records;
  return run;
}

namespace {

std::optional<double> Known(double t_s) {
  return t_s >= 0 ? std::optional<double>(t_s) : std::nullopt;
}

// Why the overlap of `a` (the run with a restoration) is too short to measure, or "".
std::string OverlapProblem(const ProcessingRun& a, double from, double to) {
  if (a.first_processed_s < 0) return "no input record was processed";
  if (a.restore_end_s < 0) return "the restoration was not timed (it did not start or end)";
  if (a.restore_end_s <= a.first_processed_s) {
    return fmt::format("the restoration ended ({:.3f} s) before the first record was processed "
                       "({:.3f} s)", a.restore_end_s, a.first_processed_s);
  }
  if (a.DoneAt() >= 0 && a.DoneAt() <= a.restore_start_s) {
    return fmt::format("the input ran out ({:.3f} s) before the restoration started ({:.3f} s)",
                       a.DoneAt(), a.restore_start_s);
  }
  if (to - from < kMinProcessingWindowS) {
    return fmt::format("the overlap of restoring and processing lasted {:.3f} s, under {} s",
                       std::max(0.0, to - from), kMinProcessingWindowS);
  }
  return "";
}

}  // namespace

PairSizing SizeProcessingPair(const ProcessingRun& run, PairSizing given, PairSizing cap) {
  const double busy_s = run.DoneAt() - run.first_processed_s;
  const double restore_s = run.restore_end_s - run.restore_start_s;
  if (run.first_processed_s < 0 || run.restore_start_s < 0 || run.restore_end_s < 0 ||
      run.DoneAt() < 0 || busy_s <= 0 || restore_s <= 0) {
    return given;
  }
  PairSizing sized = given;
  const double restore_rate = static_cast<double>(given.restore) / restore_s;
  double end_s = run.restore_end_s;
  const double wanted_end_s = run.first_processed_s + kMinPairOverlapS;
  if (end_s < wanted_end_s) {
    sized.restore = std::clamp(
        static_cast<int64_t>(1.5 * restore_rate * (wanted_end_s - run.restore_start_s)),
        given.restore, std::max(given.restore, cap.restore));
    end_s = run.restore_start_s + static_cast<double>(sized.restore) / restore_rate;
  }
  const double rate = static_cast<double>(given.input) / busy_s;
  sized.input = std::clamp(static_cast<int64_t>(3 * rate * (end_s - run.first_processed_s)),
                           given.input, std::max(given.input, cap.input));
  return sized;
}

ProcessingSample PairSample(const ProcessingRun& a, const ProcessingRun& b) {
  ProcessingSample s;
  s.first_processed_restoring_s = Known(a.first_processed_s);
  s.first_processed_idle_s = Known(b.first_processed_s);
  s.restore_start_s = Known(a.restore_start_s);
  s.restore_end_s = Known(a.restore_end_s);
  s.restored = a.restored;
  s.window_from_s = std::max(a.restore_start_s, a.first_processed_s);
  s.window_to_s = a.restore_end_s;
  if (a.DoneAt() >= 0 && a.DoneAt() < s.window_to_s) {
    s.window_to_s = a.DoneAt();
    s.input_ran_out = true;
  }
  s.why_not = OverlapProblem(a, s.window_from_s, s.window_to_s);
  if (!s.why_not.empty()) {
    s.window_to_s = std::max(s.window_to_s, s.window_from_s);
    return s;
  }
  if (b.first_processed_s < 0) {
    s.why_not = "the idle run processed no input record";
    return s;
  }
  // The same stretch after the idle run's first processed record, cut where its input ran out.
  const double b_from = b.first_processed_s + (s.window_from_s - a.first_processed_s);
  double b_to = b_from + s.window_s();
  if (b.DoneAt() >= 0) b_to = std::min(b_to, b.DoneAt());
  s.idle_window_s = std::max(0.0, b_to - b_from);
  if (s.idle_window_s < kMinProcessingWindowS) {
    s.why_not = fmt::format("the idle run's input ran out {:.3f} s into its stretch (under {} "
                            "s)", s.idle_window_s, kMinProcessingWindowS);
    return s;
  }
  s.rate_restoring = a.RateBetween(s.window_from_s, s.window_to_s);
  s.rate_idle = b.RateBetween(b_from, b_to);
  if (!s.rate_restoring || !s.rate_idle) s.why_not = "a window ended after the last sample";
  return s;
}

}  // namespace restoresim::bench
