// The runtime on real threads against the local single-node cluster (RESTORESIM_KAFKA_BOOTSTRAP):
// the librdkafka transport, the system clock, POSIX files, RocksDB stores. Every test uses its
// own topics, group and state directories, bounds every wait, and ends by checking every store
// left on disk against its changelog (and, where processing cannot have repeated, the counts
// against the reference model of the topology).
//
// What a real group cannot express: librdkafka's assignors carry no Kafka Streams assignment
// info (Assignment::user_data is empty), so no standby task is ever created and no task is
// recycled between active and standby here; the simulated scenarios cover both.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/port/posix_file_system.h"
#include "core/runtime/count_topology.h"
#include "core/runtime/runtime.h"
#include "kafka/kafka_env.h"
#include "kafka/kafka_world.h"

namespace restoresim::kafka_test {
namespace {

constexpr TimeNs kWaitNs = 90 * kSecond;
constexpr TimeNs kCloseNs = 60 * kSecond;

class KafkaRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<KafkaWorld>> world = KafkaWorld::Connect(kBootstrapEnv);
    ASSERT_TRUE(world.ok()) << world.status();
    world_ = std::move(*world);
  }

  AppTopics NewApp(const std::string& base, int32_t partitions) {
    absl::StatusOr<AppTopics> app = world_->CreateApp(base, partitions);
    EXPECT_TRUE(app.ok()) << app.status();
    return app.ok() ? *app : AppTopics{};
  }

  void Produce(const TopicPartition& tp, const std::vector<TestRecord>& records) {
    absl::Status s = world_->Produce(tp, records);
    ASSERT_TRUE(s.ok()) << s;
  }

  std::unique_ptr<Runtime> Start(const RuntimeConfig& config, StateRestoreListener* listener) {
    auto runtime = std::make_unique<Runtime>(config, world_->transport(), world_->clock(),
                                             *PosixFileSystem::Default(), RocksDbOpener(),
                                             listener);
    absl::Status s = runtime->Start();
    EXPECT_TRUE(s.ok()) << s;
    return runtime;
  }

  void Close(Runtime& runtime) {
    EXPECT_TRUE(IsRunningOrRebalancing(runtime.state()))
        << "a stream thread failed: " << RuntimeStateName(runtime.state());
    absl::Status s = runtime.Close(kCloseNs);
    EXPECT_TRUE(s.ok()) << s;
  }

  // The counts each partition must hold: its first `initial` changelog records folded, then
  // every input record processed once.
  void ExpectCounts(const AppTopics& app, size_t initial) {
    world_->ExpectCountsOfTheReference(app, initial);
  }

  std::unique_ptr<KafkaWorld> world_;
};

TEST_F(KafkaRuntimeTest, RestoresFromScratchThenProcessesTheInput) {
  constexpr int32_t kPartitions = 2;
  constexpr int kChangelogRecords = 5000;
  const AppTopics app = NewApp("scratch", kPartitions);
  for (int32_t p = 0; p < kPartitions; ++p) {
    Produce(app.Changelog(p), ChangelogRecords("", kChangelogRecords, 50));
    Produce(app.Input(p), InputRecords(300, 7));
  }
  const std::string dir = world_->NewStateDir("scratch");
  GatedRestoreListener listener;
  std::unique_ptr<Runtime> runtime = Start(world_->Config(app, dir), &listener);
  EXPECT_TRUE(WaitUntil(world_->clock(), kWaitNs, [&]() {
    return listener.ends() == kPartitions && world_->InputFullyCommitted(app);
  })) << "restored " << listener.records() << ", ends " << listener.ends();
  Close(*runtime);
  EXPECT_EQ(listener.records(), kPartitions * kChangelogRecords) << "every record restored once";
  EXPECT_EQ(world_->ExpectStoresEqualChangelogs(dir, app).size(), size_t{kPartitions});
  ExpectCounts(app, kChangelogRecords);
}

