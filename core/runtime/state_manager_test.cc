// StateManager: checkpoints never ahead of flushed data, the "materialise before clear" hazard,
// the deferred type conversion, exactly-once wiping, and unreadable checkpoints.
#include "core/runtime/state_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>

#include "core/port/posix_file_system.h"
#include "core/runtime/count_topology.h"
#include "core/state/log_store.h"

namespace restoresim {
namespace {

using ::testing::HasSubstr;

class StateManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/restoresim_sm_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  StateManagerConfig Config(bool eos = false) {
    StateManagerConfig c;
    c.application_id = "app";
    c.task_dir = dir_ + "/app/0_1";
    c.exactly_once = eos;
    c.fs = PosixFileSystem::Default();
    c.open_store = [](const std::string& dir, const std::string& name)
        -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
      auto store = LogStore::Open(*PosixFileSystem::Default(), dir, name);
      if (!store.ok()) return store.status();
      return std::unique_ptr<KeyValueStore>(std::move(*store));
    };
    return c;
  }

  const TopicPartition changelog_{"app-counts-changelog", 1};
  std::string dir_;
};

TEST_F(StateManagerTest, CheckpointNamesOnlyFlushedOffsets) {
  StateManager sm({0, 1}, TaskType::kActive, Config());
  ASSERT_TRUE(sm.RegisterStores().ok());
  EXPECT_THAT(sm.checkpoint_note(), HasSubstr("no checkpoint"));
  EXPECT_EQ(sm.StartOffset(changelog_), std::nullopt);
  ASSERT_TRUE(sm.StoreForChangelog(changelog_)->Put("k", "1").ok());
  sm.Advance(changelog_, 10);
  ASSERT_TRUE(sm.Checkpoint().ok());  // nothing flushed yet: an empty checkpoint
  EXPECT_EQ(*ReadCheckpoint(*PosixFileSystem::Default(), sm.checkpoint_path()),
            CheckpointOffsets{});
  ASSERT_TRUE(sm.Flush().ok());
  sm.Advance(changelog_, 15);  // newer, not flushed
  ASSERT_TRUE(sm.Checkpoint().ok());
  EXPECT_EQ(*ReadCheckpoint(*PosixFileSystem::Default(), sm.checkpoint_path()),
            (CheckpointOffsets{{changelog_, 10}}));
  ASSERT_TRUE(sm.Close(/*clean=*/true).ok());  // flushes and checkpoints 15

  StateManager again({0, 1}, TaskType::kActive, Config());
  ASSERT_TRUE(again.RegisterStores().ok());
  EXPECT_EQ(again.StartOffset(changelog_), 15);
  EXPECT_EQ(*again.StoreForChangelog(changelog_)->Get("k"), std::optional<std::string>("1"));
}

// Seed of issue 25: a store directory older than its checkpoint (here: a copy taken at an
// earlier commit put back, as a restored backup or a lost directory update would) was served
// as complete, and the records between its contents and the checkpoint were never restored.
// Its own offset now tells: the claim is withdrawn, the store wiped and restored from 0.
TEST_F(StateManagerTest, AStoreBehindItsCheckpointIsWipedAndRestoredFromTheBeginning) {
  const std::string store_dir = dir_ + "/app/0_1/counts";
  const std::string copy = dir_ + "/stale-counts";
  {
    StateManager sm({0, 1}, TaskType::kActive, Config());
    ASSERT_TRUE(sm.RegisterStores().ok());
    ASSERT_TRUE(sm.StoreForChangelog(changelog_)->Put("k", "1").ok());
    sm.Advance(changelog_, 4);
    ASSERT_TRUE(sm.Flush().ok());
    std::filesystem::copy(store_dir, copy);
    ASSERT_TRUE(sm.StoreForChangelog(changelog_)->Put("k", "2").ok());
    sm.Advance(changelog_, 7);
    ASSERT_TRUE(sm.Close(/*clean=*/true).ok());  // checkpoint: 7
  }
  std::filesystem::remove_all(store_dir);
  std::filesystem::rename(copy, store_dir);
  StateManager sm({0, 1}, TaskType::kActive, Config());
  ASSERT_TRUE(sm.RegisterStores().ok());
  EXPECT_EQ(sm.StartOffset(changelog_), std::nullopt) << "restored from the beginning";
  EXPECT_EQ(sm.StoreForChangelog(changelog_)->NumEntries(), 0u) << "wiped";
  EXPECT_THAT(sm.checkpoint_note(), HasSubstr("reaches only offset 4"));
  EXPECT_EQ(*ReadCheckpoint(*PosixFileSystem::Default(), sm.checkpoint_path()),
            CheckpointOffsets{})
      << "the claim is withdrawn on disk";
  ASSERT_TRUE(sm.Close(/*clean=*/false).ok());
}

