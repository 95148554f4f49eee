// Kafka's sampled stats and the state updater's KIP-869 metrics, recorded against a time the
// test chooses (the behaviours Kafka's DefaultStateUpdaterTest and TaskMetrics pin down).
#include "core/runtime/state_updater_metrics.h"

#include <cmath>

#include <gtest/gtest.h>

#include "core/runtime/kafka_metrics.h"

namespace restoresim {
namespace {

using Kind = SampledStat::Kind;

// The value of (group, name) for `task` ("" for the thread's metrics); NaN if absent.
double Value(const std::vector<KafkaMetric>& metrics, std::string_view name,
             std::string_view task = "") {
  for (const KafkaMetric& m : metrics) {
    const auto it = m.tags.find("task-id");
    const std::string_view of = it == m.tags.end() ? std::string_view() : it->second;
    if (m.name == name && of == task) return m.value;
  }
  return std::nan("");
}

bool Has(const std::vector<KafkaMetric>& metrics, std::string_view name, std::string_view task) {
  for (const KafkaMetric& m : metrics) {
    auto it = m.tags.find("task-id");
    if (m.name == name && it != m.tags.end() && it->second == task) return true;
  }
  return false;
}

TEST(SampledStatTest, AvgOfNoRecordingIsNaNAsKafkas) {
  SampledStat avg(Kind::kAvg, SampleConfig{});
  EXPECT_TRUE(std::isnan(avg.Measure(0)));
  avg.Record(1.0, 0);
  avg.Record(0.0, kSecond);
  EXPECT_DOUBLE_EQ(avg.Measure(2 * kSecond), 0.5);
}

TEST(SampledStatTest, RateSpansAtLeastAllButOneSampleWindow) {
  SampledStat rate(Kind::kRate, SampleConfig{.num_samples = 2, .sample_window_ns = 30 * kSecond});
  rate.Record(60, 0);
  // 10 s elapsed, less than (samples - 1) full windows: Kafka's Rate adds the missing window.
  EXPECT_DOUBLE_EQ(rate.Measure(10 * kSecond), 60.0 / 40.0);
  // 45 s: one full window elapsed plus 15 s.
  EXPECT_DOUBLE_EQ(rate.Measure(45 * kSecond), 60.0 / 45.0);
}

TEST(SampledStatTest, SamplesOlderThanAllWindowsExpire) {
  SampledStat avg(Kind::kAvg, SampleConfig{.num_samples = 2, .sample_window_ns = 30 * kSecond});
  avg.Record(1.0, 0);
  avg.Record(0.0, 40 * kSecond);  // a second sample
  EXPECT_DOUBLE_EQ(avg.Measure(50 * kSecond), 0.5);
  EXPECT_DOUBLE_EQ(avg.Measure(61 * kSecond), 0.0) << "the first sample is 61 s old: gone";
  SampledStat count(Kind::kWindowedCount, SampleConfig{});
  count.Record(123, 0);
  count.Record(456, 0);
  EXPECT_DOUBLE_EQ(count.Measure(30 * kSecond), 2.0 / 30.0) << "counts recordings, not values";
}

StateUpdaterMetrics NewMetrics() {
  return StateUpdaterMetrics("app-StreamThread-1-restore",
                             StateUpdaterMetricsConfig{.task_thread_id = "app-StreamThread-1"});
}

TEST(StateUpdaterMetricsTest, IdleRatioIsOneWhenNothingToRestore) {
  StateUpdaterMetrics m = NewMetrics();
  for (int i = 0; i < 3; ++i) {
    const TimeNs start = i * 100 * kMillisecond;
    m.BeginIteration(start);
    m.AddWait(100 * kMillisecond);  // the whole iteration waits for work
    m.RecordRestoreCall(0);
    m.EndIteration(start + 100 * kMillisecond, /*restoring_active=*/true, {}, {});
  }
  const std::vector<KafkaMetric> metrics = m.state().Measure(kSecond);
  EXPECT_DOUBLE_EQ(Value(metrics, "idle-ratio"), 1.0);
  EXPECT_DOUBLE_EQ(Value(metrics, "active-restore-ratio"), 0.0);
  EXPECT_DOUBLE_EQ(Value(metrics, "standby-update-ratio"), 0.0);
  EXPECT_DOUBLE_EQ(Value(metrics, "checkpoint-ratio"), 0.0);
  EXPECT_DOUBLE_EQ(Value(metrics, "restore-records-rate"), 0.0);
  EXPECT_DOUBLE_EQ(Value(metrics, "restore-call-rate"), 3.0 / 31.0);  // 1 s + a window
  EXPECT_DOUBLE_EQ(Value(metrics, "active-restoring-tasks"), 0.0);
  for (const KafkaMetric& k : metrics) {
    EXPECT_EQ(k.group, kStateUpdaterMetricsGroup) << k.Key();
    EXPECT_EQ(k.tags.at("thread-id"), "app-StreamThread-1-restore") << k.Key();
  }
}

TEST(StateUpdaterMetricsTest, RestoringTimeIsActiveOrStandbyByTheReadersMode) {
  StateUpdaterMetrics m = NewMetrics();
  m.BeginIteration(0);
  m.AddWait(25 * kMillisecond);
  m.AddCheckpoint(25 * kMillisecond);
  m.EndIteration(100 * kMillisecond, /*restoring_active=*/true, {.active_restoring = 2}, {});
  m.BeginIteration(100 * kMillisecond);
  m.EndIteration(200 * kMillisecond, /*restoring_active=*/false, {.standby_updating = 1}, {});
  const std::vector<KafkaMetric> metrics = m.state().Measure(kSecond);
  EXPECT_DOUBLE_EQ(Value(metrics, "idle-ratio"), 0.125);  // (0.25 + 0) / 2
  EXPECT_DOUBLE_EQ(Value(metrics, "checkpoint-ratio"), 0.125);
  EXPECT_DOUBLE_EQ(Value(metrics, "active-restore-ratio"), 0.25);  // (0.5 + 0) / 2
  EXPECT_DOUBLE_EQ(Value(metrics, "standby-update-ratio"), 0.5);   // (0 + 1) / 2
  EXPECT_DOUBLE_EQ(Value(metrics, "active-restoring-tasks"), 0.0) << "as of the last iteration";
  EXPECT_DOUBLE_EQ(Value(metrics, "standby-updating-tasks"), 1.0);
  EXPECT_DOUBLE_EQ(Value(metrics, "active-paused-tasks"), 0.0);
  EXPECT_DOUBLE_EQ(Value(metrics, "standby-paused-tasks"), 0.0);
}

TEST(StateUpdaterMetricsTest, AnIterationWithoutElapsedTimeRecordsNoRatio) {
  StateUpdaterMetrics m = NewMetrics();
  m.BeginIteration(5 * kSecond);
  m.EndIteration(5 * kSecond, true, {}, {});
  EXPECT_TRUE(std::isnan(Value(m.state().Measure(6 * kSecond), "idle-ratio")));
}

TEST(StateUpdaterMetricsTest, RestoreRecordsTotalCountsRestoredRecords) {
  StateUpdaterMetrics m = NewMetrics();
  const TaskIncarnation active{{0, 1}, 7};
  const TaskIncarnation standby{{0, 2}, 8};
  m.BeginIteration(0);
  m.RecordRestoreCall(40);
  m.EndIteration(kSecond, true, {.active_restoring = 1, .standby_updating = 1},
                 {{active, {.type = TaskType::kActive, .restored = 30, .announced = 100}},
                  {standby, {.type = TaskType::kStandby, .restored = 10}}});
  const std::vector<KafkaMetric> metrics = m.state().Measure(kSecond);
  EXPECT_DOUBLE_EQ(Value(metrics, "restore-total", "0_1"), 30);
  EXPECT_DOUBLE_EQ(Value(metrics, "restore-rate", "0_1"), 30.0 / 30.0);  // at 1 s: 0 s + 30 s
  EXPECT_DOUBLE_EQ(Value(metrics, "restore-remaining-records-total", "0_1"), 70);
  EXPECT_DOUBLE_EQ(Value(metrics, "update-total", "0_2"), 10);
  EXPECT_FALSE(Has(metrics, "restore-total", "0_2")) << "a standby updates, it does not restore";
  EXPECT_FALSE(Has(metrics, "update-total", "0_1"));
  EXPECT_DOUBLE_EQ(Value(metrics, "restore-records-rate"), 40.0 / 31.0);  // recorded at 0 s
  for (const KafkaMetric& k : metrics) {
    if (k.group != kTaskMetricsGroup) continue;
    EXPECT_EQ(k.tags.at("thread-id"), "app-StreamThread-1") << "made on the stream thread";
  }
}

TEST(StateUpdaterMetricsTest, TaskRestoreRemainingRecordsFallsToZero) {
  StateUpdaterMetrics m = NewMetrics();
  const TaskIncarnation who{{0, 0}, 1};
  for (int64_t restored : {0, 40, 100}) {
    m.BeginIteration(restored * kMillisecond);
    m.EndIteration(restored * kMillisecond + kMillisecond, true, {.active_restoring = 1},
                   {{who, {.type = TaskType::kActive, .restored = restored, .announced = 100}}});
    EXPECT_DOUBLE_EQ(
        Value(m.state().Measure(kSecond), "restore-remaining-records-total", "0_0"),
        static_cast<double>(100 - restored));
  }
}

TEST(StateUpdaterMetricsTest, ANewIncarnationStartsFromZeroAndAGoneTaskHasNoMetrics) {
  StateUpdaterMetrics m = NewMetrics();
  m.BeginIteration(0);
  m.EndIteration(kSecond, true, {},
                 {{{{0, 3}, 1}, {.type = TaskType::kActive, .restored = 50, .announced = 50}}});
  m.BeginIteration(kSecond);
  m.EndIteration(2 * kSecond, true, {},
                 {{{{0, 3}, 2}, {.type = TaskType::kActive, .restored = 5, .announced = 9}}});
  std::vector<KafkaMetric> metrics = m.state().Measure(2 * kSecond);
  EXPECT_DOUBLE_EQ(Value(metrics, "restore-total", "0_3"), 5);
  EXPECT_DOUBLE_EQ(Value(metrics, "restore-remaining-records-total", "0_3"), 4);
  m.BeginIteration(2 * kSecond);
  m.EndIteration(3 * kSecond, true, {}, {});  // its changelogs were unregistered
  EXPECT_FALSE(Has(m.state().Measure(3 * kSecond), "restore-total", "0_3"));
}

}  // namespace
}  // namespace restoresim
