// RocksDbStore keeps the KeyValueStore contract: the same operations as LogStore give the same
// contents, and flushed data survives reopening.
#include "core/state/rocksdb_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/state/log_store.h"
#include "core/port/posix_file_system.h"
#include "core/util/prng.h"

namespace restoresim {
namespace {

class RocksDbStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/restoresim_rocksdb_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(RocksDbStoreTest, SameContentsAsLogStoreForRandomWrites) {
  auto rocks = RocksDbStore::Open(dir_ + "/rocks", "counts");
  ASSERT_TRUE(rocks.ok()) << rocks.status();
  auto log = LogStore::Open(*PosixFileSystem::Default(), dir_ + "/log", "counts");
  ASSERT_TRUE(log.ok()) << log.status();
  Prng prng(3);
  for (int round = 0; round < 50; ++round) {
    std::vector<KeyValueWrite> batch;
    for (int i = 0; i < 20; ++i) {
      std::string key = "k" + std::to_string(prng.Uniform(30));
      if (prng.OneIn(4)) {
        batch.push_back({key, std::nullopt});
      } else {
        batch.push_back({key, std::to_string(prng.Next64())});
      }
    }
    ASSERT_TRUE((*rocks)->ApplyBatch(batch).ok());
    ASSERT_TRUE((*log)->ApplyBatch(batch).ok());
    if (prng.OneIn(3)) {
      ASSERT_TRUE((*rocks)->Put("single", std::to_string(round)).ok());
      ASSERT_TRUE((*log)->Put("single", std::to_string(round)).ok());
    }
  }
  EXPECT_EQ(*(*rocks)->ReadAll(), *(*log)->ReadAll());
  EXPECT_EQ(*(*rocks)->Get("single"), *(*log)->Get("single"));
}

TEST_F(RocksDbStoreTest, FlushedDataSurvivesReopenAndClosedStoreRefusesUse) {
  {
    auto store = RocksDbStore::Open(dir_ + "/db", "s");
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put("a", "1").ok());
    ASSERT_TRUE((*store)->Delete("a").ok());
    ASSERT_TRUE((*store)->Put("b", "2").ok());
    ASSERT_TRUE((*store)->Flush().ok());
    ASSERT_TRUE((*store)->Close().ok());
    EXPECT_EQ((*store)->Put("c", "3").code(), absl::StatusCode::kFailedPrecondition);
  }
  auto store = RocksDbStore::Open(dir_ + "/db", "s");
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*(*store)->ReadAll(), (std::map<std::string, std::string>{{"b", "2"}}));
}

TEST_F(RocksDbStoreTest, CreatedOnOpenOnlyWhenTheDirectoryHeldNoDatabase) {
  {
    auto store = RocksDbStore::Open(dir_ + "/db", "s");
    ASSERT_TRUE(store.ok());
    EXPECT_TRUE((*store)->CreatedOnOpen()) << "a new directory";
    ASSERT_TRUE((*store)->Put("a", "1").ok());
    ASSERT_TRUE((*store)->Flush().ok());
    ASSERT_TRUE((*store)->Close().ok());
  }
  {
    auto store = RocksDbStore::Open(dir_ + "/db", "s");
    ASSERT_TRUE(store.ok());
    EXPECT_FALSE((*store)->CreatedOnOpen()) << "reopened: the data is there";
    ASSERT_TRUE((*store)->Close().ok());
  }
  // Without its CURRENT file the rest of a database is damage, not an empty store: RocksDB
  // refuses to create a new one over its files, which reaches the runtime as data loss (and
  // the task manager wipes the store and restores it).
  std::filesystem::remove(dir_ + "/db/CURRENT");
  {
    auto store = RocksDbStore::Open(dir_ + "/db", "s");
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  }
  // A directory whose files all vanished opens as a new, empty store, and says so, so that a
  // checkpoint naming its offsets is withdrawn.
  for (const auto& entry : std::filesystem::directory_iterator(dir_ + "/db")) {
    std::filesystem::remove_all(entry.path());
  }
  auto store = RocksDbStore::Open(dir_ + "/db", "s");
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->CreatedOnOpen());
  EXPECT_EQ((*store)->NumEntries(), 0u);
}

TEST_F(RocksDbStoreTest, CommitRecordsTheOffsetAndOldDatabasesOpenWithoutOne) {
  {
    // A database as a release before the offsets family wrote it: the default family only.
    const RocksDbLibrary& lib = **RocksDb();
    rocksdb_options_t* options = lib.rocksdb_options_create();
    lib.rocksdb_options_set_create_if_missing(options, 1);
    char* error = nullptr;
    rocksdb_t* db = lib.rocksdb_open(options, (dir_ + "/db").c_str(), &error);
    ASSERT_TRUE(lib.Check(error, "open").ok());
    rocksdb_writeoptions_t* write = lib.rocksdb_writeoptions_create();
    lib.rocksdb_put(db, write, "a", 1, "1", 1, &error);
    ASSERT_TRUE(lib.Check(error, "put").ok());
    lib.rocksdb_writeoptions_destroy(write);
    lib.rocksdb_close(db);
    lib.rocksdb_options_destroy(options);
  }
  {
    auto store = RocksDbStore::Open(dir_ + "/db", "s");
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ((*store)->CommittedOffset(), std::nullopt) << "recorded none: trusted as before";
    EXPECT_EQ(*(*store)->ReadAll(), (std::map<std::string, std::string>{{"a", "1"}}));
    ASSERT_TRUE((*store)->Put("b", "2").ok());
    ASSERT_TRUE((*store)->Commit(12).ok());
    EXPECT_EQ((*store)->CommittedOffset(), 12);
    ASSERT_TRUE((*store)->Close().ok());
  }
  auto store = RocksDbStore::Open(dir_ + "/db", "s");
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->CommittedOffset(), 12);
  EXPECT_EQ((*store)->NumEntries(), 2u) << "the offset is not an entry";
  EXPECT_EQ(*(*store)->ReadAll(), (std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}}));
}

