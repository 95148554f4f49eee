// SstBulkLoader: the bulk path of restoration into RocksDB. Instead of inserting every changelog
// record into the memtable (a skip-list insert per record, then a flush and compactions), it
// buffers a chunk of records in changelog order, sorts it by key, writes the chunk's final
// state as one sorted SST file (rocksdb::SstFileWriter) and ingests that file
// (DB::IngestExternalFile, moved, not copied), through the DB's RocksDB (rocksdb_library.h).
//
// Why the result equals the WriteBatch path (the same writes applied in order):
//  1. Within a chunk the last write of a key wins: entries are ordered by (key, arrival), and
//     only each key's last write goes into the file — a put, or a tombstone as a deletion entry
//     (SstFileWriter::Delete), which shadows older versions exactly as a Delete does.
//  2. Across chunks and against what the DB held before: RocksDB assigns a file that overlaps
//     the key range of anything in the DB a global sequence number above every existing one, so
//     each of its entries is newer than every older version of its key; a file that overlaps
//     nothing shares no key with the DB, so where RocksDB places it cannot change any read.
//     Files are ingested one at a time, in changelog order: each is newer than all before it.
//  3. The memtable: a file overlapping it makes RocksDB flush it first (allow_blocking_flush),
//     so earlier memtable writes are older than the file.
//  4. A deletion is left out only where nothing older can hold its key: the first chunk of a
//     restoration into an empty DB (the caller says so).
// core/state/sst_bulk_loader_test.cc checks the equivalence on random changelogs (many key
// distributions, empty and non-empty DBs, several chunks) by comparing whole store contents.
//
// Sorting: each entry carries 8 key bytes after the chunk's common key prefix, big-endian, so
// most comparisons are one integer comparison (RocksDB's bytewise order); ties fall back to
// comparing the keys' remaining bytes.
//
// Thread-safety: not thread-safe; its store's owner only.
#ifndef RESTORESIM_CORE_STATE_SST_BULK_LOADER_H_
#define RESTORESIM_CORE_STATE_SST_BULK_LOADER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/state/key_value_store.h"
#include "core/state/rocksdb_options.h"

namespace restoresim {

struct BulkLoadStats {
  int64_t files = 0;          // SST files ingested
  int64_t records_in = 0;     // writes given to the loader and ingested
  int64_t entries_out = 0;    // entries written to files (after last-write-wins)
  int64_t tombstones_dropped = 0;
};

class SstBulkLoader {
 public:
  // Chunk files are written to `scratch_dir` (created when needed) and moved into the DB.
  // `options` must be the options the DB was opened with, of the DB's library; they must
  // outlive the loader.
  SstBulkLoader(std::string scratch_dir, const RocksDbOptions& options);

  void Add(KeyValueWrite write);
  bool empty() const { return writes_.empty(); }
  size_t buffered_records() const { return writes_.size(); }
  size_t buffered_bytes() const { return bytes_; }

  // Writes the buffered writes as one SST file and ingests it into `db`. With drop_tombstones,
  // deletions are left out (REQUIRES: nothing in `db` can hold any of the chunk's keys). On
  // failure the buffer is kept, so a retry writes the same chunk, and no file is left behind.
  [[nodiscard]] absl::Status IngestInto(rocksdb_t* db, bool drop_tombstones);
  // Drops the buffer (the store is being wiped or closed dirty).
  void Clear();

  const BulkLoadStats& stats() const { return stats_; }

 private:
  struct Entry {
    uint64_t prefix;  // key bytes [common_, common_ + 8), big-endian, zero-padded
    uint32_t index;   // arrival order in writes_
  };
  std::vector<Entry> SortedEntries() const;
  bool Less(const Entry& a, const Entry& b) const;
  void Prefetch(const std::vector<Entry>& sorted, size_t i) const;
  absl::Status WriteFile(const std::vector<Entry>& sorted, bool drop_tombstones,
                         const std::string& path, int64_t& written);
  absl::Status WriteEntries(rocksdb_sstfilewriter_t* writer, const std::vector<Entry>& sorted,
                            bool drop_tombstones, const std::string& path, int64_t& written);

  const std::string scratch_dir_;
  const RocksDbOptions& options_;
  const RocksDbLibrary& lib_;
  std::vector<KeyValueWrite> writes_;
  size_t bytes_ = 0;
  size_t common_ = 0;  // length of the prefix every buffered key shares with writes_[0]
  uint64_t next_file_ = 0;
  BulkLoadStats stats_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_SST_BULK_LOADER_H_
