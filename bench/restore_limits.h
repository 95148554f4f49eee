// The limits a restore loop is measured against, on the very records it restores:
//   consume     raw batch consumption of the changelog (Backend::RawConsume): no copies, no
//               store;
//   write       the store's write path alone, from records already in memory: WriteBatches of
//               batch_records records (WAL off, Kafka Streams' options: rocksdb_options.h), or
//               the bulk path (SstBulkLoader chunks of bulk_chunk_bytes_max);
//   overlapped  fetch ‖ write on two threads: one consumes and copies records into batches, the
//               other writes them, through a bounded queue — what a restore loop could reach if
//               fetching cost the writer nothing.
// Each store written is checked afterwards against the changelog's fold (StoreDigest); opening
// and closing the DBs is outside the timed span, as it is for the runtime and Kafka Streams.
//
// Thread-safety: each function runs on the calling thread (overlapped starts one more).
#ifndef RESTORESIM_BENCH_RESTORE_LIMITS_H_
#define RESTORESIM_BENCH_RESTORE_LIMITS_H_

#include <string>
#include <vector>

#include "core/state/rocksdb_store.h"
#include "absl/status/statusor.h"
#include "bench/backend.h"
#include "bench/changelog_data.h"
#include "bench/measure.h"

namespace restoresim::bench {

enum class WritePath { kWriteBatch, kBulk };
const char* WritePathName(WritePath path);

struct LimitConfig {
  std::string dir;  // DBs go to <dir>/p<partition>; the caller removes <dir>
  int32_t batch_records = 1000;
  // Chunks as the store cuts them (core/state/bulk_chunking.h): from the smallest, ramping up
  // and halving towards each partition's expected records (none given: every chunk the max).
  size_t bulk_chunk_bytes_max = RocksDbStoreOptions{}.bulk_chunk_bytes_max;
  size_t bulk_chunk_bytes_min = RocksDbStoreOptions{}.bulk_chunk_bytes_min;
  std::vector<int64_t> records_per_partition;
};

absl::StatusOr<Measurement> MeasureConsume(Backend& backend, const std::string& topic,
                                           int32_t partitions);

// `changelog[p]`: the records of partition p; `expected[p]` the digest its store must have.
absl::StatusOr<Measurement> MeasureWrites(const std::vector<std::vector<KeyValueWrite>>& changelog,
                                          WritePath path, const LimitConfig& config,
                                          const std::vector<StoreDigest>& expected);

absl::StatusOr<Measurement> MeasureOverlapped(Backend& backend, const std::string& topic,
                                              int32_t partitions, WritePath path,
                                              const LimitConfig& config,
                                              const std::vector<StoreDigest>& expected);

// The digest of the RocksDB store in `dir` (opened read-only).
absl::StatusOr<StoreDigest> DigestOfRocksDb(const std::string& dir);

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_RESTORE_LIMITS_H_
