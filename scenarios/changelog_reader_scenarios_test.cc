// ChangelogReader against the fake broker, under the simulator: actives restore to their end
// offsets, standbys wait for actives and then follow the log, truncation below a checkpoint is
// corruption of the owning incarnation, and the listener sees start -> batches -> end or
// suspended.
#include "core/runtime/changelog_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using ::testing::ElementsAre;

struct RecordingListener : StateRestoreListener {
  std::vector<std::string> events;
  void OnRestoreStart(const TopicPartition& tp, std::string_view, int64_t start,
                      int64_t end) override {
    events.push_back(fmt::format("start {} {}..{}", tp.ToString(), start, end));
  }
  void OnBatchRestored(const TopicPartition& tp, std::string_view, int64_t, int64_t) override {
    if (events.empty() || events.back() != "batch " + tp.ToString()) {
      events.push_back("batch " + tp.ToString());
    }
  }
  void OnRestoreEnd(const TopicPartition& tp, std::string_view, int64_t total) override {
    events.push_back(fmt::format("end {} {}", tp.ToString(), total));
  }
  void OnRestoreSuspended(const TopicPartition& tp, std::string_view, int64_t) override {
    events.push_back("suspended " + tp.ToString());
  }
};

// A runtime world (broker, file system) plus a changelog reader over its restore consumer.
struct World : testing::RuntimeWorld {
  std::unique_ptr<RestoreConsumer> consumer;
  std::unique_ptr<Admin> admin;
  RecordingListener listener;
  std::unique_ptr<ChangelogReader> reader;

  explicit World(bool faults, int32_t max_poll_records = 1000) : RuntimeWorld(faults) {
    consumer = broker.NewRestoreConsumer(
        {.client_id = "restore", .max_poll_records = max_poll_records});
    admin = broker.NewAdmin("admin");
    reader = std::make_unique<ChangelogReader>(*consumer, *admin, &listener);
  }

  std::unique_ptr<StateManager> Task(int32_t partition, TaskType type) {
    return NewStateManager(partition, type);
  }

  void Register(StateManager& sm) {
    const TaskIncarnation who{sm.id(), next_incarnation++};
    for (const TopicPartition& tp : sm.ChangelogPartitions()) reader->Register(tp, &sm, who);
  }

  void Write(int32_t partition, int n, int start = 0) { WriteChangelog(partition, n, start); }

  // Runs restore steps until `done` or a step budget; returns the corruption seen.
  std::map<TaskIncarnation, std::set<TopicPartition>> RunUntil(const std::function<bool()>& done,
                                                               int steps_max = 500) {
    std::map<TaskIncarnation, std::set<TopicPartition>> corrupted;
    for (int i = 0; i < steps_max && !done(); ++i) {
      absl::StatusOr<RestoreStep> step = reader->Restore();
      RS_CHECK(step.ok(), "restore step: {}", std::string(step.status().message()));
      for (auto& [who, tps] : step->corrupted) corrupted[who].insert(tps.begin(), tps.end());
    }
    return corrupted;
  }
};

using testing::Changelog;

void ExpectOk(const sim::TestRun& r) { ASSERT_TRUE(r.outcome.ok()) << r.outcome.message; }

TEST(ChangelogReaderTest, ActiveRestoresExactlyToTheEndOffset) {
  for (bool faults : {false, true}) {
    for (uint64_t seed = 0; seed < 10; ++seed) {
      ExpectOk(sim::RunUnderSim([&]() {
        World w(faults);
        w.Write(1, 30);
        auto task = w.Task(1, TaskType::kActive);
        w.Register(*task);
        EXPECT_EQ(w.reader->mode(), ReaderMode::kActiveRestoring);
        w.RunUntil([&]() { return w.reader->Completed().contains(Changelog(1)); });
        ASSERT_TRUE(w.reader->Completed().contains(Changelog(1)));
        EXPECT_EQ(*task->StoreForChangelog(Changelog(1))->ReadAll(), w.Fold(1));
        EXPECT_EQ(task->pending_offsets().at(Changelog(1)), 30);
        EXPECT_EQ(w.reader->mode(), ReaderMode::kStandbyUpdating);
        EXPECT_EQ(w.listener.events.front(), "start app-counts-changelog-1 0..30");
        EXPECT_EQ(w.listener.events.back(), "end app-counts-changelog-1 30");
      }, seed));
    }
  }
}