TEST_F(KafkaRuntimeTest, RestartRestoresOnlyWhatCameAfterTheCheckpoint) {
  constexpr int32_t kPartitions = 2;
  const AppTopics app = NewApp("checkpoint", kPartitions);
  for (int32_t p = 0; p < kPartitions; ++p) {
    Produce(app.Changelog(p), ChangelogRecords("", 3000, 40));
  }
  const std::string dir = world_->NewStateDir("checkpoint");
  GatedRestoreListener first;
  std::unique_ptr<Runtime> runtime = Start(world_->Config(app, dir), &first);
  EXPECT_TRUE(WaitUntil(world_->clock(), kWaitNs, [&]() { return first.ends() == kPartitions; }));
  Close(*runtime);
  runtime.reset();
  EXPECT_EQ(first.records(), kPartitions * 3000);

  // Another owner wrote on meanwhile; the restart restores those records only.
  for (int32_t p = 0; p < kPartitions; ++p) {
    Produce(app.Changelog(p), ChangelogRecords("more-", 700, 30));
  }
  GatedRestoreListener second;
  runtime = Start(world_->Config(app, dir), &second);
  EXPECT_TRUE(WaitUntil(world_->clock(), kWaitNs, [&]() { return second.ends() == kPartitions; }));
  Close(*runtime);
  EXPECT_EQ(second.records(), kPartitions * 700) << "restored from the checkpoint on";
  EXPECT_EQ(world_->ExpectStoresEqualChangelogs(dir, app).size(), size_t{kPartitions});
}

TEST_F(KafkaRuntimeTest, ChangelogTruncatedBelowTheCheckpointIsWipedAndRestoredFromTheLogStart) {
  const AppTopics app = NewApp("truncated", 1);
  Produce(app.Changelog(0), ChangelogRecords("old-", 1000, 20));
  const std::string dir = world_->NewStateDir("truncated");
  GatedRestoreListener first;
  std::unique_ptr<Runtime> runtime = Start(world_->Config(app, dir), &first);
  EXPECT_TRUE(WaitUntil(world_->clock(), kWaitNs, [&]() { return first.ends() == 1; }));
  Close(*runtime);
  runtime.reset();

  // Retention moves the log start past the checkpoint (1000): offsets 1000..1499 are gone.
  Produce(app.Changelog(0), ChangelogRecords("new-", 1000, 20));
  ASSERT_TRUE(world_->DeleteRecords(app.Changelog(0), 1500).ok());
  GatedRestoreListener second;
  runtime = Start(world_->Config(app, dir), &second);
  EXPECT_TRUE(WaitUntil(world_->clock(), kWaitNs, [&]() { return second.ends() == 1; }));
  Close(*runtime);
  EXPECT_EQ(second.records(), 500) << "restored from the new log start, after the wipe";
  absl::StatusOr<std::map<std::string, std::string>> store = world_->ReadStore(dir, app, 0);
  ASSERT_TRUE(store.ok()) << store.status();
  for (const auto& [key, value] : *store) {
    EXPECT_EQ(key.rfind("new-", 0), 0u) << "a key of the deleted records survived: " << key;
  }
  EXPECT_EQ(world_->ExpectStoresEqualChangelogs(dir, app).size(), 1u);
}

TEST_F(KafkaRuntimeTest, TwoInstancesShareTheGroupAndHandPartitionsOver) {
  constexpr int32_t kPartitions = 4;
  constexpr int kChangelogRecords = 2000;
  const AppTopics app = NewApp("two", kPartitions);
  for (int32_t p = 0; p < kPartitions; ++p) {
    Produce(app.Changelog(p), ChangelogRecords("", kChangelogRecords, 30));
    Produce(app.Input(p), InputRecords(200, 5));
  }
  const std::string dir_a = world_->NewStateDir("two-a");
  const std::string dir_b = world_->NewStateDir("two-b");
  GatedRestoreListener listener_a;
  GatedRestoreListener listener_b;
  std::unique_ptr<Runtime> a = Start(world_->Config(app, dir_a), &listener_a);
  auto committed = [&]() { return world_->InputFullyCommitted(app); };
  ASSERT_TRUE(WaitUntil(world_->clock(), kWaitNs, committed))
      << "instance a alone did not process its input";
  EXPECT_EQ(listener_a.ends(), kPartitions) << "instance a owned every task";

  // b joins: the cooperative rebalance hands some tasks over; b restores them from the
  // changelog a wrote, then both process the next input.
  std::unique_ptr<Runtime> b = Start(world_->Config(app, dir_b), &listener_b);
  ASSERT_TRUE(WaitUntil(world_->clock(), kWaitNs, [&]() { return listener_b.ends() > 0; }))
      << "no task moved to instance b";
  for (int32_t p = 0; p < kPartitions; ++p) Produce(app.Input(p), InputRecords(200, 5));
  EXPECT_TRUE(WaitUntil(world_->clock(), kWaitNs, committed));
  Close(*b);
  Close(*a);
  // Every hand-over was a clean revocation (it commits), so no record was processed twice.
  ExpectCounts(app, kChangelogRecords);
  const std::vector<int32_t> in_b = world_->ExpectStoresEqualChangelogs(dir_b, app, false);
  EXPECT_FALSE(in_b.empty());
  world_->ExpectStoresEqualChangelogs(dir_a, app, false);
}

}  // namespace
}  // namespace restoresim::kafka_test
