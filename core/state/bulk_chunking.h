// Where a bulk restoration cuts its chunks (RocksDbStore's bulk path, and the benchmark's bulk
// limit, which must write the way the store does). A chunk becomes one SST file, written by
// the loader's writer thread while the restore thread fetches the next (SstBulkLoader). Two
// ends of that pipeline have nothing to overlap: the writer waits for the first chunk, and
// the last chunk is written after the last fetch. So chunks ramp up from `min_bytes`,
// doubling, to `max_bytes`, and halve towards the restoration's expected end: each is cut at
// half of what remains (the buffer and the records still expected, at the mean size of the
// records so far), never below `min_bytes`. `min_bytes` of 0 or at least `max_bytes`: every
// chunk `max_bytes`, as before (16 MiB, no ramp).
//
// Kafka Streams has no bulk path since 3.0 (RocksDBStore's prepareForBulkload before it wrote
// through the memtable with compactions off); RocksDB's own advice for bulk loads is SST
// ingestion, which says nothing of the chunks' sizes.
//
// Thread-safety: none; owned by the restoring thread.
#ifndef RESTORESIM_CORE_STATE_BULK_CHUNKING_H_
#define RESTORESIM_CORE_STATE_BULK_CHUNKING_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/state/sst_bulk_loader.h"
#include "core/util/check.h"

namespace restoresim {

class BulkChunking {
 public:
  BulkChunking(size_t min_bytes, size_t max_bytes, int64_t records_expected)
      : min_(min_bytes), max_(max_bytes), expected_(std::max<int64_t>(0, records_expected)) {
    RS_CHECK(max_ > 0, "chunks of at most {} bytes", max_);
  }

  // A restoration that resumes expects `records` more from where it stopped.
  void ExpectMore(int64_t records) { expected_ = records_ + std::max<int64_t>(0, records); }
  // Records (and their keys' and values' bytes) added to the buffer.
  void Added(int64_t records, int64_t bytes) {
    RS_CHECK(records >= 0 && bytes >= 0, "added {} records of {} bytes", records, bytes);
    records_ += records;
    bytes_ += bytes;
  }
  // A chunk was handed to be written.
  void Cut() { ++cut_; }

  // Whether `loader`'s buffered chunk is due to be cut (before more is added).
  bool Full(const SstBulkLoader& loader) const {
    const size_t buffered = loader.buffered_bytes();
    return loader.buffered_records() > 0 && buffered >= Limit(buffered);
  }
  // Adds `writes` to `loader`'s buffer, counting them.
  void AddTo(SstBulkLoader& loader, const std::vector<KeyValueWrite>& writes) {
    const size_t before = loader.buffered_bytes();
    for (const KeyValueWrite& w : writes) loader.Add(w);
    RS_CHECK_GE(loader.buffered_bytes(), before);
    Added(static_cast<int64_t>(writes.size()),
          static_cast<int64_t>(loader.buffered_bytes() - before));
  }

  // The buffered bytes at which the chunk is cut.
  size_t Limit(size_t buffered_bytes) const {
    if (min_ == 0 || min_ >= max_) return max_;
    size_t limit = cut_ >= 40 || (min_ << cut_) >= max_ ? max_ : min_ << cut_;
    if (records_ > 0 && expected_ > records_) {
      const double mean = static_cast<double>(bytes_) / static_cast<double>(records_);
      const double remaining = static_cast<double>(buffered_bytes) +
                               mean * static_cast<double>(expected_ - records_);
      limit = std::min(limit, std::max(min_, static_cast<size_t>(remaining / 2)));
    }
    RS_CHECK(limit >= min_ && limit <= max_, "chunk limit {} outside [{}, {}]", limit, min_,
             max_);
    return limit;
  }

 private:
  const size_t min_;
  const size_t max_;
  int64_t expected_;
  int64_t records_ = 0;
  int64_t bytes_ = 0;
  size_t cut_ = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_BULK_CHUNKING_H_