TEST(ChangelogReaderTest, ActiveStopsAtTheEndOffsetLearnedAtRegistration) {
  ExpectOk(sim::RunUnderSim([&]() {
    World w(false, /*max_poll_records=*/4);
    w.Write(1, 30);
    const auto target = w.Fold(1);
    auto task = w.Task(1, TaskType::kActive);
    w.Register(*task);
    ASSERT_TRUE(w.reader->Restore().ok());  // learns end offset 30, restores 4
    ASSERT_FALSE(w.reader->Completed().contains(Changelog(1)));
    w.Write(1, 20, 30);  // later writes (e.g. a zombie's) are not its target
    w.RunUntil([&]() { return w.reader->Completed().contains(Changelog(1)); });
    EXPECT_EQ(*task->StoreForChangelog(Changelog(1))->ReadAll(), target);
    EXPECT_EQ(task->pending_offsets().at(Changelog(1)), 30);
  }));
}

TEST(ChangelogReaderTest, RestorationStartsAtTheCheckpointAndSkipsWhenUpToDate) {
  ExpectOk(sim::RunUnderSim([&]() {
    World w(false);
    w.Write(2, 20);
    {
      auto task = w.Task(2, TaskType::kActive);  // restore the first 12, checkpoint at 12
      auto log = *w.broker.ReadLog(Changelog(2), 0, 12);
      for (const ConsumerRecord& r : log) {
        KeyValueStore* store = task->StoreForChangelog(Changelog(2));
        ASSERT_TRUE((r.value ? store->Put(r.key, *r.value) : store->Delete(r.key)).ok());
      }
      task->Advance(Changelog(2), 12);
      ASSERT_TRUE(task->Close(/*clean=*/true).ok());
    }
    auto task = w.Task(2, TaskType::kActive);
    EXPECT_EQ(task->StartOffset(Changelog(2)), 12);
    w.Register(*task);
    w.RunUntil([&]() { return w.reader->Completed().contains(Changelog(2)); });
    EXPECT_EQ(*task->StoreForChangelog(Changelog(2))->ReadAll(), w.Fold(2));
    EXPECT_THAT(w.listener.events, ElementsAre("start app-counts-changelog-2 12..20",
                                               "batch app-counts-changelog-2",
                                               "end app-counts-changelog-2 8"));
    // Up to date: completes at once; the listener hears start and end (Kafka's
    // StoreChangelogReader tells it of every prepared changelog), with 0 records.
    ASSERT_TRUE(task->Close(true).ok());
    w.reader->Unregister({Changelog(2)});
    w.listener.events.clear();
    auto again = w.Task(2, TaskType::kActive);
    w.Register(*again);
    w.RunUntil([&]() { return w.reader->Completed().contains(Changelog(2)); }, 3);
    EXPECT_TRUE(w.reader->Completed().contains(Changelog(2)));
    EXPECT_THAT(w.listener.events, ElementsAre("start app-counts-changelog-2 20..20",
                                               "end app-counts-changelog-2 0"));
  }));
}

TEST(ChangelogReaderTest, StandbysWaitForActivesThenFollowTheLog) {
  for (uint64_t seed = 0; seed < 10; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      World w(false);
      w.Write(0, 40);
      w.Write(3, 15);
      auto active = w.Task(0, TaskType::kActive);
      auto standby = w.Task(3, TaskType::kStandby);
      w.Register(*standby);
      w.Register(*active);
      while (w.reader->mode() == ReaderMode::kActiveRestoring) {
        ASSERT_TRUE(w.reader->Restore().ok());
        EXPECT_EQ(standby->StoreForChangelog(Changelog(3))->NumEntries(), 0u)
            << "a standby updated while an active was restoring";
      }
      w.RunUntil([&]() { return standby->pending_offsets().contains(Changelog(3)) &&
                                standby->pending_offsets().at(Changelog(3)) == 15; });
      EXPECT_EQ(*standby->StoreForChangelog(Changelog(3))->ReadAll(), w.Fold(3));
      w.Write(3, 10, 15);  // the active elsewhere keeps writing: the standby follows
      w.RunUntil([&]() { return standby->pending_offsets().at(Changelog(3)) == 25; });
      EXPECT_EQ(*standby->StoreForChangelog(Changelog(3))->ReadAll(), w.Fold(3));
      EXPECT_FALSE(w.reader->Completed().contains(Changelog(3))) << "standbys never complete";
    }, seed));
  }
}

