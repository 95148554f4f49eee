// LogStore on the POSIX file system: replay, tombstones, compaction, damaged segments. Crash
// behaviour (losing unflushed writes) is tested against the crash-model file system in fakes/.
#include "core/state/log_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/port/posix_file_system.h"
#include "core/state/log_record.h"
#include "core/util/prng.h"

namespace restoresim {
namespace {

using ::testing::HasSubstr;

class LogStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/restoresim_logstore_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<LogStore> OpenStore(LogStoreOptions options = {}) {
    absl::StatusOr<std::unique_ptr<LogStore>> store =
        LogStore::Open(*PosixFileSystem::Default(), dir_ + "/store", "counts", options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  std::string dir_;
};

TEST_F(LogStoreTest, PutGetDeleteAndReopenReplays) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put("a", "1").ok());
    ASSERT_TRUE(store->Put("b", "2").ok());
    ASSERT_TRUE(store->Put("a", "3").ok());
    ASSERT_TRUE(store->Delete("b").ok());
    ASSERT_TRUE(store->Delete("never-there").ok());
    EXPECT_EQ(*store->Get("a"), std::optional<std::string>("3"));
    EXPECT_EQ(*store->Get("b"), std::nullopt);
    ASSERT_TRUE(store->Flush().ok());
    ASSERT_TRUE(store->Close().ok());
  }
  auto store = OpenStore();
  EXPECT_EQ(store->NumEntries(), 1u);
  EXPECT_EQ(*store->Get("a"), std::optional<std::string>("3"));
  EXPECT_EQ(store->tail_bytes_dropped(), 0u);
  const auto all = *store->ReadAll();
  EXPECT_EQ(all, (std::map<std::string, std::string>{{"a", "3"}}));
}

TEST_F(LogStoreTest, ApplyBatchAppliesTombstonesInOrder) {
  auto store = OpenStore();
  ASSERT_TRUE(store->ApplyBatch({{"k", "v1"}, {"k", std::nullopt}, {"j", "x"}, {"k", "v2"}}).ok());
  EXPECT_EQ(*store->ReadAll(), (std::map<std::string, std::string>{{"j", "x"}, {"k", "v2"}}));
}

TEST_F(LogStoreTest, EmptyKeysAndValuesAndBinaryBytesRoundTrip) {
  const std::string binary("\0\xff\n\x01", 4);
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put("", "").ok());
    ASSERT_TRUE(store->Put(binary, binary).ok());
    ASSERT_TRUE(store->Flush().ok());
    ASSERT_TRUE(store->Close().ok());
  }
  auto store = OpenStore();
  EXPECT_EQ(*store->Get(""), std::optional<std::string>(""));
  EXPECT_EQ(*store->Get(binary), std::optional<std::string>(binary));
}

TEST_F(LogStoreTest, CompactionKeepsLiveDataAndDropsOldSegments) {
  LogStoreOptions options;
  options.compact_min_bytes = 1000;
  {
    auto store = OpenStore(options);
    for (int round = 0; round < 50; ++round) {
      for (int k = 0; k < 10; ++k) {
        ASSERT_TRUE(store->Put("key" + std::to_string(k), std::to_string(round)).ok());
      }
      ASSERT_TRUE(store->Flush().ok());
    }
    ASSERT_TRUE(store->Delete("key0").ok());
    ASSERT_TRUE(store->Flush().ok());
    EXPECT_LT(store->log_bytes(), 3000u) << "compaction should have run";
    ASSERT_TRUE(store->Close().ok());
  }
  const auto names = *PosixFileSystem::Default()->ListDir(dir_ + "/store");
  EXPECT_LE(names.size(), 3u);
  auto store = OpenStore(options);
  EXPECT_EQ(store->NumEntries(), 9u);
  EXPECT_EQ(*store->Get("key9"), std::optional<std::string>("49"));
  EXPECT_EQ(*store->Get("key0"), std::nullopt);
}

TEST_F(LogStoreTest, DamagedTailOfTheLastSegmentIsCutOff) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put("a", "1").ok());
    ASSERT_TRUE(store->Put("b", "2").ok());
    ASSERT_TRUE(store->Flush().ok());
    ASSERT_TRUE(store->Close().ok());
  }
  // Cut the last record short, as a crash in the middle of a write would.
  const std::string path = dir_ + "/store/segment-00000001.log";
  std::string bytes = *PosixFileSystem::Default()->ReadFile(path);
  bytes.resize(bytes.size() - 3);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  auto store = OpenStore();
  EXPECT_EQ(*store->Get("a"), std::optional<std::string>("1"));
  EXPECT_EQ(*store->Get("b"), std::nullopt);
  EXPECT_GT(store->tail_bytes_dropped(), 0u);
}

TEST_F(LogStoreTest, DamageBeforeTheLastSegmentIsDataLoss) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put("a", "1").ok());
    ASSERT_TRUE(store->Flush().ok());
    ASSERT_TRUE(store->Close().ok());
  }
  {
    auto store = OpenStore();  // a second segment
    ASSERT_TRUE(store->Put("b", "2").ok());
    ASSERT_TRUE(store->Flush().ok());
    ASSERT_TRUE(store->Close().ok());
  }
  const std::string path = dir_ + "/store/segment-00000001.log";
  std::string bytes = *PosixFileSystem::Default()->ReadFile(path);
  bytes[bytes.size() - 1] ^= 0x55;  // flip a payload bit: the checksum no longer matches
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  absl::StatusOr<std::unique_ptr<LogStore>> store =
      LogStore::Open(*PosixFileSystem::Default(), dir_ + "/store", "counts");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("segment-00000001.log"));
}

TEST_F(LogStoreTest, ClosedStoreRefusesUse) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Close().ok());
  EXPECT_FALSE(store->IsOpen());
  EXPECT_EQ(store->Put("a", "1").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->Get("a").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->Flush().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(store->Close().ok());  // idempotent
}

TEST(LogRecordTest, RoundTripAndRejectsGarbageWithoutCrashing) {
  std::string encoded;
  const std::string_view value = "value";
  AppendLogRecord(encoded, "key", &value);
  AppendLogRecord(encoded, "gone", nullptr);
  DecodedLogRecord r;
  ASSERT_EQ(DecodeLogRecord(encoded, r), DecodeResult::kOk);
  EXPECT_EQ(r.key, "key");
  EXPECT_EQ(r.value, std::optional<std::string_view>("value"));
  ASSERT_EQ(DecodeLogRecord(std::string_view(encoded).substr(r.bytes), r), DecodeResult::kOk);
  EXPECT_EQ(r.key, "gone");
  EXPECT_EQ(r.value, std::nullopt);
  for (size_t cut = 0; cut < 20; ++cut) {
    EXPECT_EQ(DecodeLogRecord(std::string_view(encoded).substr(0, cut), r),
              DecodeResult::kIncomplete);
  }
  Prng prng(5);
  for (int i = 0; i < 20000; ++i) {
    std::string bytes = encoded;
    bytes[prng.Uniform(bytes.size())] ^= static_cast<char>(1 + prng.Uniform(255));
    std::string_view in = bytes;
    for (int guard = 0; guard < 10 && !in.empty(); ++guard) {
      if (DecodeLogRecord(in, r) != DecodeResult::kOk) break;
      in.remove_prefix(r.bytes);
    }
  }
}

}  // namespace
}  // namespace restoresim