// A store at or ahead of its checkpoint, or one that recorded no offset (state directories of
// earlier releases), keeps its data and restores from the checkpoint.
TEST_F(StateManagerTest, AStoreAtOrAheadOfItsCheckpointIsKept) {
  {
    StateManager sm({0, 1}, TaskType::kActive, Config());
    ASSERT_TRUE(sm.RegisterStores().ok());
    ASSERT_TRUE(sm.StoreForChangelog(changelog_)->Put("k", "1").ok());
    sm.Advance(changelog_, 4);
    ASSERT_TRUE(sm.Close(/*clean=*/true).ok());
  }
  StateManager sm({0, 1}, TaskType::kActive, Config());
  ASSERT_TRUE(sm.RegisterStores().ok());
  EXPECT_EQ(sm.StartOffset(changelog_), 4);
  EXPECT_EQ(sm.StoreForChangelog(changelog_)->CommittedOffset(), 4);
  EXPECT_EQ(*sm.StoreForChangelog(changelog_)->Get("k"), std::optional<std::string>("1"));
  ASSERT_TRUE(sm.StoreForChangelog(changelog_)->Put("k", "2").ok());
  ASSERT_TRUE(sm.StoreForChangelog(changelog_)->Commit(9).ok());  // ahead of the checkpoint
  ASSERT_TRUE(sm.Close(/*clean=*/false).ok());
  StateManager again({0, 1}, TaskType::kActive, Config());
  ASSERT_TRUE(again.RegisterStores().ok());
  EXPECT_EQ(again.StartOffset(changelog_), 4);
  EXPECT_EQ(*again.StoreForChangelog(changelog_)->Get("k"), std::optional<std::string>("2"));
  ASSERT_TRUE(again.Close(/*clean=*/false).ok());
}

// Under exactly-once the checkpoint is deleted before processing; if it comes back (a lost
// directory update of its deletion), the store's offset past it tells that the store holds
// writes made after it, perhaps of transactions that aborted: wiped, not trusted.
TEST_F(StateManagerTest, UnderExactlyOnceAStorePastItsCheckpointIsWiped) {
  {
    StateManager sm({0, 1}, TaskType::kActive, Config(/*eos=*/true));
    ASSERT_TRUE(sm.RegisterStores().ok());
    ASSERT_TRUE(sm.StoreForChangelog(changelog_)->Put("k", "1").ok());
    sm.Advance(changelog_, 4);
    ASSERT_TRUE(sm.Close(/*clean=*/true).ok());  // checkpoint 4, store at 4
  }
  {
    StateManager sm({0, 1}, TaskType::kActive, Config(/*eos=*/true));
    ASSERT_TRUE(sm.RegisterStores().ok());  // the checkpoint is deleted for processing
    EXPECT_EQ(sm.StartOffset(changelog_), 4);
    ASSERT_TRUE(sm.StoreForChangelog(changelog_)->Put("k", "uncommitted").ok());
    sm.Advance(changelog_, 9);
    ASSERT_TRUE(sm.Flush().ok());  // the store records 9
    ASSERT_TRUE(sm.Close(/*clean=*/false).ok());
  }
  // The deleted checkpoint comes back.
  ASSERT_TRUE(WriteCheckpoint(*PosixFileSystem::Default(), dir_ + "/app/0_1/.checkpoint",
                              {{changelog_, 4}})
                  .ok());
  StateManager sm({0, 1}, TaskType::kActive, Config(/*eos=*/true));
  ASSERT_TRUE(sm.RegisterStores().ok());
  EXPECT_EQ(sm.StartOffset(changelog_), std::nullopt);
  EXPECT_EQ(sm.StoreForChangelog(changelog_)->NumEntries(), 0u);
  EXPECT_THAT(sm.checkpoint_note(), HasSubstr("past the checkpoint, under exactly-once"));
  ASSERT_TRUE(sm.Close(/*clean=*/false).ok());
}

