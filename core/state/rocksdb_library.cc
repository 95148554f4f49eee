#include "core/state/rocksdb_library.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/version.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/util/check.h"

namespace restoresim {
namespace {

#if ROCKSDB_MAJOR < 8 || (ROCKSDB_MAJOR == 8 && ROCKSDB_MINOR < 3)
// The linked library predates rocksdb_flush_cfs. Its C API wraps its C++ objects as one
// pointer each (db/c.cc of RocksDB 7.8: `struct rocksdb_t { DB* rep; }`, `struct
// rocksdb_column_family_handle_t { ColumnFamilyHandle* rep; }`); the shim relies on exactly
// that, and only for the linked library, whose version these headers are.
struct LinkedDb {
  rocksdb::DB* rep;
};
struct LinkedFamily {
  rocksdb::ColumnFamilyHandle* rep;
};

// rocksdb_flush_cfs over the C++ API: one atomic flush of the families when the DB was opened
// with atomic_flush (DB::Flush with a vector), waiting for it (the only way we flush).
void FlushFamiliesShim(rocksdb_t* db, const rocksdb_flushoptions_t* options,
                       rocksdb_column_family_handle_t** families, int count, char** errptr) {
  (void)options;
  RS_CHECK(db != nullptr && count > 0, "flush of {} column families", count);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  for (int i = 0; i < count; ++i) {
    handles.push_back(reinterpret_cast<LinkedFamily*>(families[i])->rep);
  }
  const rocksdb::Status s =
      reinterpret_cast<LinkedDb*>(db)->rep->Flush(rocksdb::FlushOptions(), handles);
  if (!s.ok()) {
    std::free(*errptr);
    *errptr = strdup(s.ToString().c_str());
  }
}
constexpr auto kLinkedFlushCfs = &FlushFamiliesShim;
#else
constexpr auto kLinkedFlushCfs = &::rocksdb_flush_cfs;
#endif

RocksDbLibrary MakeLinked() {
  RocksDbLibrary lib;
#define RESTORESIM_ROCKSDB_LINK(name) lib.name = &::name;
  RESTORESIM_ROCKSDB_C_API(RESTORESIM_ROCKSDB_LINK)
#undef RESTORESIM_ROCKSDB_LINK
  lib.flush_cfs = kLinkedFlushCfs;
  lib.source = fmt::format("linked (RocksDB {}.{}.{})", ROCKSDB_MAJOR, ROCKSDB_MINOR,
                           ROCKSDB_PATCH);
  return lib;
}

// Sanitizer runtimes refuse RTLD_DEEPBIND (ASan's dlopen interceptor reports it and dies), and
// without it a second RocksDB would bind to the linked one's symbols: a sanitized build keeps
// to the linked library.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// Where a symbol is missing: the library is not RocksDB, or one too old for the table.
absl::Status Missing(const std::string& path, const char* name) {
  return absl::InvalidArgumentError(fmt::format(
      "the RocksDB library {} has no {} (it is not RocksDB's C API, or older than 8.3)", path,
      name));
}

}  // namespace

absl::StatusOr<RocksDbLibrary> LoadRocksDbLibrary(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("an empty RocksDB library path");
  if (kSanitized) {
    return absl::FailedPreconditionError(fmt::format(
        "cannot load the RocksDB library {} in a sanitizer build (its runtime refuses "
        "RTLD_DEEPBIND); it runs on the linked RocksDB only", path));
  }
  // RTLD_DEEPBIND: the library's references to its own (exported, same-named) C++ symbols
  // bind to its own definitions, not to the linked RocksDB's. The handle lives as long as the
  // process: stores opened through it may outlive any owner we could give it.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return absl::InvalidArgumentError(fmt::format("cannot load the RocksDB library {}: {}",
                                                  path, why != nullptr ? why : "unknown"));
  }
  RocksDbLibrary lib;
#define RESTORESIM_ROCKSDB_LOAD(name)                                              \
  lib.name = reinterpret_cast<decltype(lib.name)>(::dlsym(handle, #name));       \
  if (lib.name == nullptr) return Missing(path, #name);
  RESTORESIM_ROCKSDB_C_API(RESTORESIM_ROCKSDB_LOAD)
#undef RESTORESIM_ROCKSDB_LOAD
  lib.flush_cfs = reinterpret_cast<decltype(lib.flush_cfs)>(::dlsym(handle, "rocksdb_flush_cfs"));
  if (lib.flush_cfs == nullptr) return Missing(path, "rocksdb_flush_cfs");
  lib.source = path;
  lib.loaded = true;
  RS_CHECK(lib.rocksdb_free != nullptr && lib.rocksdb_open_column_families != nullptr);
  return lib;
}

const RocksDbLibrary& LinkedRocksDb() {
  static const RocksDbLibrary* const linked = new RocksDbLibrary(MakeLinked());
  return *linked;
}

absl::StatusOr<const RocksDbLibrary*> RocksDb() {
  static const absl::StatusOr<const RocksDbLibrary*>* const chosen = [] {
    const char* path = std::getenv(kRocksDbLibraryEnv);
    if (path == nullptr || *path == '\0') {
      return new absl::StatusOr<const RocksDbLibrary*>(&LinkedRocksDb());
    }
    absl::StatusOr<RocksDbLibrary> lib = LoadRocksDbLibrary(path);
    if (!lib.ok()) {
      return new absl::StatusOr<const RocksDbLibrary*>(absl::Status(
          lib.status().code(), fmt::format("{} (from {})", std::string(lib.status().message()),
                                           kRocksDbLibraryEnv)));
    }
    return new absl::StatusOr<const RocksDbLibrary*>(new RocksDbLibrary(*std::move(lib)));
  }();
  return *chosen;
}

absl::Status RocksDbLibrary::ForEach(
    rocksdb_iterator_t* it,
    const std::function<void(std::string_view key, std::string_view value)>& visit,
    std::string_view what) const {
  RS_CHECK(it != nullptr);
  for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it) != 0; rocksdb_iter_next(it)) {
    size_t key_length = 0;
    size_t value_length = 0;
    const char* key = rocksdb_iter_key(it, &key_length);
    const char* value = rocksdb_iter_value(it, &value_length);
    visit(std::string_view(key, key_length), std::string_view(value, value_length));
  }
  char* error = nullptr;
  rocksdb_iter_get_error(it, &error);
  rocksdb_iter_destroy(it);
  return Check(error, what);
}

absl::Status RocksDbLibrary::Check(char* error, std::string_view what) const {
  if (error == nullptr) return absl::OkStatus();
  const std::string text = error;
  rocksdb_free(error);
  const std::string message = fmt::format("rocksdb {}: {}", what, text);
  const auto starts = [&text](std::string_view prefix) { return text.rfind(prefix, 0) == 0; };
  // Status::ToString's leading words, one per code (util/status.cc, the same 7.8 to 10.x).
  if (starts("NotFound: ")) return absl::NotFoundError(message);
  if (starts("Corruption: ")) return absl::DataLossError(message);
  if (starts("IO error: ") || starts("Resource busy: ") || starts("Operation timed out: ") ||
      starts("Operation failed. Try again.")) {
    return absl::UnavailableError(message);
  }
  if (starts("Invalid argument: ")) return absl::InvalidArgumentError(message);
  return absl::InternalError(message);
}

}  // namespace restoresim
