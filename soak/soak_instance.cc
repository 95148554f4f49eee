#include "soak/soak_instance.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/events/event_codec.h"
#include "core/events/event_recorder.h"
#include "core/port/posix_file_system.h"
#include "core/port/system_clock.h"
#include "core/runtime/runtime.h"
#include "core/state/rocksdb_store.h"
#include "core/transport/rdkafka/rdkafka_transport.h"
#include "core/util/run_context.h"
#include "properties/standalone_judge.h"
#include "soak/disk_full_file_system.h"

namespace restoresim::soak {
namespace {

constexpr TimeNs kStatusEveryNs = 500 * kMillisecond;
constexpr TimeNs kCloseNs = 60 * kSecond;

std::atomic<bool> g_stop{false};
std::atomic<int> g_checkpoints{0};
std::atomic<int> g_pause_toggles{0};
std::atomic<int> g_disk_toggles{0};

void OnSignal(int signal) {
  if (signal == SIGUSR1) {
    g_checkpoints.fetch_add(1);
  } else if (signal == SIGUSR2) {
    g_pause_toggles.fetch_add(1);
  } else if (signal == SIGRTMIN) {
    g_disk_toggles.fetch_add(1);
  } else {
    g_stop.store(true);
  }
}

void InstallSignals() {
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGRTMIN}) sigaction(s, &action, nullptr);
}

// Writes `text` to `path` by rename (the reader sees the old file or the new one).
void WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text << "\n";
  }
  std::rename(tmp.c_str(), path.c_str());
}

// The oracle online, the event file beside it. Called under the recorder's lock.
class JudgeAndWrite final : public events::EventSink {
 public:
  JudgeAndWrite(const std::string& events_path, const std::string& status_path)
      : status_path_(status_path) {
    if (!events_path.empty()) {
      file_ = std::make_unique<std::ofstream>(events_path, std::ios::trunc);
      writer_ = std::make_unique<events::EventStreamWriter>(*file_);
    }
  }

  void OnEvent(const events::Event& event) override {
    if (writer_ != nullptr) writer_->OnEvent(event);
    events_.fetch_add(1, std::memory_order_relaxed);
    if (const auto* failed = std::get_if<events::TaskFailed>(&event.body)) {
      last_task_error_ = failed->error.ToString();
    }
    if (judge_.failure().has_value()) return;
    judge_.OnEvent(event);
    if (judge_.failure().has_value()) Violated();
  }

  void Flush() {
    if (file_ != nullptr) file_->flush();
  }
  uint64_t events() const { return events_.load(std::memory_order_relaxed); }
  properties::StandaloneJudge& judge() { return judge_; }
  const std::string& last_task_error() const { return last_task_error_; }

 private:
  // The first violation ends the process at once, the events up to it kept: what follows a
  // violation is not judged, and a runtime that broke an invariant is not closed as if sound.
  void Violated() {
    Flush();
    nlohmann::json status = {{"format", "restoresim-soak-status"}, {"version", 1},
                             {"state", "VIOLATION"}, {"events", events()},
                             {"failure", judge_.failure()->Render()}};
    WriteAtomically(status_path_, status.dump());
    std::fflush(nullptr);
    _exit(kInstanceExitViolation);
  }

  const std::string status_path_;
  std::unique_ptr<std::ofstream> file_;
  std::unique_ptr<events::EventStreamWriter> writer_;
  properties::StandaloneJudge judge_;
  std::atomic<uint64_t> events_{0};
  std::string last_task_error_;
};

// Restorations finished, and the longest REBALANCING -> RUNNING episode of the client.
class Progress final : public StateRestoreListener {
 public:
  explicit Progress(Clock& clock) : clock_(clock) {}
  void OnRestoreStart(const TopicPartition&, std::string_view, int64_t, int64_t) override {
    started_.fetch_add(1);
  }
  void OnBatchRestored(const TopicPartition&, std::string_view, int64_t, int64_t n) override {
    records_.fetch_add(n);
  }
  void OnRestoreEnd(const TopicPartition&, std::string_view, int64_t) override {
    ended_.fetch_add(1);
  }
  void OnRestoreSuspended(const TopicPartition&, std::string_view, int64_t) override {}

