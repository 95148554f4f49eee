// ChangelogReader's listener calls against the fake broker, under the simulator, as Kafka's
// StoreChangelogReader makes them: the restore listener also for a changelog with nothing to
// restore; a checkpoint past the changelog's end restored from and found out of range
// (corruption, as Kafka's restore consumer with auto.offset.reset=none); the standby update
// listener (KIP-988) with its suspend reasons, and silent at shutdown.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/runtime/changelog_reader.h"
#include "core/runtime/runtime_observer.h"
#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using ::testing::ElementsAre;
using testing::Changelog;

// Both listeners, into one list of calls.
struct Recorder : StateRestoreListener, StandbyUpdateListener {
  std::vector<std::string> calls;
  void OnRestoreStart(const TopicPartition& tp, std::string_view, int64_t start,
                      int64_t end) override {
    calls.push_back(fmt::format("start {} {}..{}", tp.ToString(), start, end));
  }
  void OnBatchRestored(const TopicPartition& tp, std::string_view, int64_t, int64_t) override {
    calls.push_back("batch " + tp.ToString());
  }
  void OnRestoreEnd(const TopicPartition& tp, std::string_view, int64_t total) override {
    calls.push_back(fmt::format("end {} {}", tp.ToString(), total));
  }
  void OnRestoreSuspended(const TopicPartition& tp, std::string_view, int64_t total) override {
    calls.push_back(fmt::format("suspended {} {}", tp.ToString(), total));
  }
  void OnUpdateStart(const TopicPartition& tp, std::string_view store, int64_t start) override {
    calls.push_back(fmt::format("update start {} {} {}", tp.ToString(), store, start));
  }
  void OnBatchLoaded(const TopicPartition& tp, std::string_view, const TaskId& task,
                     int64_t batch_end, int64_t size, int64_t current_end) override {
    calls.push_back(fmt::format("loaded {} {} ..{} +{} end {}", tp.ToString(), task.ToString(),
                                batch_end, size, current_end));
  }
  void OnUpdateSuspended(const TopicPartition& tp, std::string_view, int64_t store_offset,
                         int64_t current_end, SuspendReason reason) override {
    calls.push_back(fmt::format("update suspended {} at {} end {} {}", tp.ToString(),
                                store_offset, current_end, SuspendReasonName(reason)));
  }
};

struct World : testing::RuntimeWorld {
  std::unique_ptr<RestoreConsumer> consumer;
  std::unique_ptr<Admin> admin;
  Recorder recorder;
  std::unique_ptr<ChangelogReader> reader;

  explicit World(int32_t max_poll_records = 1000) : RuntimeWorld(/*faults=*/false) {
    consumer = broker.NewRestoreConsumer(
        {.client_id = "restore", .max_poll_records = max_poll_records});
    admin = broker.NewAdmin("admin");
    reader = std::make_unique<ChangelogReader>(
        *consumer, *admin, &recorder, ChangelogReaderConfig{.standby_listener = &recorder});
  }

  // A state manager for `partition` whose store was checkpointed at `offset` (none: fresh).
  std::unique_ptr<StateManager> Task(int32_t partition, TaskType type,
                                     std::optional<int64_t> offset = std::nullopt) {
    if (offset) {  // the store holds the changelog below the checkpoint (as far as it goes)
      auto before = NewStateManager(partition, type);
      KeyValueStore* store = before->StoreForChangelog(Changelog(partition));
      const int64_t end = *broker.EndOffset(Changelog(partition));
      const absl::StatusOr<std::vector<ConsumerRecord>> log =
          broker.ReadLog(Changelog(partition), 0, static_cast<size_t>(std::min(*offset, end)));
      RS_CHECK(log.ok());
      for (const ConsumerRecord& r : *log) {
        RS_CHECK((r.value ? store->Put(r.key, *r.value) : store->Delete(r.key)).ok());
      }
      before->Advance(Changelog(partition), *offset);
      RS_CHECK(before->Close(/*clean=*/true).ok());
    }
    return NewStateManager(partition, type);
  }

  TaskIncarnation Register(StateManager& sm) {
    const TaskIncarnation who{sm.id(), next_incarnation++};
    for (const TopicPartition& tp : sm.ChangelogPartitions()) reader->Register(tp, &sm, who);
    return who;
  }

  std::map<TaskIncarnation, std::set<TopicPartition>> Steps(int n) {
    std::map<TaskIncarnation, std::set<TopicPartition>> corrupted;
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<RestoreStep> step = reader->Restore();
      RS_CHECK(step.ok(), "restore step: {}", std::string(step.status().message()));
      for (auto& [who, tps] : step->corrupted) corrupted[who].insert(tps.begin(), tps.end());
    }
    return corrupted;
  }
};

void ExpectOk(const sim::TestRun& r) { ASSERT_TRUE(r.outcome.ok()) << r.outcome.message; }

