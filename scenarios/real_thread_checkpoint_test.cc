// Runtime::Checkpoint()/Restore() on real OS threads over RocksDB stores and the POSIX file
// system, with the fake broker (thread-safe) standing in for Kafka: the production code path of
// the lifecycle port, driven by the API and by the opt-in signal trigger.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>

#include <thread>

#include "core/port/posix_file_system.h"
#include "core/port/system_clock.h"
#include "core/runtime/checkpoint_signal.h"
#include "core/runtime/count_topology.h"
#include "core/runtime/runtime.h"
#include "core/state/rocksdb_store.h"
#include "fakes/fake_broker.h"

namespace restoresim {
namespace {

// The signal trigger's REQUIRES: the signal blocked before any thread starts. RocksDB keeps a
// process-wide pool of background threads from the first test on, so the mask is set at static
// initialisation, before gtest's main (a thread without it would take the default action).
const bool kSignalBlocked = []() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR2);
  return pthread_sigmask(SIG_BLOCK, &set, nullptr) == 0;
}();

constexpr int32_t kPartitions = 2;
constexpr int kChangelogRecords = 200;
constexpr int kInputRecords = 100;

class RealThreadCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/restoresim-crac-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_TRUE(broker_.CreateTopic("app-counts-changelog", kPartitions).ok());
    ASSERT_TRUE(broker_.CreateTopic("input", kPartitions).ok());
    for (int32_t p = 0; p < kPartitions; ++p) {
      for (int i = 0; i < kChangelogRecords; ++i) {
        ASSERT_TRUE(broker_.Append({"app-counts-changelog", p}, "k" + std::to_string(i % 7),
                                   std::to_string(i), i).ok());
      }
      AppendInput(p, kInputRecords);
    }
    config_.application_id = "app";
    config_.input_topic = "input";
    config_.num_stream_threads = 2;
    config_.state_dir = dir_;
    config_.commit_interval_ms = 20;
    config_.poll_ms = 5;
    config_.restore_max_poll_records = 20;
  }
  void TearDown() override { (void)PosixFileSystem::Default()->DeleteDirRecursively(dir_); }

  void AppendInput(int32_t p, int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(broker_.Append({"input", p}, "k" + std::to_string(i % 5), "1", i).ok());
    }
    input_[p] += n;
  }
  StoreOpener Opener() {
    return [](const std::string& d,
              const std::string& name) -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
      // The task directory exists (the state manager made it); the store's is RocksDB's.
      auto store = RocksDbStore::Open(d, name);
      if (!store.ok()) return store.status();
      return std::unique_ptr<KeyValueStore>(std::move(*store));
    };
  }
  std::map<TopicPartition, int64_t> Committed() { return broker_.CommittedOffsets("app"); }
  // Waits (real time, bounded) until all input is committed.
  bool AwaitAllCommitted(TimeNs timeout_ns) {
    const TimeNs deadline = clock_.NowNs() + timeout_ns;
    while (clock_.NowNs() < deadline) {
      const auto committed = Committed();
      bool done = true;
      for (int32_t p = 0; p < kPartitions; ++p) {
        auto it = committed.find({"input", p});
        done = done && it != committed.end() && it->second == input_[p];
      }
      if (done) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  void ExpectReferenceCounts() {
    for (int32_t p = 0; p < kPartitions; ++p) {
      const std::vector<ConsumerRecord> changelog =
          *broker_.ReadLog({"app-counts-changelog", p}, 0, 1'000'000);
      const auto expected = ReferenceCounts(
          *broker_.ReadLog({"input", p}, 0, 1'000'000),
          FoldChangelog(std::vector<ConsumerRecord>(changelog.begin(),
                                                    changelog.begin() + kChangelogRecords)));
      EXPECT_EQ(FoldChangelog(changelog), expected) << "partition " << p;
    }
  }

  SystemClock& clock_ = *SystemClock::Default();
  fakes::FakeBroker broker_{clock_, nullptr, fakes::BrokerFaults{}};
  RuntimeConfig config_;
  std::string dir_;
  std::map<int32_t, int> input_;
};

TEST_F(RealThreadCheckpointTest, FrozenRuntimeMakesNoProgressAndResumesUnderAFreshIdentity) {
  Runtime runtime(config_, broker_, clock_, *PosixFileSystem::Default(), Opener());
  ASSERT_TRUE(runtime.EnableCheckpointRestore({}).ok());
  ASSERT_TRUE(runtime.Start().ok());
  ASSERT_TRUE(AwaitAllCommitted(60 * kSecond));
  const std::string identity = runtime.process_id();
  ASSERT_TRUE(runtime.Checkpoint().ok());
  EXPECT_TRUE(runtime.frozen());
  EXPECT_TRUE(absl::IsFailedPrecondition(runtime.Checkpoint()));  // one cycle at a time
  // Frozen: new input is neither processed nor committed.
  for (int32_t p = 0; p < kPartitions; ++p) AppendInput(p, 50);
  const auto before = Committed();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Committed(), before);
  ASSERT_TRUE(runtime.Restore().ok());
  EXPECT_FALSE(runtime.frozen());
  EXPECT_NE(runtime.process_id(), identity);  // reseeded from the OS: a fresh identity
  ASSERT_TRUE(AwaitAllCommitted(60 * kSecond)) << "input after the restore not processed";
  EXPECT_EQ(runtime.state(), RuntimeState::kRunning);
  ASSERT_TRUE(runtime.Close(30 * kSecond).ok());
  ExpectReferenceCounts();
}