  void OnState(RuntimeState next, RuntimeState) {
    const TimeNs now = clock_.NowNs();
    if (next == RuntimeState::kRebalancing && since_.load() < 0) since_.store(now);
    if (next == RuntimeState::kRunning && since_.load() >= 0) {
      const TimeNs took = now - since_.exchange(-1);
      if (took > worst_.load()) worst_.store(took);
      episodes_.fetch_add(1);
    }
  }

  nlohmann::json Json() const {
    const TimeNs since = since_.load();
    return {{"restores_started", started_.load()}, {"restores_ended", ended_.load()},
            {"records_restored", records_.load()}, {"to_running", episodes_.load()},
            {"to_running_ms_max", worst_.load() / kMillisecond},
            {"rebalancing_ms", since < 0 ? -1 : (clock_.NowNs() - since) / kMillisecond}};
  }

 private:
  Clock& clock_;
  std::atomic<int64_t> started_{0}, ended_{0}, records_{0}, episodes_{0};
  std::atomic<TimeNs> since_{-1}, worst_{0};
};

StoreOpener RocksDbOpener() {
  return [](const std::string& dir,
            const std::string& name) -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
    auto store = RocksDbStore::Open(dir, name);
    if (!store.ok()) return store.status();
    return std::unique_ptr<KeyValueStore>(std::move(*store));
  };
}

RuntimeConfig ConfigOf(const InstanceOptions& o) {
  RuntimeConfig config;
  config.application_id = o.app_id;
  config.input_topic = o.input_topic;
  config.state_dir = o.state_dir;
  config.num_stream_threads = o.threads;
  config.processing_guarantee = o.guarantee;
  config.group_protocol = o.group_protocol;
  config.commit_interval_ms = o.commit_interval_ms;
  config.poll_ms = 100;
  return config;
}

int SetupFailed(std::string_view what, const absl::Status& s) {
  std::fprintf(stderr, "%s", fmt::format("soak-instance: {}: {}\n", what, s.ToString()).c_str());
  return kInstanceExitSetup;
}

}  // namespace

namespace {

// The instance's run: the runtime, its oracle and the driver's commands.
class Instance {
 public:
  explicit Instance(const InstanceOptions& o)
      : options_(o),
        clock_(*SystemClock::Default()),
        transport_(rdkafka::RdKafkaOptions{.bootstrap_servers = o.bootstrap}, clock_),
        fs_(PosixFileSystem::Default()),
        sink_(o.events_path, o.status_path),
        recorder_(sink_, events::RecorderOptions{.clock = &clock_, .read_stores = false}),
        progress_(clock_) {}

  // Runs the instance in one run context: its event recorder and the planted mutations (the
  // runtime's threads inherit both).
  int Run(const RuntimeConfig& config, MutationSet mutations) {
    ScopedRunContext run_context(RunContext{.observer = &recorder_, .mutations = mutations});
    Runtime runtime(config, transport_, clock_, fs_, RocksDbOpener(), &progress_);
    if (absl::Status s = Prepare(runtime); !s.ok()) return SetupFailed("set-up", s);
    if (absl::Status s = runtime.Start(); !s.ok()) return SetupFailed("start", s);
    TimeNs next_status = 0;
    while (!g_stop.load() && IsRunningOrRebalancing(runtime.state())) {
      clock_.SleepFor(50 * kMillisecond);
      ApplyCommands(runtime);
      if (clock_.NowNs() >= next_status) {
        WriteStatus(runtime, "");
        next_status = clock_.NowNs() + kStatusEveryNs;
      }
    }
    const bool failed = !IsRunningOrRebalancing(runtime.state());
    const absl::Status closed = runtime.Close(kCloseNs);
    recorder_.OnRunFinished();  // the end-of-run checks: a violation exits from the sink
    sink_.Flush();
    if (failed || !closed.ok()) {
      WriteStatus(runtime, failed ? fmt::format("the runtime failed ({}); last task error: {}",
                                                RuntimeStateName(runtime.state()),
                                                sink_.last_task_error())
                                  : fmt::format("close: {}", closed.ToString()));
      return kInstanceExitRuntimeFailed;
    }
    WriteStatus(runtime, "");
    return kInstanceExitOk;
  }

