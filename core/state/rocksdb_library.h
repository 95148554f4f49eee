// RocksDbLibrary: the RocksDB a process uses, as a table of RocksDB's C API (rocksdb/c.h), and
// the one translation of its errors. Every part of restoresim that talks to RocksDB (the store,
// its bulk loader, the benchmark's limits) goes through it, so the same code runs over either
// of two builds of RocksDB, chosen once per process:
//
//   linked   Debian's librocksdb (the build dependency, 7.8.3 on bookworm), the default. Debian
//            builds it with assertions on (about 6,400 assert calls in the library).
//   loaded   a shared library exporting RocksDB's C API, named by the environment variable
//            RESTORESIM_ROCKSDB_LIBRARY: in practice the native library inside rocksdbjni, the
//            RocksDB Kafka Streams itself runs on (`tools/kafka/peer rocksdb-library` extracts
//            it from the jar Maven fetched for the Kafka Streams peer: 10.1.3 for Kafka Streams
//            4.4, a release build). It is opened with RTLD_DEEPBIND, so its own calls bind to
//            its own RocksDB and not to the linked one, whose C++ symbols have the same names.
//
// Kafka Streams' counterpart: the RocksDB JNI library rocksdbjni loads (NativeLibraryLoader).
// The C API's prototypes are those of the linked library's header; every function in the
// table has had the same prototype from 7.8.3 to 10.1.3. rocksdb_flush_cfs (an atomic flush
// of several column families) came in 8.3: for an older linked library, a shim over its C++
// API stands in for it (rocksdb_library.cc).
//
// Errors: the C API reports a failure as a malloc'd message, RocksDB's Status::ToString
// ("Corruption: ...", "IO error: ..."), whose leading words name the status code; Check turns
// it into the port's status as the store's error table says: NotFound kNotFound, Corruption
// kDataLoss, IO error / busy / timed out / try again kUnavailable (retryable), Invalid
// argument kInvalidArgument, anything else kInternal.
//
// Thread-safety: RocksDb() may be called from any thread; the table is immutable once made.
#ifndef RESTORESIM_CORE_STATE_ROCKSDB_LIBRARY_H_
#define RESTORESIM_CORE_STATE_ROCKSDB_LIBRARY_H_

