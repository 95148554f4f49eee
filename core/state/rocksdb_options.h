// The RocksDB options of a state store, as Kafka Streams' RocksDBStore#openDB sets them (4.x):
// 16 MiB write buffers (3 of them), no compression, universal compaction, a 50 MiB LRU block
// cache per store with 4 KiB blocks and a Bloom filter, filters optimised for hits, background
// parallelism of max(cores, 2), errors only in the info log. Shared by RocksDbStore, its bulk
// loader (an SST file must be built with the table options of the DB it is ingested into) and
// the restore benchmark's raw RocksDB limits, so all three write the same way, through the
// process's RocksDB (rocksdb_library.h).
//
// Thread-safety: RocksDbOptions is immutable once made; RocksDB reads it from any thread.
#ifndef RESTORESIM_CORE_STATE_ROCKSDB_OPTIONS_H_
#define RESTORESIM_CORE_STATE_ROCKSDB_OPTIONS_H_

#include <cstddef>

#include "core/state/rocksdb_library.h"

namespace restoresim {

inline constexpr size_t kRocksDbWriteBufferBytes = 16 << 20;  // WRITE_BUFFER_SIZE
inline constexpr int kRocksDbWriteBuffersMax = 3;             // MAX_WRITE_BUFFERS
inline constexpr size_t kRocksDbBlockCacheBytes = 50 << 20;   // BLOCK_CACHE_SIZE
inline constexpr size_t kRocksDbBlockBytes = 4096;            // BLOCK_SIZE

// A rocksdb_options_t of `lib`, destroyed with it. Move-only.
class RocksDbOptions {
 public:
  RocksDbOptions(const RocksDbLibrary& lib, rocksdb_options_t* options)
      : lib_(&lib), options_(options) {}
  RocksDbOptions(RocksDbOptions&& other) noexcept
      : lib_(other.lib_), options_(other.options_) {
    other.options_ = nullptr;
  }
  RocksDbOptions& operator=(RocksDbOptions&&) = delete;
  ~RocksDbOptions() {
    if (options_ != nullptr) lib_->rocksdb_options_destroy(options_);
  }

  rocksdb_options_t* get() const { return options_; }
  const RocksDbLibrary& lib() const { return *lib_; }

 private:
  const RocksDbLibrary* lib_;
  rocksdb_options_t* options_;
};

// Options for opening (create_if_missing) a store's DB, with a block cache of its own.
RocksDbOptions KafkaStreamsRocksDbOptions(const RocksDbLibrary& lib);

// Turns the default family's auto compactions of an open `db` on or off (a bulk restoration
// compacts its overlapping chunk files once, after it).
absl::Status SetAutoCompactions(const RocksDbLibrary& lib, rocksdb_t* db, bool on);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_ROCKSDB_OPTIONS_H_
