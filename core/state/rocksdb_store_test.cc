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

TEST_F(RocksDbStoreTest, OpeningAFileAsADatabaseIsAnError) {
  std::ofstream(dir_ + "/not-a-dir") << "x";
  auto store = RocksDbStore::Open(dir_ + "/not-a-dir", "s");
  EXPECT_FALSE(store.ok());
}

}  // namespace
}  // namespace restoresim
