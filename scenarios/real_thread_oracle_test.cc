// The invariant oracle on real threads: the runtime of real_thread_stress_test (two stream
// threads and their restore threads, the system clock, the fake broker) with an EventRecorder
// installed over a StandaloneJudge, so every thread's events are judged online in the
// recorder's one order. A clean run passes; the same recorded stream with one event planted
// that breaks an invariant fails naming it; and the stream survives the file format.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <thread>

#include "core/events/event_codec.h"
#include "core/events/event_recorder.h"
#include "core/port/system_clock.h"
#include "core/runtime/runtime.h"
#include "core/state/log_store.h"
#include "fakes/fake_broker.h"
#include "fakes/mem_file_system.h"
#include "properties/standalone_judge.h"

namespace restoresim {
namespace {

constexpr int32_t kPartitions = 4;
constexpr int kChangelogRecords = 300;
constexpr int kInputRecords = 200;

// Judges online and keeps a copy of every event (for the tests that break the stream).
class JudgeAndKeep final : public events::EventSink {
 public:
  void OnEvent(const events::Event& event) override {
    judge.OnEvent(event);
    kept.push_back(event);
  }
  properties::StandaloneJudge judge;
  std::vector<events::Event> kept;
};

// Runs the runtime on real threads until every input record is committed, then closes it.
void RunRealThreads(JudgeAndKeep& sink) {
  SystemClock& clock = *SystemClock::Default();
  fakes::FakeBroker broker(clock, nullptr, fakes::BrokerFaults{});
  fakes::MemFileSystem fs;
  // No log-start source: FakeBroker's peek takes no lock (fine under the simulator only).
  events::EventRecorder recorder(sink, events::RecorderOptions{.clock = &clock});
  broker.SetAppendObserver(
      [&recorder](const TopicPartition& tp, const ConsumerRecord& r) { recorder.OnAppend(tp, r); });
  ASSERT_TRUE(broker.CreateTopic("app-counts-changelog", kPartitions).ok());
  ASSERT_TRUE(broker.CreateTopic("input", kPartitions).ok());
  for (int32_t p = 0; p < kPartitions; ++p) {
    for (int i = 0; i < kChangelogRecords; ++i) {
      ASSERT_TRUE(broker.Append({"app-counts-changelog", p}, "k" + std::to_string(i % 7),
                                std::to_string(i), i).ok());
    }
    for (int i = 0; i < kInputRecords; ++i) {
      ASSERT_TRUE(broker.Append({"input", p}, "k" + std::to_string(i % 5), "1", i).ok());
    }
  }
  RuntimeConfig config;
  config.application_id = "app";
  config.input_topic = "input";
  config.num_stream_threads = 2;
  config.state_dir = "/state";
  config.commit_interval_ms = 20;
  config.poll_ms = 5;
  config.restore_max_poll_records = 50;
  StoreOpener opener = [&fs](const std::string& dir, const std::string& name)
      -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
    auto store = LogStore::Open(fs, dir, name);
    if (!store.ok()) return store.status();
    return std::unique_ptr<KeyValueStore>(std::move(*store));
  };
  {
    ScopedObserver observing(&recorder);  // the runtime's threads inherit it
    Runtime runtime(config, broker, clock, fs, opener);
    ASSERT_TRUE(runtime.Start().ok());
    const TimeNs deadline = clock.NowNs() + 60 * kSecond;
    bool done = false;
    while (!done && clock.NowNs() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const auto committed = broker.CommittedOffsets("app");
      done = true;
      for (int32_t p = 0; p < kPartitions; ++p) {
        auto it = committed.find({"input", p});
        done = done && it != committed.end() && it->second == kInputRecords;
      }
    }
    ASSERT_TRUE(done) << "input not fully processed and committed in time";
    ASSERT_TRUE(runtime.Close(30 * kSecond).ok());
  }
  recorder.OnRunFinished();
  broker.SetAppendObserver(nullptr);
}

properties::StandaloneJudge& Judge(const std::vector<events::Event>& stream,
                                   properties::StandaloneJudge& judge) {
  for (const events::Event& e : stream) judge.OnEvent(e);
  return judge;
}

TEST(RealThreadOracleTest, ARealThreadRunPassesEveryInvariant) {
  JudgeAndKeep sink;
  RunRealThreads(sink);
  ASSERT_FALSE(sink.judge.failure().has_value()) << sink.judge.failure()->Render();
  EXPECT_GT(sink.judge.oracle().counts().events, 1000);
  EXPECT_GT(sink.judge.oracle().counts().store_checks, 0);
  // One order consistent with each thread's: every thread's numbers run 1, 2, 3, ...
  std::map<std::string, uint64_t> last;
  for (const events::Event& e : sink.kept) {
    EXPECT_EQ(e.header.seq, last[e.header.thread] + 1) << e.header.thread;
    last[e.header.thread] = e.header.seq;
  }
  EXPECT_GE(last.size(), 4u);  // two stream threads, two restore threads (and the test's)
}

// The recorded stream with a changelog registered a second time right after its first
// registration: the registration invariant must name it.
TEST(RealThreadOracleTest, ARealThreadStreamThatRegistersTwiceFailsRegistration) {
  JudgeAndKeep sink;
  RunRealThreads(sink);
  ASSERT_FALSE(sink.judge.failure().has_value()) << sink.judge.failure()->Render();
  std::vector<events::Event> broken = sink.kept;
  auto first = std::find_if(broken.begin(), broken.end(), [](const events::Event& e) {
    return std::holds_alternative<events::Registered>(e.body);
  });
  ASSERT_NE(first, broken.end());
  const events::Event again = *first;
  broken.insert(first + 1, again);
  properties::StandaloneJudge judge;
  ASSERT_TRUE(Judge(broken, judge).failure().has_value());
  EXPECT_EQ(judge.failure()->invariant, "registration") << judge.failure()->Render();
  properties::StandaloneJudge clean;
  EXPECT_FALSE(Judge(sink.kept, clean).failure().has_value());  // the original still passes
}

// Through the file format and back: the same events, judged the same.
TEST(RealThreadOracleTest, ARealThreadStreamSurvivesTheFileFormat) {
  JudgeAndKeep sink;
  RunRealThreads(sink);
  std::stringstream file;
  events::EventStreamWriter writer(file);
  for (const events::Event& e : sink.kept) writer.OnEvent(e);
  events::EventFileReader reader(file);
  ASSERT_TRUE(reader.Open().ok());
  properties::StandaloneJudge judge;
  size_t read = 0;
  for (;;) {
    absl::StatusOr<std::optional<events::Event>> e = reader.Next();
    ASSERT_TRUE(e.ok()) << e.status();
    if (!e->has_value()) break;
    ASSERT_LT(read, sink.kept.size());
    EXPECT_EQ(events::EncodeEvent(**e), events::EncodeEvent(sink.kept[read]));
    ++read;
    judge.OnEvent(**e);
  }
  EXPECT_EQ(read, sink.kept.size());
  EXPECT_FALSE(judge.failure().has_value());
  EXPECT_EQ(judge.oracle().counts().events, sink.judge.oracle().counts().events);
}

}  // namespace
}  // namespace restoresim