#include <rocksdb/c.h>

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace restoresim {

// The environment variable naming a RocksDB shared library to load instead of the linked one.
inline constexpr char kRocksDbLibraryEnv[] = "RESTORESIM_ROCKSDB_LIBRARY";

// X(name): every C API function restoresim calls.
#define RESTORESIM_ROCKSDB_C_API(X)                                                          \
  X(rocksdb_options_create) X(rocksdb_options_destroy) X(rocksdb_options_set_create_if_missing) \
  X(rocksdb_options_set_create_missing_column_families) X(rocksdb_options_set_atomic_flush)    \
  X(rocksdb_options_set_write_buffer_size) X(rocksdb_options_set_max_write_buffer_number)      \
  X(rocksdb_options_set_compression) X(rocksdb_options_set_compaction_style)                  \
  X(rocksdb_options_set_optimize_filters_for_hits) X(rocksdb_options_increase_parallelism)    \
  X(rocksdb_options_set_info_log_level) X(rocksdb_options_set_block_based_table_factory)      \
  X(rocksdb_block_based_options_create) X(rocksdb_block_based_options_destroy)                \
  X(rocksdb_block_based_options_set_block_size) X(rocksdb_block_based_options_set_block_cache) \
  X(rocksdb_block_based_options_set_filter_policy) X(rocksdb_cache_create_lru)                \
  X(rocksdb_cache_destroy) X(rocksdb_filterpolicy_create_bloom_full)                          \
  X(rocksdb_open) X(rocksdb_open_column_families) X(rocksdb_open_for_read_only)            \
  X(rocksdb_close) X(rocksdb_put)                                                             \
  X(rocksdb_list_column_families) X(rocksdb_list_column_families_destroy)                     \
  X(rocksdb_column_family_handle_destroy) X(rocksdb_put_cf) X(rocksdb_delete_cf)              \
  X(rocksdb_get_cf) X(rocksdb_write) X(rocksdb_writebatch_create) X(rocksdb_writebatch_destroy) \
  X(rocksdb_writebatch_clear) X(rocksdb_writebatch_put) X(rocksdb_writebatch_delete)          \
  X(rocksdb_writeoptions_create) X(rocksdb_writeoptions_destroy)                              \
  X(rocksdb_writeoptions_disable_WAL) X(rocksdb_readoptions_create)                           \
  X(rocksdb_readoptions_destroy) X(rocksdb_flushoptions_create) X(rocksdb_flushoptions_destroy) \
  X(rocksdb_flushoptions_set_wait) X(rocksdb_create_iterator) X(rocksdb_create_iterator_cf)   \
  X(rocksdb_iter_seek_to_first) X(rocksdb_iter_valid) X(rocksdb_iter_key) X(rocksdb_iter_value) \
  X(rocksdb_iter_next) X(rocksdb_iter_get_error) X(rocksdb_iter_destroy)                      \
  X(rocksdb_property_int_cf) X(rocksdb_envoptions_create) X(rocksdb_envoptions_destroy)       \
  X(rocksdb_sstfilewriter_create) X(rocksdb_sstfilewriter_open) X(rocksdb_sstfilewriter_put)  \
  X(rocksdb_sstfilewriter_delete) X(rocksdb_sstfilewriter_finish)                             \
  X(rocksdb_sstfilewriter_destroy) X(rocksdb_ingestexternalfileoptions_create)                \
  X(rocksdb_ingestexternalfileoptions_destroy)                                                \
  X(rocksdb_ingestexternalfileoptions_set_move_files)                                         \
  X(rocksdb_ingestexternalfileoptions_set_allow_blocking_flush)                               \
  X(rocksdb_ingest_external_file) X(rocksdb_set_options) X(rocksdb_free)

struct RocksDbLibrary {
#define RESTORESIM_ROCKSDB_FIELD(name) decltype(&::name) name = nullptr;
  RESTORESIM_ROCKSDB_C_API(RESTORESIM_ROCKSDB_FIELD)
#undef RESTORESIM_ROCKSDB_FIELD
  // rocksdb_flush_cfs: the library's own, or the shim over the linked library's C++ API.
  void (*flush_cfs)(rocksdb_t* db, const rocksdb_flushoptions_t* options,
                    rocksdb_column_family_handle_t** families, int count,
                    char** errptr) = nullptr;
  // What was loaded: "linked" or the loaded library's path.
  std::string source;
  bool loaded = false;  // true: a library named by RESTORESIM_ROCKSDB_LIBRARY

  // The port's status for a C API error message (taking ownership of it; null is OK), with
  // `what` saying which call failed.
  absl::Status Check(char* error, std::string_view what) const;
  // Visits every entry of `it` in order from the first, destroys it, and returns its error (as
  // Check, with `what`).
  absl::Status ForEach(rocksdb_iterator_t* it,
                       const std::function<void(std::string_view key, std::string_view value)>&
                           visit,
                       std::string_view what) const;
};

// The process's RocksDB: made at the first call (loading RESTORESIM_ROCKSDB_LIBRARY if set);
// an error when that library cannot be opened or lacks a function, and the same error at
// every later call.
absl::StatusOr<const RocksDbLibrary*> RocksDb();

// The linked library, whatever the environment says (tests that compare the two).
const RocksDbLibrary& LinkedRocksDb();

// Opens the library at `path` on its own (not as the process's choice): for tests and for
// `--rocksdb-library` to check a path before the process commits to it.
absl::StatusOr<RocksDbLibrary> LoadRocksDbLibrary(const std::string& path);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_ROCKSDB_LIBRARY_H_
