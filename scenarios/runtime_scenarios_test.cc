// The Runtime end to end under the simulator: two stream threads (each with its restore thread)
// restore, process and commit; metrics and restore listener callbacks add up; a second runtime
// over the same state directory restores only what it did not checkpoint.
#include "core/runtime/runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/runtime/count_topology.h"
#include "core/state/log_store_manifest.h"
#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using testing::Changelog;
using testing::Input;
using testing::RuntimeWorld;

constexpr int32_t kPartitions = 4;

RuntimeConfig Config() {
  RuntimeConfig c;
  c.application_id = "app";
  c.input_topic = "input";
  c.num_stream_threads = 2;
  c.state_dir = "/state";
  c.commit_interval_ms = 200;
  c.poll_ms = 20;
  c.restore_max_poll_records = 25;
  return c;
}

struct PairingListener : StateRestoreListener {
  std::map<TopicPartition, int> open;  // starts not yet ended or suspended
  int unpaired = 0;
  void OnRestoreStart(const TopicPartition& tp, std::string_view, int64_t, int64_t) override {
    if (open[tp]++ != 0) ++unpaired;
  }
  void OnBatchRestored(const TopicPartition& tp, std::string_view, int64_t, int64_t) override {
    if (open[tp] != 1) ++unpaired;
  }
  void OnRestoreEnd(const TopicPartition& tp, std::string_view, int64_t) override {
    if (open[tp]-- != 1) ++unpaired;
  }
  void OnRestoreSuspended(const TopicPartition& tp, std::string_view, int64_t) override {
    if (open[tp]-- != 1) ++unpaired;
  }
};

bool AllCommitted(RuntimeWorld& w, int64_t per_partition) {
  const auto committed = w.broker.CommittedOffsets("app");
  for (int32_t p = 0; p < kPartitions; ++p) {
    auto it = committed.find(Input(p));
    if (it == committed.end() || it->second < per_partition) return false;
  }
  return true;
}

void Produce(RuntimeWorld& w, int from, int n) {
  for (int32_t p = 0; p < kPartitions; ++p) {
    for (int i = from; i < from + n; ++i) {
      RS_CHECK(w.broker.Append(Input(p), "k" + std::to_string(i % 3), std::to_string(1), i).ok());
    }
  }
}

TEST(RuntimeScenarioTest, TwoThreadsRestoreProcessCommitAndRestartFromCheckpoints) {
  for (uint64_t seed = 0; seed < 6; ++seed) {
    sim::TestRun r = sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, kPartitions);
      for (int32_t p = 0; p < kPartitions; ++p) w.WriteChangelog(p, 100);
      Produce(w, 0, 30);
      PairingListener listener;
      {
        Runtime runtime(Config(), w.broker, w.clock, w.fs, w.LogStoreOpener(), &listener);
        EXPECT_EQ(runtime.state(), RuntimeState::kCreated);
        ASSERT_TRUE(runtime.Start().ok());
        EXPECT_EQ(runtime.state(), RuntimeState::kRebalancing) << "Kafka's start()";
        for (int i = 0; i < 600 && !AllCommitted(w, 30); ++i) w.clock.SleepFor(100 * kMillisecond);
        ASSERT_TRUE(AllCommitted(w, 30));
        const RuntimeMetrics m = runtime.Metrics();
        EXPECT_EQ(m.records_restored, 4 * 100);
        EXPECT_EQ(m.restores_started, 4);
        EXPECT_EQ(m.restores_ended, 4);
        EXPECT_EQ(m.remaining_records, 0);
        EXPECT_GT(m.restore_rate_per_second, 0);
        ASSERT_TRUE(runtime.Close(30 * kSecond).ok());
        EXPECT_EQ(runtime.state(), RuntimeState::kNotRunning);
      }
      EXPECT_EQ(listener.unpaired, 0);
      // A new instance over the same state directory: the checkpoints written at close mean
      // nothing is left to restore; new input is processed on top of the restored counts.
      Produce(w, 30, 10);
      Runtime again(Config(), w.broker, w.clock, w.fs, w.LogStoreOpener(), &listener);
      ASSERT_TRUE(again.Start().ok());
      for (int i = 0; i < 600 && !AllCommitted(w, 40); ++i) w.clock.SleepFor(100 * kMillisecond);
      ASSERT_TRUE(AllCommitted(w, 40));
      EXPECT_EQ(again.Metrics().records_restored, 0) << "restored from checkpoints";
      ASSERT_TRUE(again.Close(30 * kSecond).ok());
      EXPECT_EQ(listener.unpaired, 0);
      // The changelog now holds the counts: each key's final value is the initial changelog
      // value plus its input.
      for (int32_t p = 0; p < kPartitions; ++p) {
        const auto fold = FoldChangelog(*w.broker.ReadLog(Changelog(p), 0, 1'000'000));
        const auto expected =
            ReferenceCounts(*w.broker.ReadLog(Input(p), 0, 1'000'000),
                            FoldChangelog(*w.broker.ReadLog(Changelog(p), 0, 100)));
        EXPECT_EQ(fold, expected) << "partition " << p;
      }
    }, seed, sim::SimOptions{.steps_max = 5'000'000});
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
  }
}

