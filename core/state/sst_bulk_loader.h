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
// Sorting: each entry carries 8 key bytes after the chunk's common key prefix, big-endian, and
// a radix sort orders the entries by them (RocksDB's bytewise order); entries that agree on
// all 8 are then ordered by comparing the keys' remaining bytes. A chunk handed to the writer
// thread is sorted by the restore thread, while the writer still writes the chunk before: the
// writer's part is then only the file, which kept the two threads' shares of a chunk even.
//
// Memory: a chunk copies each write's key and value bytes into blocks of its own (1 MiB, or one
// write's size when larger), one after the other, instead of keeping a string pair per write.
// The writer then visits them through one pointer per record (prefetched ahead: sorted order is
// random order), nothing is freed per record on either thread, and a finished chunk's blocks
// are reused by the next (no page faults once the first two chunks are buffered).
//
// Pipelining (IngestInBackground): a full chunk is sorted, written and ingested by a writer
// thread of the loader's own while the restore thread fetches and buffers the next, so that on
// two cores fetching overlaps writing; chunks are still ingested one at a time, in changelog
// order (the next waits for the one in flight), which point 2 above needs.
//
// Thread-safety: not thread-safe; its store's owner only. The writer thread touches only the
// chunk handed to it, the DB (thread-safe) and the loader's immutable members, and is joined
// before the owner looks at its chunk or result.
#ifndef RESTORESIM_CORE_STATE_SST_BULK_LOADER_H_
#define RESTORESIM_CORE_STATE_SST_BULK_LOADER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "core/state/key_value_store.h"
#include "core/state/rocksdb_options.h"
#include "core/sync/thread.h"

namespace restoresim {

struct BulkLoadStats {
  int64_t files = 0;          // SST files ingested
  int64_t records_in = 0;     // writes given to the loader and ingested
  int64_t entries_out = 0;    // entries written to files (after last-write-wins)
  int64_t tombstones_dropped = 0;
  int64_t background = 0;     // chunks written and ingested by the writer thread

  BulkLoadStats& operator+=(const BulkLoadStats& o) {
    files += o.files;
    records_in += o.records_in;
    entries_out += o.entries_out;
    tombstones_dropped += o.tombstones_dropped;
    background += o.background;
    return *this;
  }
};

class SstBulkLoader {
 public:
  // Chunk files are written to `scratch_dir` (created when needed) and moved into the DB.
  // `options` must be the options the DB was opened with, of the DB's library; they must
  // outlive the loader.
  SstBulkLoader(std::string scratch_dir, const RocksDbOptions& options);
  ~SstBulkLoader();  // waits for a chunk in flight
  SstBulkLoader(const SstBulkLoader&) = delete;
  SstBulkLoader& operator=(const SstBulkLoader&) = delete;

  // Copies the write's bytes into the buffered chunk.
  void Add(std::string_view key, const std::optional<std::string>& value);
  void Add(const KeyValueWrite& write) { Add(write.key, write.value); }
  // Nothing buffered and nothing in flight.
  bool empty() const { return buffer_.records.empty() && !in_flight_; }
  size_t buffered_records() const { return buffer_.records.size(); }
  size_t buffered_bytes() const { return buffer_.bytes; }

  // Writes every chunk (the one in flight first, then the buffered writes) as SST files and
  // ingests them into `db`, in order. With drop_tombstones, the buffered chunk's deletions are
  // left out (REQUIRES: nothing in `db` can hold any of its keys). On failure the chunks not
  // ingested are kept, so a retry writes them again, in order, and no file is left behind.
  [[nodiscard]] absl::Status IngestInto(rocksdb_t* db, bool drop_tombstones);
  // The buffered chunk is handed to a writer thread, which writes and ingests it into `db`
  // while the caller buffers the next one (fetching overlaps sorting and writing). At most one
  // chunk is in flight: the previous one is waited for first, and when it failed it is written
  // again here, and on a second failure that error is returned with the buffer untouched.
  [[nodiscard]] absl::Status IngestInBackground(rocksdb_t* db, bool drop_tombstones);
  // Waits for the chunk in flight (if any) and writes it again if it failed.
  [[nodiscard]] absl::Status Wait();
  // Drops the buffer (the store is being wiped or closed dirty), after the chunk in flight.
  void Clear();

  const BulkLoadStats& stats() const { return stats_; }

 private:
  struct Entry {
    uint64_t prefix;  // key bytes [common, common + 8), big-endian, zero-padded
    uint32_t index;   // arrival order in records
  };
  // One buffered write: its key's bytes at `data`, then its value's.
  struct Record {
    static constexpr uint32_t kTombstone = UINT32_MAX;  // value_size of a deletion
    const char* data;
    uint32_t key_size;
    uint32_t value_size;
    std::string_view key() const { return {data, key_size}; }
    bool tombstone() const { return value_size == kTombstone; }
    std::string_view value() const { return {data + key_size, tombstone() ? 0 : value_size}; }
  };
  struct Block {
    std::unique_ptr<char[]> data;
    size_t size = 0;
  };
  static constexpr size_t kBlockBytes = size_t{1} << 20;
  static constexpr size_t kSpareBlocksMax = 40;  // two 16 MiB chunks and a margin
  struct Chunk {
    std::vector<Record> records;
    std::vector<Block> blocks;  // the records' bytes; never moved once written
    size_t block_used = 0;      // bytes used of blocks.back()
    size_t bytes = 0;           // keys' and values' bytes
    size_t common = 0;          // length of the prefix every key shares with records[0]'s
    bool drop_tombstones = false;
    uint64_t file = 0;  // the chunk file's number
    // Sorted(), when taken after the last record came (else empty or stale: taken again).
    std::vector<Entry> sorted;
    std::vector<Entry> Sorted() const;
    void SortTies(std::vector<Entry>& entries) const;
    bool Less(const Entry& a, const Entry& b) const;
    void Prefetch(const std::vector<Entry>& sorted, size_t i) const;
  };
  struct Written {
    absl::Status status;
    int64_t entries = 0;
    int64_t dropped = 0;
  };
  // Writes `chunk` as one SST file and ingests it (any thread; touches no member but the
  // immutable ones).
  Written Ingest(const Chunk& chunk, rocksdb_t* db) const;
  absl::Status WriteFile(const Chunk& chunk, const std::vector<Entry>& sorted,
                         const std::string& path, Written& out) const;
  absl::Status WriteEntries(rocksdb_sstfilewriter_t* writer, const Chunk& chunk,
                            const std::vector<Entry>& sorted, const std::string& path,
                            Written& out) const;
  void Count(const Chunk& chunk, const Written& written);
  Chunk TakeBuffer(bool drop_tombstones);
  // Room for `size` bytes at the end of the buffered chunk's blocks (a spare block if it fits).
  char* Reserve(size_t size);
  // A finished chunk's blocks become spares; the chunk is left empty.
  void Recycle(Chunk& chunk);
  void JoinWriter();

  const std::string scratch_dir_;
  const RocksDbOptions& options_;
  const RocksDbLibrary& lib_;
  Chunk buffer_;
  // The chunk handed to the writer thread: in_flight_ while it runs or failed; the thread
  // owns chunk_ and result_ until joined, the owner afterwards.
  bool in_flight_ = false;
  Chunk chunk_;
  rocksdb_t* chunk_db_ = nullptr;
  Written result_;
  std::unique_ptr<Thread> writer_;  // the chunk in flight's; null once joined
  uint64_t next_file_ = 0;
  std::vector<Block> spare_;  // blocks of kBlockBytes for the next chunks
  BulkLoadStats stats_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_SST_BULK_LOADER_H_
