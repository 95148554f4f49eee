// RocksDbStore: the production key-value store, as Kafka Streams configures RocksDB for state
// stores (rocksdb_options.h): the write-ahead log off (the changelog is the log), durability at
// Flush() (a memtable flush). RocksDB reaches the disk through its own Env, not our file-system
// port, so it serves real runs only; under the simulator LogStore stands in with the same
// durability contract. It speaks RocksDB's C API through the process's RocksDB
// (rocksdb_library.h): Debian's linked library, or the one Kafka Streams bundles.
//
// Restoration takes one of two write paths (chosen at BeginRestore, per RocksDbStoreOptions):
//   WriteBatch  every batch of restored records is one WriteBatch into the memtable, as Kafka
//               Streams restores (the only path for standby updates and small restorations);
//   bulk        records are buffered in chunks, and each chunk becomes one sorted SST file
//               ingested into the DB (sst_bulk_loader.h, which argues why the contents are the
//               same). Chosen by default for a restoration of at least bulk_min_records.
// Buffered records behave as the KeyValueStore contract says: reads, writes, Flush and Close
// ingest them first.
//
// The changelog offset the contents reach (Commit, CommittedOffset) lives in a column family
// of its own, "offsets", flushed atomically with the data (atomic_flush), as Kafka 4.3 keeps
// it (KIP-1035). A database of an earlier version (a MANIFEST cut in its last records, a stale
// copy of the directory) comes back with the offset of that version.
//
// Thread-safety: as KeyValueStore: one owner at a time.
#ifndef RESTORESIM_CORE_STATE_ROCKSDB_STORE_H_
#define RESTORESIM_CORE_STATE_ROCKSDB_STORE_H_

#include <memory>
#include <string>
#include <vector>

#include "core/state/key_value_store.h"
#include "core/state/bulk_chunking.h"
#include "core/state/rocksdb_library.h"
#include "core/state/rocksdb_options.h"
#include "core/state/sst_bulk_loader.h"

namespace restoresim {

struct RocksDbStoreOptions {
  enum class BulkRestore { kAuto, kOff, kAlways };
  BulkRestore bulk_restore = BulkRestore::kAuto;
  // kAuto: a restoration expecting at least this many records takes the bulk path. Below it a
  // chunk file (and its ingestion: a manifest write, an fsync) costs more than the memtable.
  int64_t bulk_min_records = 100'000;
  // A chunk is written once its keys and values hold this many bytes; the memory is about
  // three times this (the chunk buffered, the one the writer thread writes). Smaller chunks
  // overlap fetching with writing more finely (the last chunk is written alone); each is a
  // file that overlaps the others, compacted after the restoration. 64 MiB before the writer
  // thread: on Kafka 4.4 with Kafka Streams' RocksDB, 1M records, 16 MiB restored at 1.38M/s
  // median, 64 MiB at 1.25M/s (2 rounds each, docs/BENCHMARKS.md).
  size_t bulk_chunk_bytes_max = 16 << 20;
  // The smallest chunk: chunks ramp up from it and halve towards the restoration's expected
  // end (BeginRestore's records_expected), bulk_chunking.h says why. 0, or at least the max:
  // every chunk the max.
  size_t bulk_chunk_bytes_min = 2 << 20;
  // A full chunk is written and ingested by the loader's writer thread while restoration goes
  // on (SstBulkLoader::IngestInBackground); false: by the restoring thread, which waits.
  bool bulk_pipelined = true;
};

struct RocksDbStoreStats {
  int64_t restores_bulk = 0;   // restorations that took the bulk path
  int64_t restores_batch = 0;  // ... the WriteBatch path
  BulkLoadStats bulk;          // summed over every bulk restoration
  // The chunks of the last bulk restoration, in order: their keys' and values' bytes.
  std::vector<int64_t> last_chunks_bytes;
};

class RocksDbStore final : public KeyValueStore {
 public:
  // Opens (creating if needed) the database in directory `dir`, with the process's RocksDB.
  static absl::StatusOr<std::unique_ptr<RocksDbStore>> Open(const std::string& dir,
                                                            std::string name,
                                                            RocksDbStoreOptions options = {});
  ~RocksDbStore() override;

  const std::string& name() const override { return name_; }
  absl::Status Put(std::string_view key, std::string_view value) override;
  absl::Status Delete(std::string_view key) override;
  absl::StatusOr<std::optional<std::string>> Get(std::string_view key) override;
  absl::Status ApplyBatch(const std::vector<KeyValueWrite>& writes) override;
  void BeginRestore(int64_t records_expected) override;
  absl::Status RestoreBatch(std::vector<KeyValueWrite> writes) override;
  absl::Status EndRestore() override;
  absl::Status Flush() override;
  absl::Status Commit(int64_t changelog_offset) override;
  std::optional<int64_t> CommittedOffset() const override { return committed_offset_; }
  absl::Status Close() override;
  absl::StatusOr<std::map<std::string, std::string>> ReadAll() override;
  uint64_t NumEntries() const override;
  bool IsOpen() const override { return db_ != nullptr; }
  // True when the directory held no database (no CURRENT file) and Open made a new one.
  bool CreatedOnOpen() const override { return created_; }

  RocksDbStoreStats stats() const;
  bool bulk_restoring() const { return bulk_ != nullptr; }

 private:
  RocksDbStore(const RocksDbLibrary& lib, RocksDbOptions db_options, std::string dir,
               std::string name, RocksDbStoreOptions options);
  absl::Status OpenDb(bool created);
  absl::Status FlushBoth();
  absl::Status SetAutoCompactions(bool on);
  absl::Status CheckOpen() const;
  absl::Status ReadCommittedOffset();
  bool TakesBulkPath(int64_t records_expected) const;
  // Hands the full chunk to be written (by the writer thread when pipelined).
  absl::Status CutChunk();
  bool DbIsEmpty() const;
  // Ingests the buffered chunk (if any); the bulk path stays on.
  absl::Status IngestBuffered();
  // Ingests the buffered chunk and leaves the bulk path (a write outside restoration).
  absl::Status LeaveBulk();

  const RocksDbLibrary& lib_;
  rocksdb_t* db_ = nullptr;
  rocksdb_column_family_handle_t* data_ = nullptr;     // the default family: the entries
  rocksdb_column_family_handle_t* offsets_ = nullptr;  // the changelog offset (Commit)
  rocksdb_writeoptions_t* no_wal_ = nullptr;  // the changelog is the log, as in Kafka Streams
  rocksdb_readoptions_t* read_ = nullptr;
  std::optional<int64_t> committed_offset_;
  const RocksDbOptions db_options_;  // what db_ was opened with (chunk files need the same)
  const std::string dir_;
  std::string name_;
  const RocksDbStoreOptions options_;
  std::unique_ptr<SstBulkLoader> bulk_;  // non-null while on the bulk path
  bool bulk_into_empty_ = false;  // the DB held nothing older than the buffered chunk
  bool compactions_off_ = false;  // turned off for a bulk restoration (BeginRestore)
  std::optional<BulkChunking> chunking_;  // set while on the bulk path
  RocksDbStoreStats stats_;       // bulk figures of finished restorations
  bool created_ = false;          // see CreatedOnOpen
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_ROCKSDB_STORE_H_