// A flipped bit in what a store flushed: the next runtime finds its store damaged (DataLoss),
// wipes the task directory and restores it from the changelog, as Kafka Streams does with a
// corrupted local store — instead of retrying the open forever (issue 12).
TEST(RuntimeScenarioTest, ADamagedStoreIsWipedAndRestoredFromItsChangelog) {
  sim::TestRun r = sim::RunUnderSim([&]() {
    RuntimeWorld w(/*faults=*/false, kPartitions);
    for (int32_t p = 0; p < kPartitions; ++p) w.WriteChangelog(p, 100);
    Produce(w, 0, 30);
    {
      Runtime runtime(Config(), w.broker, w.clock, w.fs, w.LogStoreOpener(), nullptr);
      ASSERT_TRUE(runtime.Start().ok());
      for (int i = 0; i < 600 && !AllCommitted(w, 30); ++i) w.clock.SleepFor(100 * kMillisecond);
      ASSERT_TRUE(AllCommitted(w, 30));
      ASSERT_TRUE(runtime.Close(30 * kSecond).ok());
    }
    // Damage the first flushed segment of task 0_1's store.
    const std::string dir = "/state/app/0_1/counts";
    const auto decoded = DecodeLogStoreManifest(*w.fs.ReadFile(dir + "/MANIFEST"), 1024);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    const std::vector<LogSegmentEntry>* manifest = &decoded->segments;
    ASSERT_FALSE(manifest->empty());
    const std::string segment = fmt::format("{}/segment-{:08}.log", dir, manifest->front().number);
    std::string bytes = *w.fs.ReadFile(segment);
    ASSERT_GT(manifest->front().flushed_bytes, 20u);
    bytes[manifest->front().flushed_bytes / 2] ^= 0x10;
    auto file = w.fs.NewWritableFile(segment);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(bytes).ok());
    ASSERT_TRUE((*file)->Sync().ok());
    ASSERT_TRUE((*file)->Close().ok());

    Produce(w, 30, 10);
    Runtime again(Config(), w.broker, w.clock, w.fs, w.LogStoreOpener(), nullptr);
    ASSERT_TRUE(again.Start().ok());
    for (int i = 0; i < 600 && !AllCommitted(w, 40); ++i) w.clock.SleepFor(100 * kMillisecond);
    ASSERT_TRUE(AllCommitted(w, 40));
    const RuntimeMetrics m = again.Metrics();
    EXPECT_EQ(m.stores_wiped_on_open, 1);
    // Only the damaged task restores, from the start of its changelog (its 100 records and the
    // counts the first runtime wrote); the others restore nothing past their checkpoints.
    EXPECT_GE(m.records_restored, 100);
    // Kafka's listener hears of every active changelog: 4 starts and ends, 3 with nothing to
    // restore.
    EXPECT_EQ(m.restores_started, kPartitions);
    EXPECT_EQ(m.restores_ended, kPartitions);
    ASSERT_TRUE(again.Close(30 * kSecond).ok());
    for (int32_t p = 0; p < kPartitions; ++p) {
      const auto fold = FoldChangelog(*w.broker.ReadLog(Changelog(p), 0, 1'000'000));
      const auto expected =
          ReferenceCounts(*w.broker.ReadLog(Input(p), 0, 1'000'000),
                          FoldChangelog(*w.broker.ReadLog(Changelog(p), 0, 100)));
      EXPECT_EQ(fold, expected) << "partition " << p;
    }
  }, 3, sim::SimOptions{.steps_max = 5'000'000});
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

// Kafka's StateDirectory lock: a second instance over the same state directory is refused at
// once, with the directory named, and may start once the first one closed.
TEST(RuntimeScenarioTest, TwoInstancesCannotShareOneStateDirectory) {
  sim::TestRun r = sim::RunUnderSim([&]() {
    RuntimeWorld w(/*faults=*/false, kPartitions);
    {
      Runtime first(Config(), w.broker, w.clock, w.fs, w.LogStoreOpener(), nullptr);
      ASSERT_TRUE(first.Start().ok());
      Runtime second(Config(), w.broker, w.clock, w.fs, w.LogStoreOpener(), nullptr);
      const absl::Status refused = second.Start();
      ASSERT_FALSE(refused.ok());
      EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_THAT(std::string(refused.message()),
                  ::testing::HasSubstr("state.dir: /state/app is locked by another instance"));
      EXPECT_EQ(second.state(), RuntimeState::kCreated) << "nothing started";
      EXPECT_EQ(second.thread_count(), 0u);
      EXPECT_TRUE(w.fs.LockFile("/state/other/.lock").ok())
          << "the lock is per application directory";
      ASSERT_TRUE(first.Close(30 * kSecond).ok());
      ASSERT_TRUE(second.Close(kSecond).ok()) << "closing a refused instance is harmless";
    }
    Runtime again(Config(), w.broker, w.clock, w.fs, w.LogStoreOpener(), nullptr);
    ASSERT_TRUE(again.Start().ok()) << "the first one released it at Close";
    ASSERT_TRUE(again.Close(30 * kSecond).ok());
  }, 1);
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

}  // namespace
}  // namespace restoresim

