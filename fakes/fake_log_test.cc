#include "fakes/fake_log.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace restoresim::fakes {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Key(int64_t i) { return fmt::format("key-{:06}", i); }
std::string Value(int64_t i) { return fmt::format("value-{}-{}", i, std::string(i % 7, 'x')); }

void AppendN(PartitionLog& log, int64_t n) {
  const int64_t first = log.end_offset();
  for (int64_t i = first; i < first + n; ++i) {
    absl::StatusOr<int64_t> offset = log.Append(Key(i), Value(i), 1000 + i);
    ASSERT_TRUE(offset.ok()) << offset.status();
    ASSERT_EQ(*offset, i);
  }
}

TEST(PartitionLogTest, EmptyLogReadsNothingAtZero) {
  PartitionLog log;
  EXPECT_EQ(log.log_start_offset(), 0);
  EXPECT_EQ(log.end_offset(), 0);
  absl::StatusOr<std::vector<ConsumerRecord>> records = log.Read(0, 10);
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_THAT(*records, IsEmpty());
}

TEST(PartitionLogTest, AppendAssignsConsecutiveOffsetsAndReadsRoundTrip) {
  PartitionLog log;
  AppendN(log, 100);
  EXPECT_EQ(log.end_offset(), 100);
  EXPECT_EQ(log.record_count(), 100);
  absl::StatusOr<std::vector<ConsumerRecord>> records = log.Read(10, 5);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 5u);
  for (int64_t i = 0; i < 5; ++i) {
    const ConsumerRecord& r = (*records)[static_cast<size_t>(i)];
    EXPECT_EQ(r.offset, 10 + i);
    EXPECT_EQ(r.key, Key(10 + i));
    EXPECT_EQ(r.value, Value(10 + i));
    EXPECT_EQ(r.timestamp_ms, 1010 + i);
  }
  // A read near the end returns what is there.
  records = log.Read(98, 10);
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(records->size(), 2u);
}

TEST(PartitionLogTest, TombstonesAndEmptyValuesAreDistinct) {
  PartitionLog log;
  ASSERT_TRUE(log.Append("k", std::nullopt, 1).ok());
  ASSERT_TRUE(log.Append("k", std::string_view(), 2).ok());
  ASSERT_TRUE(log.Append("", "v", 3).ok());
  absl::StatusOr<std::vector<ConsumerRecord>> records = log.Read(0, 10);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 3u);
  EXPECT_FALSE((*records)[0].value.has_value());
  ASSERT_TRUE((*records)[1].value.has_value());
  EXPECT_EQ(*(*records)[1].value, "");
  EXPECT_EQ((*records)[2].key, "");
  EXPECT_EQ((*records)[2].value, "v");
}

TEST(PartitionLogTest, OutOfRangeReadsAreErrors) {
  PartitionLog log;
  AppendN(log, 10);
  absl::StatusOr<std::vector<ConsumerRecord>> past_end = log.Read(11, 1);
  EXPECT_EQ(past_end.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(past_end.status().message()), HasSubstr("[0, 10]"));
  ASSERT_TRUE(log.DeleteRecordsBefore(4).ok());
  EXPECT_EQ(log.Read(3, 1).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(log.Read(4, 1).ok());
  EXPECT_TRUE(log.Read(10, 1).ok());
}

TEST(PartitionLogTest, DeleteRecordsMovesTheStartUpOnly) {
  PartitionLog log;
  AppendN(log, 10);
  absl::StatusOr<int64_t> start = log.DeleteRecordsBefore(6);
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(*start, 6);
  EXPECT_EQ(*log.DeleteRecordsBefore(2), 6) << "the log start never moves down";
  EXPECT_EQ(log.record_count(), 4);
  EXPECT_EQ(log.DeleteRecordsBefore(11).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(log.DeleteRecordsBefore(-1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*log.DeleteRecordsBefore(10), 10) << "deleting everything is allowed";
  EXPECT_EQ(log.record_count(), 0);
  AppendN(log, 3);  // appends go on at the end offset
  absl::StatusOr<std::vector<ConsumerRecord>> records = log.Read(10, 10);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 3u);
  EXPECT_EQ(records->front().key, Key(10));
}

TEST(PartitionLogTest, DeletedRecordsReleaseTheirMemory) {
  PartitionLog log;
  AppendN(log, 100000);
  const size_t full = log.MemoryBytes();
  ASSERT_TRUE(log.DeleteRecordsBefore(99990).ok());
  // What stays: the chunk being appended to (at most kChunkBytesMax) and ten index entries.
  EXPECT_LE(log.MemoryBytes(), PartitionLog::kChunkBytesMax + 1024) << "of " << full;
  absl::StatusOr<std::vector<ConsumerRecord>> records = log.Read(99990, 100);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 10u);
  EXPECT_EQ(records->back().value, Value(99999));
}

TEST(PartitionLogTest, LargeLogKeepsEveryRecordAndStaysCompact) {
  PartitionLog log;
  constexpr int64_t kRecords = 200000;
  for (int64_t i = 0; i < kRecords; ++i) {
    ASSERT_TRUE(log.Append(Key(i), std::string(100, static_cast<char>('a' + i % 26)), i).ok());
  }
  size_t payload = 0;
  for (int64_t from = 0; from < kRecords; from += 5000) {
    absl::StatusOr<std::vector<ConsumerRecord>> records = log.Read(from, 5000);
    ASSERT_TRUE(records.ok());
    ASSERT_EQ(records->size(), 5000u);
    for (const ConsumerRecord& r : *records) {
      ASSERT_EQ(r.key, Key(r.offset));
      ASSERT_EQ((*r.value)[0], static_cast<char>('a' + r.offset % 26));
      payload += r.key.size() + r.value->size();
    }
  }
  const double overhead =
      static_cast<double>(log.MemoryBytes() - payload) / static_cast<double>(kRecords);
  EXPECT_LT(overhead, 64.0) << "bytes of overhead per record";
}

TEST(PartitionLogTest, RecordLargerThanAChunkGetsItsOwnChunk) {
  PartitionLog log;
  const std::string big(PartitionLog::kChunkBytesMax * 2 + 3, 'b');
  ASSERT_TRUE(log.Append("small", "v", 0).ok());
  ASSERT_TRUE(log.Append("big", big, 0).ok());
  ASSERT_TRUE(log.Append("after", "v", 0).ok());
  absl::StatusOr<std::vector<ConsumerRecord>> records = log.Read(0, 3);
  ASSERT_TRUE(records.ok());
  EXPECT_EQ((*records)[1].value, big);
  EXPECT_EQ((*records)[2].key, "after");
}

TEST(PartitionLogTest, OversizedRecordIsRejected) {
  PartitionLog log;
  const std::string huge(PartitionLog::kRecordBytesMax + 1, 'h');
  EXPECT_EQ(log.Append("k", huge, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(log.end_offset(), 0);
}

}  // namespace
}  // namespace restoresim::fakes
