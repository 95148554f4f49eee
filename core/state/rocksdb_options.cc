#include "core/state/rocksdb_options.h"

#include <unistd.h>

#include <algorithm>

namespace restoresim {
namespace {

constexpr int kInfoLogErrorLevel = 3;  // rocksdb::InfoLogLevel::ERROR_LEVEL

}  // namespace

RocksDbOptions KafkaStreamsRocksDbOptions(const RocksDbLibrary& lib) {
  rocksdb_block_based_table_options_t* table = lib.rocksdb_block_based_options_create();
  rocksdb_cache_t* cache = lib.rocksdb_cache_create_lru(kRocksDbBlockCacheBytes);
  lib.rocksdb_block_based_options_set_block_cache(table, cache);  // shared: ours may go
  lib.rocksdb_cache_destroy(cache);
  lib.rocksdb_block_based_options_set_block_size(table, kRocksDbBlockBytes);
  // Java's `new BloomFilter()`: 10 bits per key, a full (not block-based) filter. The table
  // options take the policy over.
  lib.rocksdb_block_based_options_set_filter_policy(
      table, lib.rocksdb_filterpolicy_create_bloom_full(10));

  RocksDbOptions options(lib, lib.rocksdb_options_create());
  rocksdb_options_t* o = options.get();
  lib.rocksdb_options_set_block_based_table_factory(o, table);  // copies the table options
  lib.rocksdb_block_based_options_destroy(table);
  lib.rocksdb_options_set_optimize_filters_for_hits(o, 1);
  lib.rocksdb_options_set_write_buffer_size(o, kRocksDbWriteBufferBytes);
  lib.rocksdb_options_set_compression(o, rocksdb_no_compression);
  lib.rocksdb_options_set_compaction_style(o, rocksdb_universal_compaction);
  lib.rocksdb_options_set_max_write_buffer_number(o, kRocksDbWriteBuffersMax);
  lib.rocksdb_options_set_create_if_missing(o, 1);
  lib.rocksdb_options_set_info_log_level(o, kInfoLogErrorLevel);
  // Kafka Streams: Math.max(availableProcessors(), 2).
  lib.rocksdb_options_increase_parallelism(
      o, std::max(2, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN))));
  // avoid_flush_during_shutdown stays false (RocksDB's default; ours, not Kafka Streams'): a
  // store closed cleanly keeps its memtable, as the WAL is off.
  return options;
}

absl::Status SetAutoCompactions(const RocksDbLibrary& lib, rocksdb_t* db, bool on) {
  const char* keys[] = {"disable_auto_compactions"};
  const char* values[] = {on ? "false" : "true"};
  char* error = nullptr;
  lib.rocksdb_set_options(db, 1, keys, values, &error);
  return lib.Check(error, on ? "turn compactions on" : "turn compactions off");
}

}  // namespace restoresim