// Issue 25: a FIFO in place of the checkpoint hung the open for ever; a directory there was
// an I/O error retried every round for ever (and no checkpoint could be written over it).
// Either is now no claim, removed, and the next checkpoint is written.
TEST_F(StateManagerTest, ASpecialFileInPlaceOfTheCheckpointIsNoClaimAndGoes) {
  const std::string checkpoint = dir_ + "/app/0_1/.checkpoint";
  for (const bool fifo : {true, false}) {
    std::filesystem::remove_all(dir_ + "/app");
    std::filesystem::create_directories(dir_ + "/app/0_1");
    if (fifo) {
      ASSERT_EQ(mkfifo(checkpoint.c_str(), 0644), 0);
    } else {
      std::filesystem::create_directories(checkpoint + "/inside");
    }
    StateManager sm({0, 1}, TaskType::kActive, Config());
    ASSERT_TRUE(sm.RegisterStores().ok()) << (fifo ? "FIFO" : "directory");
    EXPECT_EQ(sm.StartOffset(changelog_), std::nullopt);
    EXPECT_THAT(sm.checkpoint_note(), HasSubstr("not a regular file"));
    EXPECT_FALSE(std::filesystem::exists(checkpoint));
    sm.Advance(changelog_, 3);
    ASSERT_TRUE(sm.Close(/*clean=*/true).ok());
    EXPECT_EQ(*ReadCheckpoint(*PosixFileSystem::Default(), checkpoint),
              (CheckpointOffsets{{changelog_, 3}}));
  }
}