 private:
  absl::Status Prepare(Runtime& runtime) {
    CheckpointOptions checkpoint;
    checkpoint.instance = fmt::format("i{}", options_.index);
    if (absl::Status s = runtime.EnableCheckpointRestore(checkpoint); !s.ok()) return s;
    return runtime.SetStateListener(
        [this](RuntimeState next, RuntimeState old) { progress_.OnState(next, old); });
  }

  void ApplyCommands(Runtime& runtime) {
    for (; g_checkpoints.load() > checkpoints_asked_; ++checkpoints_asked_) {
      const absl::Status frozen = runtime.Checkpoint();
      if (frozen.ok()) {
        const absl::Status restored = runtime.Restore();
        RS_CHECK(restored.ok(), "restore after a checkpoint: {}", restored.ToString());
        ++checkpoints_done_;
      } else {
        ++checkpoints_refused_;  // not RUNNING, or abandoned: as CRaC allows
      }
    }
    for (; g_pause_toggles.load() > pause_toggles_; ++pause_toggles_) {
      if (runtime.IsPaused()) {
        runtime.Resume();
      } else {
        runtime.Pause();
      }
    }
    for (; g_disk_toggles.load() > disk_toggles_; ++disk_toggles_) fs_.SetFull(!fs_.full());
  }

  void WriteStatus(Runtime& runtime, const std::string& failure) {
    sink_.Flush();
    const RuntimeMetrics metrics = runtime.Metrics();
    nlohmann::json status = progress_.Json();
    status["format"] = "restoresim-soak-status";
    status["version"] = 1;
    status["state"] = std::string(RuntimeStateName(runtime.state()));
    status["records_processed"] = metrics.records_processed;
    status["events"] = sink_.events();
    status["checkpoints_done"] = checkpoints_done_;
    status["checkpoints_refused"] = checkpoints_refused_;
    status["paused"] = runtime.IsPaused();
    status["disk_full"] = fs_.full();
    status["writes_refused"] = fs_.refused();
    status["threads_failed"] = runtime.threads_failed();
    status["failure"] = failure;
    WriteAtomically(options_.status_path, status.dump());
  }

  const InstanceOptions& options_;
  Clock& clock_;
  rdkafka::RdKafkaTransport transport_;
  DiskFullFileSystem fs_;
  JudgeAndWrite sink_;
  events::EventRecorder recorder_;
  Progress progress_;
  int checkpoints_asked_ = 0;
  int pause_toggles_ = 0;
  int disk_toggles_ = 0;
  int64_t checkpoints_done_ = 0;
  int64_t checkpoints_refused_ = 0;
};

}  // namespace

int RunSoakInstance(const InstanceOptions& options) {
  InstallSignals();
  MutationSet mutations;
  if (!options.mutation.empty()) {
    const std::optional<Mutation> m = MutationByName(options.mutation);
    if (!m.has_value()) {
      return SetupFailed("--mutation", absl::InvalidArgumentError(fmt::format(
                                           "no mutation '{}' (restoresim zoo --list)",
                                           options.mutation)));
    }
    mutations.insert(*m);
  }
  const RuntimeConfig config = ConfigOf(options);
  if (absl::Status s = config.Validate(); !s.ok()) return SetupFailed("config", s);
  Instance instance(options);
  return instance.Run(config, mutations);
}

}  // namespace restoresim::soak
