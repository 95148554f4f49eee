#include "core/state/rocksdb_options.h"

#include <rocksdb/cache.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>

#include <unistd.h>

#include <algorithm>

namespace restoresim {

rocksdb::Options KafkaStreamsRocksDbOptions() {
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(kRocksDbBlockCacheBytes);
  table.block_size = kRocksDbBlockBytes;
  // Java's `new BloomFilter()`: 10 bits per key, a full (not block-based) filter.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));

  rocksdb::Options options;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  options.optimize_filters_for_hits = true;
  options.write_buffer_size = kRocksDbWriteBufferBytes;
  options.compression = rocksdb::kNoCompression;
  options.compaction_style = rocksdb::kCompactionStyleUniversal;
  options.max_write_buffer_number = kRocksDbWriteBuffersMax;
  options.create_if_missing = true;
  options.error_if_exists = false;
  options.info_log_level = rocksdb::InfoLogLevel::ERROR_LEVEL;
  // Kafka Streams: Math.max(availableProcessors(), 2).
  options.IncreaseParallelism(std::max(2, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN))));
  // Ours, not Kafka Streams': a store closed cleanly keeps its memtable (the WAL is off).
  options.avoid_flush_during_shutdown = false;
  return options;
}

}  // namespace restoresim