// A file where the task directory should be is data loss (the task manager wipes and
// restores), and the wipe removes it.
TEST_F(StateManagerTest, AFileInPlaceOfTheTaskDirectoryIsDataLossAndTheWipeRemovesIt) {
  std::filesystem::create_directories(dir_ + "/app");
  std::ofstream(dir_ + "/app/0_1") << "not a directory";
  StateManager sm({0, 1}, TaskType::kActive, Config());
  const absl::Status s = sm.RegisterStores();
  ASSERT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  ASSERT_TRUE(sm.Wipe().ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/app/0_1"));
  ASSERT_TRUE(sm.RegisterStores().ok());
  ASSERT_TRUE(sm.Close(/*clean=*/false).ok());
}

TEST_F(StateManagerTest, ChangelogPartitionsMustBeCapturedBeforeClear) {
  StateManager sm({0, 1}, TaskType::kActive, Config());
  ASSERT_TRUE(sm.RegisterStores().ok());
  const std::vector<TopicPartition> captured = sm.CaptureChangelogPartitions();
  EXPECT_EQ(captured, std::vector<TopicPartition>{changelog_});
  ASSERT_TRUE(sm.Close(/*clean=*/false).ok());
  sm.Clear();
  EXPECT_TRUE(sm.ChangelogPartitions().empty()) << "what the seed's 'materialise' guards";
  EXPECT_EQ(captured, std::vector<TopicPartition>{changelog_});
}

TEST_F(StateManagerTest, TypeConversionIsPreparedThenCompleted) {
  StateManager sm({0, 1}, TaskType::kActive, Config());
  sm.PrepareNewTaskType(TaskType::kStandby);
  EXPECT_EQ(sm.type(), TaskType::kActive) << "not before the restore thread completes it";
  EXPECT_EQ(sm.pending_type(), TaskType::kStandby);
  EXPECT_TRUE(sm.MaybeCompleteTaskTypeConversion());
  EXPECT_EQ(sm.type(), TaskType::kStandby);
  EXPECT_FALSE(sm.MaybeCompleteTaskTypeConversion());
}

TEST_F(StateManagerTest, RecyclingAgainBeforeCompletionKeepsOnlyTheLatestType) {
  StateManager sm({0, 1}, TaskType::kActive, Config());
  sm.PrepareNewTaskType(TaskType::kStandby);
  EXPECT_EQ(sm.effective_type(), TaskType::kStandby);
  sm.PrepareNewTaskType(TaskType::kActive);  // back before the restore thread saw it
  EXPECT_EQ(sm.pending_type(), std::nullopt);
  EXPECT_EQ(sm.effective_type(), TaskType::kActive);
  EXPECT_FALSE(sm.MaybeCompleteTaskTypeConversion());
}

TEST_F(StateManagerTest, ExactlyOnceWipesAStoreWithDataButNoCheckpoint) {
  {
    StateManager sm({0, 1}, TaskType::kActive, Config(/*eos=*/true));
    ASSERT_TRUE(sm.RegisterStores().ok());
    ASSERT_TRUE(sm.StoreForChangelog(changelog_)->Put("k", "uncommitted").ok());
    sm.Advance(changelog_, 3);
    ASSERT_TRUE(sm.Flush().ok());
    ASSERT_TRUE(sm.RemoveCheckpointForProcessing().ok());
    ASSERT_TRUE(sm.Close(/*clean=*/false).ok());  // a crash while processing
  }
  StateManager sm({0, 1}, TaskType::kActive, Config(/*eos=*/true));
  ASSERT_TRUE(sm.RegisterStores().ok());
  EXPECT_THAT(sm.checkpoint_note(), HasSubstr("wiped"));
  EXPECT_EQ(sm.StoreForChangelog(changelog_)->NumEntries(), 0u);
  EXPECT_EQ(sm.StartOffset(changelog_), std::nullopt);
}

// Kafka 4.0-4.2's lifecycle under exactly-once: the checkpoint is read at registration and
// deleted before anything writes, so a crash from then on finds data without a checkpoint.
TEST_F(StateManagerTest, ExactlyOnceDeletesTheCheckpointOnceRead) {
  {
    StateManager sm({0, 1}, TaskType::kActive, Config(/*eos=*/true));
    ASSERT_TRUE(sm.RegisterStores().ok());
    ASSERT_TRUE(sm.StoreForChangelog(changelog_)->Put("k", "committed").ok());
    sm.Advance(changelog_, 4);
    ASSERT_TRUE(sm.Close(/*clean=*/true).ok());  // flushed and checkpointed at 4
  }
  ASSERT_TRUE(PosixFileSystem::Default()->FileExists(dir_ + "/app/0_1/.checkpoint").ok());
  StateManager sm({0, 1}, TaskType::kActive, Config(/*eos=*/true));
  ASSERT_TRUE(sm.RegisterStores().ok());
  EXPECT_EQ(sm.StartOffset(changelog_), 4);  // read
  EXPECT_EQ(sm.StoreForChangelog(changelog_)->NumEntries(), 1u);
  EXPECT_TRUE(absl::IsNotFound(
      PosixFileSystem::Default()->FileExists(dir_ + "/app/0_1/.checkpoint")));  // and deleted
  ASSERT_TRUE(sm.Close(/*clean=*/true).ok());
  EXPECT_EQ(*ReadCheckpoint(*PosixFileSystem::Default(), sm.checkpoint_path()),
            (CheckpointOffsets{{changelog_, 4}}));  // a clean close writes it again
}

TEST_F(StateManagerTest, AtLeastOnceKeepsDataWithoutCheckpointAndRestoresFromScratch) {
  {
    StateManager sm({0, 1}, TaskType::kActive, Config());
    ASSERT_TRUE(sm.RegisterStores().ok());
    ASSERT_TRUE(sm.StoreForChangelog(changelog_)->Put("k", "v").ok());
    // The store flushed (a store keeps only what it flushed), the task closed dirty: data
    // without a checkpoint.
    ASSERT_TRUE(sm.StoreForChangelog(changelog_)->Flush().ok());
    ASSERT_TRUE(sm.Close(/*clean=*/false).ok());
  }
  StateManager sm({0, 1}, TaskType::kActive, Config());
  ASSERT_TRUE(sm.RegisterStores().ok());
  EXPECT_EQ(sm.StoreForChangelog(changelog_)->NumEntries(), 1u);
  EXPECT_EQ(sm.StartOffset(changelog_), std::nullopt);
}

TEST_F(StateManagerTest, UnreadableCheckpointMeansFromTheBeginningWithAReason) {
  ASSERT_TRUE(PosixFileSystem::Default()->CreateDirIfMissing(dir_ + "/app/0_1").ok());
  ASSERT_TRUE(WriteFileAtomically(*PosixFileSystem::Default(), dir_ + "/app/0_1/.checkpoint",
                                  "garbage\n")
                  .ok());
  StateManager sm({0, 1}, TaskType::kStandby, Config());
  ASSERT_TRUE(sm.RegisterStores().ok());
  EXPECT_THAT(sm.checkpoint_note(), HasSubstr("unreadable checkpoint"));
  EXPECT_EQ(sm.StartOffset(changelog_), std::nullopt);
}

TEST_F(StateManagerTest, WipeRemovesTheTaskDirectory) {
  StateManager sm({0, 1}, TaskType::kActive, Config());
  ASSERT_TRUE(sm.RegisterStores().ok());
  ASSERT_TRUE(sm.Close(/*clean=*/true).ok());
  ASSERT_TRUE(sm.Wipe().ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/app/0_1"));
}

}  // namespace
}  // namespace restoresim

