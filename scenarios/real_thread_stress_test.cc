// The same runtime on real OS threads: two stream threads and their restore threads, the
// system clock, the fake broker (thread-safe through the same Mutex the simulator schedules)
// and the in-memory file system. Run under ThreadSanitizer by `tools/test --tsan` (and CI): a
// data race anywhere in the runtime's cross-thread protocol is a failure.
#include <gtest/gtest.h>

#include <thread>

#include "core/port/system_clock.h"
#include "core/runtime/count_topology.h"
#include "core/runtime/runtime.h"
#include "core/state/log_store.h"
#include "fakes/fake_broker.h"
#include "fakes/mem_file_system.h"

namespace restoresim {
namespace {

constexpr int32_t kPartitions = 4;
constexpr int kChangelogRecords = 300;
constexpr int kInputRecords = 200;

TEST(RealThreadStressTest, TwoStreamThreadsRestoreAndProcessWithoutRaces) {
  for (int round = 0; round < 3; ++round) {
    SystemClock& clock = *SystemClock::Default();
    fakes::FakeBroker broker(clock, nullptr, fakes::BrokerFaults{});
    fakes::MemFileSystem fs;
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
      (void)runtime.Metrics();  // read concurrently with the threads, as a user would
    }
    ASSERT_TRUE(done) << "input not fully processed and committed in time";
    EXPECT_EQ(runtime.state(), RuntimeState::kRunning);
    ASSERT_TRUE(runtime.Close(30 * kSecond).ok());
    for (int32_t p = 0; p < kPartitions; ++p) {
      const std::vector<ConsumerRecord> changelog =
          *broker.ReadLog({"app-counts-changelog", p}, 0, 1'000'000);
      const auto expected = ReferenceCounts(
          *broker.ReadLog({"input", p}, 0, 1'000'000),
          FoldChangelog(std::vector<ConsumerRecord>(changelog.begin(),
                                                    changelog.begin() + kChangelogRecords)));
      // Every hand-over here is a clean revocation (it commits), so even at least once no
      // record is processed twice: the changelog folds to exactly the reference counts.
      EXPECT_EQ(FoldChangelog(changelog), expected) << "partition " << p;
    }
  }
}

}  // namespace
}  // namespace restoresim