TEST(ChangelogReaderListenersTest, EmptyChangelogFiresStartAndEnd) {
  ExpectOk(sim::RunUnderSim([&]() {
    World w;
    auto task = w.Task(1, TaskType::kActive);
    w.Register(*task);
    w.Steps(1);
    EXPECT_TRUE(w.reader->Completed().contains(Changelog(1)));
    EXPECT_THAT(w.recorder.calls, ElementsAre("start app-counts-changelog-1 0..0",
                                              "end app-counts-changelog-1 0"));
  }));
}

TEST(ChangelogReaderListenersTest, CheckpointAtTheEndFiresStartAndEndWithNothingRestored) {
  ExpectOk(sim::RunUnderSim([&]() {
    World w;
    w.WriteChangelog(2, 20);
    auto task = w.Task(2, TaskType::kActive, 20);
    w.Register(*task);
    w.Steps(1);
    EXPECT_TRUE(w.reader->Completed().contains(Changelog(2)));
    EXPECT_THAT(w.recorder.calls, ElementsAre("start app-counts-changelog-2 20..20",
                                              "end app-counts-changelog-2 0"));
    EXPECT_EQ(w.reader->total_restored(), 0);
  }));
}

// Kafka seeks to the checkpoint, tells the listener it starts (start offset past the end), and
// its first fetch is out of range: TaskCorruptedException; the corrupted task's changelogs are
// unregistered, which suspends the restoration.
TEST(ChangelogReaderListenersTest, CheckpointPastTheEndIsCorruptedByTheOutOfRangeFetch) {
  ExpectOk(sim::RunUnderSim([&]() {
    World w;
    w.WriteChangelog(0, 10);
    auto task = w.Task(0, TaskType::kActive, 15);
    const TaskIncarnation who = w.Register(*task);
    const auto corrupted = w.Steps(1);
    ASSERT_EQ(corrupted.size(), 1u);
    EXPECT_EQ(corrupted.begin()->first, who);
    EXPECT_THAT(corrupted.begin()->second, ElementsAre(Changelog(0)));
    EXPECT_FALSE(w.reader->IsRegistered(Changelog(0)));
    EXPECT_THAT(w.recorder.calls, ElementsAre("start app-counts-changelog-0 15..10",
                                              "suspended app-counts-changelog-0 0"));
  }));
}

TEST(ChangelogReaderListenersTest, StandbyListenerToldStartBatchesAndMigratedWhenClosed) {
  ExpectOk(sim::RunUnderSim([&]() {
    World w(/*max_poll_records=*/8);
    w.WriteChangelog(3, 12);
    auto standby = w.Task(3, TaskType::kStandby, 2);
    w.Register(*standby);
    w.Steps(3);
    w.reader->Unregister({Changelog(3)});
    EXPECT_THAT(w.recorder.calls,
                ElementsAre("update start app-counts-changelog-3 counts 2",
                            "loaded app-counts-changelog-3 0_3 ..9 +8 end -1",
                            "loaded app-counts-changelog-3 0_3 ..11 +2 end -1",
                            "update suspended app-counts-changelog-3 at 11 end -1 MIGRATED"));
    EXPECT_EQ(w.reader->standby_updated(), 10);
  }));
}

TEST(ChangelogReaderListenersTest, StandbyListenerToldPromotedWhenRecycledToActive) {
  ExpectOk(sim::RunUnderSim([&]() {
    World w;
    w.WriteChangelog(1, 5);
    auto standby = w.Task(1, TaskType::kStandby);
    w.Register(*standby);
    w.Steps(2);
    w.reader->Unregister({Changelog(1)}, UnregisterReason::kPromoted);
    ASSERT_FALSE(w.recorder.calls.empty());
    EXPECT_EQ(w.recorder.calls.back(),
              "update suspended app-counts-changelog-1 at 4 end -1 PROMOTED");
  }));
}

TEST(ChangelogReaderListenersTest, StandbyListenerToldNothingAtShutdownNorBeforeItStarted) {
  ExpectOk(sim::RunUnderSim([&]() {
    World w;
    w.WriteChangelog(1, 5);
    auto updating = w.Task(1, TaskType::kStandby);
    auto unprepared = w.Task(2, TaskType::kStandby);
    w.Register(*updating);
    w.Steps(2);
    w.Register(*unprepared);  // registered, never prepared: never started
    const size_t before = w.recorder.calls.size();
    w.reader->Unregister({Changelog(2)}, UnregisterReason::kMigrated);
    // As its restore thread does as it stops (the oracle allows the silence only then).
    RS_OBSERVE(OnRestoreShutdownRequested, "changelog-reader");
    w.reader->Unregister({Changelog(1)}, UnregisterReason::kShutdown);
    EXPECT_EQ(w.recorder.calls.size(), before);
    EXPECT_FALSE(w.reader->IsRegistered(Changelog(1)));
  }));
}

}  // namespace
}  // namespace restoresim
