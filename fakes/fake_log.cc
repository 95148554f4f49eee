#include "fakes/fake_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "core/util/check.h"

namespace restoresim::fakes {

absl::StatusOr<int64_t> PartitionLog::Append(std::string_view key,
                                             std::optional<std::string_view> value,
                                             int64_t timestamp_ms) {
  const size_t value_length = value.has_value() ? value->size() : 0;
  const size_t bytes = key.size() + value_length;
  if (bytes > kRecordBytesMax) {
    return absl::InvalidArgumentError(
        fmt::format("record of {} bytes exceeds the {} byte limit", bytes, kRecordBytesMax));
  }
  const uint32_t sequence = ChunkWithRoom(bytes);
  Chunk& c = chunks_[sequence - first_chunk_];
  Entry e{sequence, c.used, static_cast<uint32_t>(key.size()),
          value.has_value() ? static_cast<uint32_t>(value_length) : kTombstone, timestamp_ms};
  if (!key.empty()) std::memcpy(c.bytes.get() + c.used, key.data(), key.size());
  if (value_length > 0) {
    std::memcpy(c.bytes.get() + c.used + key.size(), value->data(), value_length);
  }
  c.used += static_cast<uint32_t>(bytes);
  const int64_t offset = end_offset();
  entries_.push_back(e);
  c.end_offset = offset + 1;
  RS_CHECK_LE(c.used, c.capacity);
  return offset;
}

uint32_t PartitionLog::ChunkWithRoom(size_t bytes) {
  if (!chunks_.empty() && chunks_.back().capacity - chunks_.back().used >= bytes) {
    return first_chunk_ + static_cast<uint32_t>(chunks_.size() - 1);
  }
  // A record larger than the usual chunk gets a chunk of its own size.
  const size_t capacity = std::max(next_chunk_bytes_, bytes);
  next_chunk_bytes_ = std::min(next_chunk_bytes_ * 2, kChunkBytesMax);
  Chunk c;
  c.bytes = std::make_unique_for_overwrite<char[]>(capacity);
  c.capacity = static_cast<uint32_t>(capacity);
  c.end_offset = end_offset();
  chunks_.push_back(std::move(c));
  RS_CHECK(first_chunk_ + chunks_.size() - 1 < UINT32_MAX, "chunk sequence numbers exhausted");
  return first_chunk_ + static_cast<uint32_t>(chunks_.size() - 1);
}

const PartitionLog::Chunk& PartitionLog::chunk(uint32_t sequence) const {
  RS_CHECK(sequence >= first_chunk_ && sequence - first_chunk_ < chunks_.size(),
           "chunk {} not retained (first {}, {} chunks)", sequence, first_chunk_, chunks_.size());
  return chunks_[sequence - first_chunk_];
}

ConsumerRecord PartitionLog::RecordAt(int64_t offset) const {
  const Entry& e = entries_[static_cast<size_t>(offset - base_offset_)];
  const char* bytes = chunk(e.chunk).bytes.get() + e.chunk_offset;
  ConsumerRecord r;
  r.offset = offset;
  r.key.assign(bytes, e.key_length);
  if (e.value_length != kTombstone) r.value.emplace(bytes + e.key_length, e.value_length);
  r.timestamp_ms = e.timestamp_ms;
  return r;
}

absl::StatusOr<std::vector<ConsumerRecord>> PartitionLog::Read(int64_t from_offset,
                                                               size_t max_records) const {
  if (from_offset < log_start_offset_ || from_offset > end_offset()) {
    return absl::OutOfRangeError(fmt::format("offset {} outside the log [{}, {}]", from_offset,
                                             log_start_offset_, end_offset()));
  }
  const int64_t count =
      std::min<int64_t>(end_offset() - from_offset, static_cast<int64_t>(max_records));
  std::vector<ConsumerRecord> records;
  records.reserve(static_cast<size_t>(count));
  for (int64_t offset = from_offset; offset < from_offset + count; ++offset) {
    records.push_back(RecordAt(offset));
  }
  return records;
}

absl::StatusOr<int64_t> PartitionLog::DeleteRecordsBefore(int64_t offset) {
  if (offset < 0) {
    return absl::InvalidArgumentError(fmt::format("negative delete-records offset {}", offset));
  }
  if (offset > end_offset()) {
    return absl::OutOfRangeError(
        fmt::format("delete-records offset {} past the end offset {}", offset, end_offset()));
  }
  if (offset > log_start_offset_) {
    log_start_offset_ = offset;
    ReleaseBelowLogStart();
  }
  return log_start_offset_;
}

void PartitionLog::ReleaseBelowLogStart() {
  // Chunks hold consecutive offsets, so the ones wholly below the log start form a prefix. The
  // last chunk stays: it is where the next append goes.
  size_t dead_chunks = 0;
  while (dead_chunks + 1 < chunks_.size() && chunks_[dead_chunks].end_offset <= log_start_offset_) {
    ++dead_chunks;
  }
  if (dead_chunks > 0) {
    chunks_.erase(chunks_.begin(), chunks_.begin() + static_cast<ptrdiff_t>(dead_chunks));
    first_chunk_ += static_cast<uint32_t>(dead_chunks);
  }
  const size_t dead_entries = static_cast<size_t>(log_start_offset_ - base_offset_);
  const size_t live_entries = entries_.size() - dead_entries;
  if (dead_entries == 0 || dead_entries < live_entries) return;
  // A fresh vector, so that the capacity (what MemoryBytes counts) shrinks too.
  std::vector<Entry> live;
  live.reserve(live_entries);
  live.insert(live.end(), entries_.begin() + static_cast<ptrdiff_t>(dead_entries), entries_.end());
  entries_.swap(live);
  base_offset_ = log_start_offset_;
  RS_CHECK_EQ(end_offset() - base_offset_, static_cast<int64_t>(live_entries));
}

size_t PartitionLog::MemoryBytes() const {
  size_t bytes = entries_.capacity() * sizeof(Entry) + chunks_.capacity() * sizeof(Chunk);
  for (const Chunk& c : chunks_) bytes += c.capacity;
  return bytes;
}

}  // namespace restoresim::fakes
