// Runtime::KafkaMetrics end to end under the simulator: after two stream threads restored four
// partitions, the KIP-869 metrics are listed under Kafka's groups, names and tags, with the
// task totals equal to what was restored and nothing left to restore.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/runtime/runtime.h"
#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using testing::Input;
using testing::RuntimeWorld;

constexpr int32_t kPartitions = 4;
constexpr int kRecords = 100;

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

bool AllCommitted(RuntimeWorld& w, int64_t per_partition) {
  const auto committed = w.broker.CommittedOffsets("app");
  for (int32_t p = 0; p < kPartitions; ++p) {
    auto it = committed.find(Input(p));
    if (it == committed.end() || it->second < per_partition) return false;
  }
  return true;
}

TEST(RuntimeMetricsTest, KafkaMetricsListTheStateUpdatersAndTheirTasksRestoration) {
  sim::TestRun r = sim::RunUnderSim([&]() {
    RuntimeWorld w(/*faults=*/false, kPartitions);
    for (int32_t p = 0; p < kPartitions; ++p) {
      w.WriteChangelog(p, kRecords);
      for (int i = 0; i < 10; ++i) RS_CHECK(w.broker.Append(Input(p), "k", "1", i).ok());
    }
    Runtime runtime(Config(), w.broker, w.clock, w.fs, w.LogStoreOpener());
    ASSERT_TRUE(runtime.Start().ok());
    for (int i = 0; i < 600 && !AllCommitted(w, 10); ++i) w.clock.SleepFor(100 * kMillisecond);
    ASSERT_TRUE(AllCommitted(w, 10));
    const std::vector<KafkaMetric> metrics = runtime.KafkaMetrics();
    std::map<std::string, int> updater_names;
    double restored = 0;
    int tasks = 0;
    for (const KafkaMetric& m : metrics) {
      if (m.group == "stream-state-updater-metrics") {
        ++updater_names[m.name];
        EXPECT_THAT(m.tags.at("thread-id"), ::testing::EndsWith("-restore")) << m.Key();
        if (m.name.ends_with("-ratio")) {
          EXPECT_TRUE(m.value >= 0 && m.value <= 1) << m.Key() << " = " << m.value;
        }
        if (m.name == "active-restoring-tasks") EXPECT_EQ(m.value, 0) << m.Key();
        continue;
      }
      ASSERT_EQ(m.group, "stream-task-metrics") << m.Key();
      EXPECT_THAT(m.tags.at("thread-id"), ::testing::StartsWith("app-StreamThread-")) << m.Key();
      EXPECT_FALSE(m.tags.at("thread-id").ends_with("-restore")) << m.Key();
      if (m.name == "restore-total") {
        restored += m.value;
        ++tasks;
      }
      if (m.name == "restore-remaining-records-total") EXPECT_EQ(m.value, 0) << m.Key();
    }
    for (std::string_view name :
         {"active-restoring-tasks", "standby-updating-tasks", "active-paused-tasks",
          "standby-paused-tasks", "idle-ratio", "active-restore-ratio", "standby-update-ratio",
          "checkpoint-ratio", "restore-records-rate", "restore-call-rate"}) {
      EXPECT_EQ(updater_names[std::string(name)], 2) << name << ": one per restore thread";
    }
    EXPECT_EQ(tasks, kPartitions);
    EXPECT_EQ(restored, kPartitions * kRecords);
    EXPECT_EQ(restored, static_cast<double>(runtime.Metrics().records_restored));
    ASSERT_TRUE(runtime.Close(30 * kSecond).ok());
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

}  // namespace
}  // namespace restoresim
