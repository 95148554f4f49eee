// PartitionLog: one partition of the fake broker. An append-only sequence of records with
// consecutive offsets from the log start offset to the end offset (the high watermark).
//
// Transactions (Kafka's ProducerStateManager and control batches, paraphrased): a record
// appended for a producer id belongs to that producer's open transaction here, which starts
// at its first record; a commit or abort marker (a control record: no key, no value, never
// returned to a client) ends it and takes an offset of its own. The last stable offset (LSO)
// is the first offset of the earliest open transaction, else the end offset. Records of an
// aborted transaction stay in the log (read_uncommitted returns them) and are marked aborted
// (Kafka's aborted-transaction index), so that read_committed skips them. Plain appends (no
// producer id) are outside any transaction and always committed. A log without transactions
// keeps no transaction state at all.
// DeleteRecordsBefore moves the log start up (Kafka's deleteRecords, or retention); the records
// below it are gone and their memory is released as whole chunks fall below it.
//
// Memory layout (why: a restore benchmark holds millions of changelog records): every payload
// is stored once, key then value, in chunked byte arenas; the per-record index is one 24-byte
// Entry. Chunks grow from 4 KiB to 1 MiB so that a thousand small partitions stay small and a
// large one wastes at most one partly filled chunk. MemoryBytes() sums what is allocated.
//
// Thread-safety: not thread-safe; the broker calls it under its mutex.
#ifndef RESTORESIM_FAKES_FAKE_LOG_H_
#define RESTORESIM_FAKES_FAKE_LOG_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/transport/transport.h"

namespace restoresim::fakes {

class PartitionLog {
 public:
  // Kafka's message.max.bytes is 1 MiB by default; a record past this is surely a test bug.
  static constexpr size_t kRecordBytesMax = size_t{64} << 20;
  static constexpr size_t kChunkBytesMin = size_t{4} << 10;
  static constexpr size_t kChunkBytesMax = size_t{1} << 20;

  PartitionLog() = default;
  PartitionLog(PartitionLog&&) = default;
  PartitionLog& operator=(PartitionLog&&) = default;

  // Appends one record (value nullopt: a tombstone) and returns its offset.
  absl::StatusOr<int64_t> Append(std::string_view key, std::optional<std::string_view> value,
                                 int64_t timestamp_ms);

  // Appends one record to the open transaction of `producer_id` here (starting one if none).
  absl::StatusOr<int64_t> AppendTransactional(int64_t producer_id, std::string_view key,
                                              std::optional<std::string_view> value,
                                              int64_t timestamp_ms);
  // Ends the open transaction of `producer_id` with a commit or an abort marker and returns the
  // marker's offset; an abort adds the [first, end) offset ranges of the records it took back
  // to `aborted` (when given). REQUIRES: HasOpenTransaction(producer_id).
  int64_t WriteMarker(int64_t producer_id, bool commit, int64_t timestamp_ms,
                      std::vector<std::pair<int64_t, int64_t>>* aborted = nullptr);
  bool HasOpenTransaction(int64_t producer_id) const;
  int64_t last_stable_offset() const;

  // Up to max_records data records from from_offset on (control records left out, aborted
  // ones included). kOutOfRange when from_offset is outside [log_start_offset(),
  // end_offset()]; from_offset == end_offset() gives no records.
  absl::StatusOr<std::vector<ConsumerRecord>> Read(int64_t from_offset, size_t max_records) const;

  // What a consumer fetch reads: up to max_records data records in [from_offset, limit_offset),
  // leaving out control records and, when skip_aborted, records of aborted transactions.
  // next_offset is one past the last offset read over (returned or skipped): where the
  // consumer's position goes. REQUIRES: log start <= from_offset <= limit_offset <= end.
  struct Fetched {
    std::vector<ConsumerRecord> records;
    int64_t next_offset = 0;
  };
  Fetched Fetch(int64_t from_offset, int64_t limit_offset, size_t max_records,
                bool skip_aborted) const;

  // Moves the log start offset up to `offset` (never down). kOutOfRange past the end offset,
  // kInvalidArgument when negative. Returns the new log start offset.
  absl::StatusOr<int64_t> DeleteRecordsBefore(int64_t offset);

  int64_t log_start_offset() const { return log_start_offset_; }
  int64_t end_offset() const { return base_offset_ + static_cast<int64_t>(entries_.size()); }
  // Offsets in [log start, end), control records included.
  int64_t record_count() const { return end_offset() - log_start_offset_; }
  // Control records (markers) written, and records of aborted transactions, over the log's
  // life (for tests and metrics).
  int64_t markers_written() const { return markers_written_; }

  // Bytes this log has allocated (capacities, not sizes): the entry index, the chunk table and
  // every chunk. The payload bytes of retained records are included.
  size_t MemoryBytes() const;

 private:
  // The index of one record. value_length kTombstone marks a record without a value.
  struct Entry {
    uint32_t chunk;         // sequence number of the chunk holding key and value
    uint32_t chunk_offset;  // where the key starts in it; the value follows the key
    uint32_t key_length;
    uint32_t value_length;
    int64_t timestamp_ms;
  };
  static_assert(sizeof(Entry) == 24, "the index entry is the per-record overhead");
  static constexpr uint32_t kTombstone = UINT32_MAX;

  struct Chunk {
    std::unique_ptr<char[]> bytes;
    uint32_t capacity = 0;
    uint32_t used = 0;
    int64_t end_offset = 0;  // one past the last record stored in this chunk
  };

  // A run of consecutive offsets written by one transactional producer: its data records, or
  // one marker. Offsets in no span are plain (non-transactional) records.
  enum class SpanKind : uint8_t { kData, kCommitMarker, kAbortMarker };
  struct Span {
    int64_t first_offset;
    int64_t end_offset;  // exclusive
    int64_t producer_id;
    SpanKind kind;
    bool aborted;  // kData: its transaction ended with an abort marker
  };
  // The span holding `offset`, or null. `hint` (an index into spans_) speeds up a scan.
  const Span* SpanAt(int64_t offset, size_t& hint) const;

  // Room for `bytes` more payload bytes; returns the chunk's sequence number.
  uint32_t ChunkWithRoom(size_t bytes);
  const Chunk& chunk(uint32_t sequence) const;
  // Appends the data record at `offset` to `out`.
  void AppendRecordAt(int64_t offset, std::vector<ConsumerRecord>& out) const;
  // Frees chunks wholly below the log start and compacts the index when its dead prefix is as
  // large as its live part (amortised O(1) per deleted record).
  void ReleaseBelowLogStart();

  std::vector<Entry> entries_;  // entries_[i] is offset base_offset_ + i
  int64_t base_offset_ = 0;     // <= log_start_offset_
  int64_t log_start_offset_ = 0;
  std::vector<Chunk> chunks_;  // chunks_[i] has sequence number first_chunk_ + i
  uint32_t first_chunk_ = 0;
  size_t next_chunk_bytes_ = kChunkBytesMin;
  std::vector<Span> spans_;                     // ascending, disjoint; empty without transactions
  std::map<int64_t, int64_t> open_transactions_;  // producer id -> first offset of its open one
  int64_t markers_written_ = 0;
};

}  // namespace restoresim::fakes

#endif  // RESTORESIM_FAKES_FAKE_LOG_H_