TEST(ChangelogReaderTest, TruncationBelowTheCheckpointIsCorruptionOfTheOwner) {
  ExpectOk(sim::RunUnderSim([&]() {
    World w(false);
    w.Write(1, 30);
    w.Write(2, 30);
    {
      auto task = w.Task(1, TaskType::kActive);
      w.RestoreInto(*task, 1, 5);  // 5 records were restored and checkpointed
      ASSERT_TRUE(task->Close(true).ok());
    }
    ASSERT_TRUE(w.broker.DeleteRecords({{Changelog(1), 20}}).ok());  // retention moved on
    auto corrupt = w.Task(1, TaskType::kActive);
    auto healthy = w.Task(2, TaskType::kActive);
    w.Register(*corrupt);
    w.Register(*healthy);
    const auto corrupted =
        w.RunUntil([&]() { return w.reader->Completed().contains(Changelog(2)); });
    ASSERT_EQ(corrupted.size(), 1u);
    EXPECT_EQ(corrupted.begin()->first.id, (TaskId{0, 1}));
    EXPECT_EQ(corrupted.begin()->second, std::set<TopicPartition>{Changelog(1)});
    EXPECT_FALSE(w.reader->IsRegistered(Changelog(1))) << "unregistered so the rest goes on";
    EXPECT_EQ(*healthy->StoreForChangelog(Changelog(2))->ReadAll(), w.Fold(2));
  }));
}

TEST(ChangelogReaderTest, UnregisteringAnIncompleteActiveReportsSuspended) {
  ExpectOk(sim::RunUnderSim([&]() {
    World w(false);
    w.Write(1, 3000);
    auto task = w.Task(1, TaskType::kActive);
    w.Register(*task);
    ASSERT_TRUE(w.reader->Restore().ok());
    ASSERT_TRUE(w.reader->Restore().ok());
    ASSERT_FALSE(w.reader->Completed().contains(Changelog(1)));
    w.reader->Unregister({Changelog(1)});
    w.reader->Unregister({Changelog(1)});  // idempotent
    EXPECT_EQ(w.listener.events.front(), "start app-counts-changelog-1 0..3000");
    EXPECT_EQ(w.listener.events.back(), "suspended app-counts-changelog-1");
    EXPECT_FALSE(w.reader->IsRegistered(Changelog(1)));
  }));
}

TEST(ChangelogReaderTest, RegisteringAChangelogTwiceIsCaught) {
  sim::TestRun r = sim::RunUnderSim([&]() {
    World w(false);
    w.observing.reset();  // the oracle would stop the second store opening first
    auto a = w.Task(1, TaskType::kActive);
    auto b = w.Task(1, TaskType::kStandby);
    w.Register(*a);
    w.Register(*b);
  });
  EXPECT_EQ(r.outcome.kind, sim::RunOutcome::Kind::kFailed);
  EXPECT_THAT(r.outcome.message, ::testing::HasSubstr("registered twice"));
}

// A store whose `fail_at`-th ApplyBatch fails (a disk error); everything else is forwarded.
class FailingOnceStore final : public KeyValueStore {
 public:
  FailingOnceStore(std::unique_ptr<KeyValueStore> base, int fail_at)
      : base_(std::move(base)), fail_at_(fail_at) {}
  const std::string& name() const override { return base_->name(); }
  absl::Status Put(std::string_view key, std::string_view value) override {
    return base_->Put(key, value);
  }
  absl::Status Delete(std::string_view key) override { return base_->Delete(key); }
  absl::StatusOr<std::optional<std::string>> Get(std::string_view key) override {
    return base_->Get(key);
  }
  absl::Status ApplyBatch(const std::vector<KeyValueWrite>& writes) override {
    if (++batches_ == fail_at_) return absl::UnavailableError("disk error (test)");
    return base_->ApplyBatch(writes);
  }
  absl::Status Flush() override { return base_->Flush(); }
  absl::Status Commit(int64_t changelog_offset) override {
    return base_->Commit(changelog_offset);
  }
  std::optional<int64_t> CommittedOffset() const override { return base_->CommittedOffset(); }
  absl::Status Close() override { return base_->Close(); }
  absl::StatusOr<std::map<std::string, std::string>> ReadAll() override {
    return base_->ReadAll();
  }
  uint64_t NumEntries() const override { return base_->NumEntries(); }
  bool IsOpen() const override { return base_->IsOpen(); }

 private:
  std::unique_ptr<KeyValueStore> base_;
  const int fail_at_;
  int batches_ = 0;
};