TEST_F(RealThreadCheckpointTest, TheSignalTriggerRunsTheCycleOnAHelperThread) {
  // Installed before the runtime starts its threads, which inherit the blocked signal.
  ASSERT_TRUE(kSignalBlocked);
  Runtime runtime(config_, broker_, clock_, *PosixFileSystem::Default(), Opener());
  ASSERT_TRUE(runtime.EnableCheckpointRestore({}).ok());
  int images = 0;
  auto handler = CheckpointSignalHandler::Install(runtime, SIGUSR2, [&]() {
    ++images;  // the process image would be taken here
    return absl::OkStatus();
  });
  ASSERT_TRUE(handler.ok()) << handler.status();
  ASSERT_TRUE(runtime.Start().ok());
  ASSERT_TRUE(AwaitAllCommitted(60 * kSecond));
  const std::string identity = runtime.process_id();
  ASSERT_EQ(kill(getpid(), SIGUSR2), 0);
  const TimeNs deadline = clock_.NowNs() + 30 * kSecond;
  while ((*handler)->cycles() == 0 && clock_.NowNs() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ((*handler)->cycles(), 1);
  EXPECT_TRUE((*handler)->last_status().ok()) << (*handler)->last_status();
  EXPECT_EQ(images, 1);
  EXPECT_NE(runtime.process_id(), identity);
  for (int32_t p = 0; p < kPartitions; ++p) AppendInput(p, 20);
  ASSERT_TRUE(AwaitAllCommitted(60 * kSecond));
  ASSERT_TRUE(runtime.Close(30 * kSecond).ok());
  handler->reset();
  ExpectReferenceCounts();
}

TEST(CheckpointSignalHandlerTest, BadSignalIsAnError) {
  fakes::FakeBroker broker(*SystemClock::Default(), nullptr, fakes::BrokerFaults{});
  RuntimeConfig config;
  Runtime runtime(config, broker, *SystemClock::Default(), *PosixFileSystem::Default(), nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(CheckpointSignalHandler::Install(runtime, SIGKILL).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(CheckpointSignalHandler::Install(runtime, 0).status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(runtime.Checkpoint()));  // not enabled
  EXPECT_TRUE(absl::IsFailedPrecondition(runtime.Restore()));
}

}  // namespace
}  // namespace restoresim