// Issue 25: a MANIFEST cut in its last records opens without error as the database of an
// earlier flush. The offset is flushed atomically with the data, so whatever version a cut
// brings back reports the offset of that version: for every cut of the MANIFEST's tail, the
// store opens refused, or with contents and offset of one and the same commit.
TEST_F(RocksDbStoreTest, EveryCutOfTheManifestTailReportsTheOffsetItsContentsReach) {
  const std::string db = dir_ + "/db";
  {
    auto store = RocksDbStore::Open(db, "s");
    ASSERT_TRUE(store.ok());
    // Two commits: with the new database's own (offset 0), three flushes, below the four files
    // that start a compaction (whose deletion of the files earlier versions name would make
    // the cuts fail to open, timing-dependent).
    for (int commit = 1; commit <= 2; ++commit) {
      ASSERT_TRUE((*store)->Put("k", std::to_string(commit)).ok());
      ASSERT_TRUE((*store)->Commit(commit * 10).ok());
    }
    ASSERT_TRUE((*store)->Close().ok());
  }
  std::string current;
  std::getline(std::ifstream(db + "/CURRENT"), current);
  const std::string manifest = db + "/" + current;
  const uintmax_t size = std::filesystem::file_size(manifest);
  int opened = 0;
  int earlier = 0;
  for (uintmax_t cut = size > 600 ? size - 600 : 0; cut < size; ++cut) {
    const std::string copy = dir_ + "/cut";
    std::filesystem::remove_all(copy);
    std::filesystem::copy(db, copy);
    std::filesystem::resize_file(copy + "/" + current, cut);
    auto store = RocksDbStore::Open(copy, "s");
    if (!store.ok()) continue;  // refused: the task is wiped and restored
    ++opened;
    const absl::StatusOr<std::optional<std::string>> value = (*store)->Get("k");
    ASSERT_TRUE(value.ok()) << "cut " << cut << ": " << value.status();
    const std::optional<int64_t> offset = (*store)->CommittedOffset();
    if (!value->has_value()) {
      // Empty: a new database (0), or one from before the offsets family was made (unknown,
      // which the state manager takes as 0 for an empty store).
      EXPECT_TRUE(offset == std::nullopt || offset == 0) << "cut " << cut;
    } else {
      EXPECT_EQ(offset, std::stoi(**value) * 10) << "cut " << cut << " value " << **value;
      earlier += **value != "2" ? 1 : 0;
    }
  }
  EXPECT_GT(opened, 0);
  EXPECT_GT(earlier, 0) << "no cut brought an earlier version back: the test shows nothing";
  RecordProperty("opened", opened);
  RecordProperty("earlier_versions", earlier);
}

// Issue 25: a RocksDB store missing its MANIFEST, or with a directory in its place, or a file
// in place of its directory, failed as an I/O error retried for ever; each is data loss.
TEST_F(RocksDbStoreTest, DamageOfItsOwnFilesIsDataLoss) {
  const std::string db = dir_ + "/db";
  auto make = [&] {
    std::filesystem::remove_all(db);
    auto store = RocksDbStore::Open(db, "s");
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put("a", "1").ok());
    ASSERT_TRUE((*store)->Commit(1).ok());
    ASSERT_TRUE((*store)->Close().ok());
  };
  auto manifest = [&] {
    std::string current;
    std::getline(std::ifstream(db + "/CURRENT"), current);
    return db + "/" + current;
  };
  auto expect_data_loss = [&](const std::string& what) {
    auto store = RocksDbStore::Open(db, "s");
    ASSERT_FALSE(store.ok()) << what;
    EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << what << ": "
                                                                  << store.status();
  };
  make();
  std::filesystem::remove(manifest());
  expect_data_loss("its MANIFEST missing");
  make();
  const std::string m = manifest();
  std::filesystem::remove(m);
  std::filesystem::create_directory(m);
  expect_data_loss("a directory in place of its MANIFEST");
  std::filesystem::remove_all(db);
  std::ofstream(db) << "x";
  expect_data_loss("a file in place of its directory");
}

TEST_F(RocksDbStoreTest, OpeningAFileAsADatabaseIsAnError) {
  std::ofstream(dir_ + "/not-a-dir") << "x";
  auto store = RocksDbStore::Open(dir_ + "/not-a-dir", "s");
  EXPECT_FALSE(store.ok());
}

}  // namespace
}  // namespace restoresim