// Task 0_1's state manager, stores registered, whose store fails its fail_at-th batch write.
std::unique_ptr<StateManager> FailingOnceStateManager(World& w, int fail_at) {
  StateManagerConfig c;
  c.application_id = "app";
  c.task_dir = "/state/app/0_1";
  c.fs = &w.fs;
  c.open_store = [&w, fail_at](const std::string& dir, const std::string& name)
      -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
    absl::StatusOr<std::unique_ptr<KeyValueStore>> base = w.LogStoreOpener()(dir, name);
    if (!base.ok()) return base.status();
    return std::unique_ptr<KeyValueStore>(
        std::make_unique<FailingOnceStore>(std::move(*base), fail_at));
  };
  auto sm = std::make_unique<StateManager>(TaskId{0, 1}, TaskType::kActive, std::move(c));
  RS_CHECK(sm->RegisterStores().ok(), "registering 0_1's stores");
  return sm;
}

// Regression (found by scenario.crash_restart_with_state_dir): a batch whose store write
// failed was skipped. The restore consumer had already moved past it, so the next step read
// on from there and completion took the consumer's position for restored data: the "restored"
// store lacked the batch. The reader now seeks back to what the store holds. (A retryable
// write error: the task is stalled for that step, not failed; a step fails no more on it.)
TEST(ChangelogReaderTest, ABatchWhoseStoreWriteFailedIsFetchedAgain) {
  ExpectOk(sim::RunUnderSim([&]() {
    World w(false, /*max_poll_records=*/4);
    w.Write(1, 30);  // 8 batches of at most 4: the last one (28, 29) fails once
    std::unique_ptr<StateManager> sm = FailingOnceStateManager(w, /*fail_at=*/8);
    w.Register(*sm);
    int stalled_steps = 0;
    for (int i = 0; i < 100 && !w.reader->Completed().contains(Changelog(1)); ++i) {
      absl::StatusOr<RestoreStep> step = w.reader->Restore();
      ASSERT_TRUE(step.ok()) << step.status();
      EXPECT_TRUE(step->failed.empty()) << "a retryable store error fails no task";
      if (!step->stalled.empty()) ++stalled_steps;
    }
    EXPECT_EQ(stalled_steps, 1);
    ASSERT_TRUE(w.reader->Completed().contains(Changelog(1)));
    EXPECT_EQ(*sm->StoreForChangelog(Changelog(1))->ReadAll(), w.Fold(1));
    EXPECT_EQ(sm->pending_offsets().at(Changelog(1)), 30);
  }));
}

// A step that finds corruption and then meets a store error (a write of another changelog in
// the same poll) must not lose the report, or the corrupted task would stay in the restore
// thread forever (found in review; a step that failed used to keep it for the next one).
TEST(ChangelogReaderTest, CorruptionFoundByAFailingStepIsReportedByTheNext) {
  ExpectOk(sim::RunUnderSim([&]() {
    World w(false);
    w.Write(1, 10);
    w.Write(2, 20);
    {  // 0_2 checkpointed at 3, then its log truncated to 10: out of range
      auto old = w.Task(2, TaskType::kActive);
      w.RestoreInto(*old, 2, 3);
      ASSERT_TRUE(old->Close(/*clean=*/true).ok());
      old->Clear();
    }
    ASSERT_TRUE(w.broker.DeleteRecords({{Changelog(2), 10}}).ok());
    std::unique_ptr<StateManager> failing = FailingOnceStateManager(w, /*fail_at=*/1);
    auto corrupt = w.Task(2, TaskType::kActive);
    w.Register(*failing);
    w.Register(*corrupt);
    int stalled_steps = 0;
    std::map<TaskIncarnation, std::set<TopicPartition>> reported;
    for (int i = 0; i < 50 && reported.empty(); ++i) {
      absl::StatusOr<RestoreStep> step = w.reader->Restore();
      ASSERT_TRUE(step.ok()) << step.status();
      if (!step->stalled.empty()) ++stalled_steps;
      reported = step->corrupted;
    }
    EXPECT_LE(stalled_steps, 1);
    ASSERT_EQ(reported.size(), 1u);
    EXPECT_EQ(reported.begin()->first.id, (TaskId{0, 2}));
    EXPECT_THAT(reported.begin()->second, ::testing::ElementsAre(Changelog(2)));
  }));
}

}  // namespace
}  // namespace restoresim