namespace restoresim {
namespace {

// Two incarnations of one task on two stream threads of an instance: the second waits
// (Aborted, retried by the task manager) until the first released the task directory; an I/O
// error would be Unavailable, never confused with the lock.
TEST_F(StateManagerTest, TaskDirectoryIsLockedByOneStateManagerAtATime) {
  StateDirectory directory;
  StateManagerConfig config = Config();
  config.directory = &directory;
  StateManager first({0, 1}, TaskType::kActive, config);
  StateManager second({0, 1}, TaskType::kStandby, config);
  ASSERT_TRUE(first.RegisterStores().ok());
  absl::Status locked = second.RegisterStores();
  EXPECT_TRUE(absl::IsAborted(locked)) << locked;
  EXPECT_THAT(std::string(locked.message()), HasSubstr("locked by another stream thread"));
  ASSERT_TRUE(first.Close(/*clean=*/true).ok());
  EXPECT_TRUE(absl::IsAborted(second.RegisterStores())) << "held until the stores are cleared";
  first.Clear();
  EXPECT_TRUE(second.RegisterStores().ok());
  EXPECT_EQ(directory.Holder(config.task_dir) != 0, true);
}

// Two stores, the second failing to open once: the first is closed again, so the retry opens
// both afresh (it used to abort with "registers its stores twice").
TEST_F(StateManagerTest, AStoreThatFailsToOpenLeavesNothingOpenAndTheRetryOpensAll) {
  StateManagerConfig c = Config();
  c.store_names = {"counts", "latest"};
  int latest_failures = 1;
  int open_stores = 0;
  const auto open = c.open_store;
  c.open_store = [&](const std::string& dir, const std::string& name)
      -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
    if (name == "latest" && latest_failures > 0) {
      --latest_failures;
      return absl::UnavailableError("latest: cannot open (injected)");
    }
    ++open_stores;
    return open(dir, name);
  };
  StateManager sm({0, 1}, TaskType::kActive, c);
  const absl::Status first = sm.RegisterStores();
  EXPECT_TRUE(absl::IsUnavailable(first)) << first;
  EXPECT_FALSE(sm.registered());
  EXPECT_EQ(sm.StoreForChangelog(changelog_), nullptr);
  ASSERT_TRUE(sm.RegisterStores().ok());
  EXPECT_EQ(open_stores, 3);  // counts twice, latest once
  EXPECT_NE(sm.Store("counts"), nullptr);
  EXPECT_NE(sm.Store("latest"), nullptr);
  EXPECT_THAT(sm.StoreNames(), ::testing::ElementsAre("counts", "latest"));
  ASSERT_TRUE(sm.Close(/*clean=*/true).ok());
}

// A store the checkpoint names has lost its directory: the claim is withdrawn on disk before a
// new store is created, and the store restores from the beginning (never from the checkpoint's
// offset into an empty store).
TEST_F(StateManagerTest, AStoreWhoseDirectoryIsGoneRestoresFromTheBeginning) {
  {
    StateManager sm({0, 1}, TaskType::kActive, Config());
    ASSERT_TRUE(sm.RegisterStores().ok());
    ASSERT_TRUE(sm.StoreForChangelog(changelog_)->Put("k", "1").ok());
    sm.Advance(changelog_, 10);
    ASSERT_TRUE(sm.Close(/*clean=*/true).ok());
  }
  std::filesystem::remove_all(dir_ + "/app/0_1/counts");
  StateManager sm({0, 1}, TaskType::kActive, Config());
  ASSERT_TRUE(sm.RegisterStores().ok());
  EXPECT_EQ(sm.StartOffset(changelog_), std::nullopt);
  EXPECT_THAT(sm.checkpoint_note(), HasSubstr("its directory is missing"));
  EXPECT_EQ(*ReadCheckpoint(*PosixFileSystem::Default(), sm.checkpoint_path()),
            CheckpointOffsets{});
  ASSERT_TRUE(sm.Close(/*clean=*/false).ok());
}

// Kafka's StateManagerUtil.checkpointNeeded: forced always; unforced once the stores moved
// more than the delta (strictly) since the last checkpoint written, or since registration.
TEST_F(StateManagerTest, AnUnforcedCheckpointIsNeededOnlyPastTheOffsetDelta) {
  StateManager sm({0, 1}, TaskType::kActive, Config());
  EXPECT_FALSE(sm.CheckpointNeeded(/*enforce=*/true, 0)) << "nothing registered yet";
  ASSERT_TRUE(sm.RegisterStores().ok());
  EXPECT_EQ(sm.OffsetDeltaSinceCheckpoint(), 0);
  EXPECT_TRUE(sm.CheckpointNeeded(/*enforce=*/true, kCheckpointOffsetDeltaMin));
  sm.Advance(changelog_, kCheckpointOffsetDeltaMin);
  EXPECT_FALSE(sm.CheckpointNeeded(false, kCheckpointOffsetDeltaMin)) << "not more than 10 000";
  sm.Advance(changelog_, kCheckpointOffsetDeltaMin + 1);
  EXPECT_TRUE(sm.CheckpointNeeded(false, kCheckpointOffsetDeltaMin));
  ASSERT_TRUE(sm.Flush().ok());
  ASSERT_TRUE(sm.Checkpoint().ok());
  EXPECT_EQ(sm.OffsetDeltaSinceCheckpoint(), 0) << "measured from the checkpoint written";
  sm.Advance(changelog_, kCheckpointOffsetDeltaMin + 5);
  EXPECT_EQ(sm.OffsetDeltaSinceCheckpoint(), 4);
  ASSERT_TRUE(sm.Close(/*clean=*/true).ok());
  sm.Clear();
  StateManager again({0, 1}, TaskType::kActive, Config());
  ASSERT_TRUE(again.RegisterStores().ok());
  EXPECT_EQ(again.OffsetDeltaSinceCheckpoint(), 0) << "measured from the checkpoint read";
  EXPECT_EQ(again.StartOffset(changelog_), kCheckpointOffsetDeltaMin + 5);
}

}  // namespace
}  // namespace restoresim

