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

void PartitionLog::AppendRecordAt(int64_t offset, std::vector<ConsumerRecord>& out) const {
  const Entry& e = entries_[static_cast<size_t>(offset - base_offset_)];
  const char* bytes = chunk(e.chunk).bytes.get() + e.chunk_offset;
  // Built in place: every record a consumer reads passes here, and a moved-from temporary
  // would cost a move and a destruction per record.
  ConsumerRecord& r = out.emplace_back();
  r.offset = offset;
  r.key.assign(bytes, e.key_length);
  if (e.value_length != kTombstone) r.value.emplace(bytes + e.key_length, e.value_length);
  r.timestamp_ms = e.timestamp_ms;
}

absl::StatusOr<std::vector<ConsumerRecord>> PartitionLog::Read(int64_t from_offset,
                                                               size_t max_records) const {
  if (from_offset < log_start_offset_ || from_offset > end_offset()) {
    return absl::OutOfRangeError(fmt::format("offset {} outside the log [{}, {}]", from_offset,
                                             log_start_offset_, end_offset()));
  }
  return Fetch(from_offset, end_offset(), max_records, /*skip_aborted=*/false).records;
}

PartitionLog::Fetched PartitionLog::Fetch(int64_t from_offset, int64_t limit_offset,
                                          size_t max_records, bool skip_aborted) const {
  RS_CHECK(log_start_offset_ <= from_offset && from_offset <= limit_offset &&
               limit_offset <= end_offset(),
           "fetch [{}, {}) outside the log [{}, {}]", from_offset, limit_offset,
           log_start_offset_, end_offset());
  Fetched fetched;
  fetched.next_offset = from_offset;
  if (spans_.empty()) {  // no transactions: every offset is a data record
    const int64_t count =
        std::min<int64_t>(limit_offset - from_offset, static_cast<int64_t>(max_records));
    fetched.records.reserve(static_cast<size_t>(count));
    for (int64_t offset = from_offset; offset < from_offset + count; ++offset) {
      AppendRecordAt(offset, fetched.records);
    }
    fetched.next_offset = from_offset + count;
    return fetched;
  }
  size_t hint = spans_.size();  // unknown: the first lookup searches
  for (int64_t offset = from_offset;
       offset < limit_offset && fetched.records.size() < max_records; ++offset) {
    fetched.next_offset = offset + 1;
    const Span* span = SpanAt(offset, hint);
    if (span != nullptr && span->kind != SpanKind::kData) continue;  // a marker
    if (span != nullptr && span->aborted && skip_aborted) continue;
    AppendRecordAt(offset, fetched.records);
  }
  RS_CHECK_LE(fetched.next_offset, limit_offset);
  return fetched;
}

const PartitionLog::Span* PartitionLog::SpanAt(int64_t offset, size_t& hint) const {
  if (hint >= spans_.size() || spans_[hint].first_offset > offset) {
    // The first span ending after `offset`.
    auto it = std::upper_bound(spans_.begin(), spans_.end(), offset,
                               [](int64_t o, const Span& s) { return o < s.end_offset; });
    hint = static_cast<size_t>(it - spans_.begin());
  }
  while (hint < spans_.size() && spans_[hint].end_offset <= offset) ++hint;
  if (hint == spans_.size() || spans_[hint].first_offset > offset) return nullptr;
  return &spans_[hint];
}

absl::StatusOr<int64_t> PartitionLog::AppendTransactional(int64_t producer_id,
                                                          std::string_view key,
                                                          std::optional<std::string_view> value,
                                                          int64_t timestamp_ms) {
  RS_CHECK_GE(producer_id, 0);
  absl::StatusOr<int64_t> offset = Append(key, value, timestamp_ms);
  if (!offset.ok()) return offset;
  open_transactions_.try_emplace(producer_id, *offset);
  if (!spans_.empty() && spans_.back().kind == SpanKind::kData &&
      spans_.back().producer_id == producer_id && spans_.back().end_offset == *offset) {
    spans_.back().end_offset = *offset + 1;
  } else {
    spans_.push_back(Span{*offset, *offset + 1, producer_id, SpanKind::kData, false});
  }
  return offset;
}

int64_t PartitionLog::WriteMarker(int64_t producer_id, bool commit, int64_t timestamp_ms,
                                  std::vector<std::pair<int64_t, int64_t>>* aborted) {
  auto open = open_transactions_.find(producer_id);
  RS_CHECK(open != open_transactions_.end(), "marker for producer {} without a transaction",
           producer_id);
  const int64_t first_offset = open->second;
  open_transactions_.erase(open);
  absl::StatusOr<int64_t> offset = Append("", std::nullopt, timestamp_ms);
  RS_CHECK(offset.ok(), "an empty record always fits");
  if (!commit) {
    // Kafka's aborted-transaction index, as flags on the spans of this transaction.
    for (auto it = spans_.rbegin(); it != spans_.rend() && it->end_offset > first_offset; ++it) {
      if (it->kind != SpanKind::kData || it->producer_id != producer_id) continue;
      it->aborted = true;
      if (aborted != nullptr) aborted->emplace_back(it->first_offset, it->end_offset);
    }
  }
  spans_.push_back(Span{*offset, *offset + 1, producer_id,
                        commit ? SpanKind::kCommitMarker : SpanKind::kAbortMarker, false});
  ++markers_written_;
  return *offset;
}

bool PartitionLog::HasOpenTransaction(int64_t producer_id) const {
  return open_transactions_.contains(producer_id);
}

int64_t PartitionLog::last_stable_offset() const {
  int64_t lso = end_offset();
  for (const auto& [producer_id, first_offset] : open_transactions_) {
    lso = std::min(lso, first_offset);
  }
  return std::max(lso, log_start_offset_);
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
  // Spans wholly below the log start are gone with their records.
  auto live_span = std::find_if(spans_.begin(), spans_.end(), [&](const Span& span) {
    return span.end_offset > log_start_offset_;
  });
  spans_.erase(spans_.begin(), live_span);
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
  size_t bytes = entries_.capacity() * sizeof(Entry) + chunks_.capacity() * sizeof(Chunk) +
                 spans_.capacity() * sizeof(Span);
  for (const Chunk& c : chunks_) bytes += c.capacity;
  return bytes;
}

}  // namespace restoresim::fakes
