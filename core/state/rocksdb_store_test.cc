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

TEST_F(RocksDbStoreTest, OpeningAFileAsADatabaseIsAnError) {
  std::ofstream(dir_ + "/not-a-dir") << "x";
  auto store = RocksDbStore::Open(dir_ + "/not-a-dir", "s");
  EXPECT_FALSE(store.ok());
}

}  // namespace
}  // namespace restoresim
