// The RocksDB adapter: the one place in core/ that talks to RocksDB (with its bulk loader and
// options), through the process's RocksDB (rocksdb_library.h), whose errors it translates.
#include "core/state/rocksdb_store.h"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/util/check.h"

namespace restoresim {
namespace {

// Where a bulk restoration writes its chunk files before they are moved into the DB: inside
// the store's directory, so a wipe removes leftovers, and in a subdirectory, where RocksDB's
// own scan of the DB directory for obsolete files never looks.
std::string ScratchDir(const std::string& dir) { return dir + "/bulk-restore"; }

// The column family of the store's own changelog offset, as Kafka 4.3's RocksDB stores keep
// theirs (KIP-1035): one key, the offset as 8 bytes big-endian.
constexpr char kOffsetsFamily[] = "offsets";
constexpr char kOffsetKey[] = "changelog-offset";

std::string EncodeOffset(int64_t offset) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((static_cast<uint64_t>(offset) >> (56 - 8 * i)) & 0xff);
  }
  return out;
}

absl::StatusOr<int64_t> DecodeOffset(std::string_view bytes) {
  uint64_t v = 0;
  for (const char c : bytes) v = (v << 8) | static_cast<uint8_t>(c);
  if (bytes.size() != 8 || static_cast<int64_t>(v) < 0) {
    return absl::DataLossError(fmt::format("the recorded changelog offset is damaged ({} bytes)",
                                           bytes.size()));
  }
  return static_cast<int64_t>(v);
}

// DataLoss when an entry of the database directory `dir` is not a regular file (the bulk
// loader's scratch directory apart): a directory, FIFO, device or symbolic link in place of one
// of RocksDB's files is damage. A directory that cannot be listed is left to DB::Open.
absl::Status CheckEntriesAreFiles(const std::string& dir, const std::string& name) {
  DIR* stream = ::opendir(dir.c_str());
  if (stream == nullptr) return absl::OkStatus();
  absl::Status status;
  while (const dirent* e = ::readdir(stream)) {
    const std::string entry = e->d_name;
    if (entry == "." || entry == ".." || dir + "/" + entry == ScratchDir(dir)) continue;
    struct stat st;
    if (::lstat((dir + "/" + entry).c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      status = absl::DataLossError(fmt::format(
          "store '{}': {}/{} is not a regular file", name, dir, entry));
      break;
    }
  }
  ::closedir(stream);
  return status;
}

// What stat(2) says of `path`: missing (as RocksDB's FileExists: ENOENT or ENOTDIR), a
// directory, something else, or an error saying why it cannot tell.
enum class PathKind { kMissing, kDirectory, kOther };
absl::StatusOr<PathKind> KindOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return S_ISDIR(st.st_mode) ? PathKind::kDirectory
                                                                  : PathKind::kOther;
  if (errno == ENOENT || errno == ENOTDIR) return PathKind::kMissing;
  return absl::UnavailableError(fmt::format("rocksdb open: stat {}: {}", path,
                                            std::strerror(errno)));
}

// Whether the MANIFEST that `dir`'s CURRENT names is missing or not a file (damage, where an
// I/O error opening the database may also be a passing one).
bool ManifestIsGone(const std::string& dir) {
  std::ifstream in(dir + "/CURRENT", std::ios::binary);
  if (!in) return false;
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::string current = bytes.str();
  while (!current.empty() && (current.back() == '\n' || current.back() == '\r')) {
    current.pop_back();
  }
  if (current.empty() || current.find('/') != std::string::npos) return false;
  const absl::StatusOr<PathKind> kind = KindOf(dir + "/" + current);
  return kind.ok() && *kind != PathKind::kOther;
}

}  // namespace

RocksDbStore::RocksDbStore(const RocksDbLibrary& lib, RocksDbOptions db_options,
                           std::string dir, std::string name, RocksDbStoreOptions options)
    : lib_(lib),
      no_wal_(lib.rocksdb_writeoptions_create()),
      read_(lib.rocksdb_readoptions_create()),
      db_options_(std::move(db_options)),
      dir_(std::move(dir)),
      name_(std::move(name)),
      options_(options) {
  lib_.rocksdb_writeoptions_disable_WAL(no_wal_, 1);
}

RocksDbStore::~RocksDbStore() {
  (void)Close();
  lib_.rocksdb_writeoptions_destroy(no_wal_);
  lib_.rocksdb_readoptions_destroy(read_);
}

absl::StatusOr<std::unique_ptr<RocksDbStore>> RocksDbStore::Open(const std::string& dir,
                                                                 std::string name,
                                                                 RocksDbStoreOptions options) {
  absl::StatusOr<const RocksDbLibrary*> lib = RocksDb();
  if (!lib.ok()) return lib.status();
  RocksDbOptions db_options = KafkaStreamsRocksDbOptions(**lib);
  // The offsets family is flushed with the data, in one version edit: its offset is durable
  // exactly when the data it reaches is. A database from before it existed gains it empty.
  (*lib)->rocksdb_options_set_atomic_flush(db_options.get(), 1);
  (*lib)->rocksdb_options_set_create_missing_column_families(db_options.get(), 1);
  // A database is its CURRENT file (naming the live MANIFEST): without one, opening with
  // create_if_missing makes a new, empty database, whatever else the directory holds.
  // Damage of the store's own files is data loss (the task is wiped and restored), never an
  // error retried as it is: a file in place of the directory, ...
  if (absl::StatusOr<PathKind> kind = KindOf(dir); kind.ok() && *kind == PathKind::kOther) {
    return absl::DataLossError(fmt::format("store '{}': {} is not a directory", name, dir));
  }
  const absl::StatusOr<PathKind> current = KindOf(dir + "/CURRENT");
  if (!current.ok()) return current.status();
  const bool created = *current == PathKind::kMissing;
  // ... something other than a file among the database's files (RocksDB opens every table
  // file at open: a FIFO in place of one would wait for a writer for ever), ...
  if (absl::Status s = CheckEntriesAreFiles(dir, name); !s.ok()) return s;
  auto store = std::unique_ptr<RocksDbStore>(
      new RocksDbStore(**lib, std::move(db_options), dir, std::move(name), options));
  if (absl::Status s = store->OpenDb(created); !s.ok()) return s;
  RS_CHECK(store->db_ != nullptr && store->offsets_ != nullptr);
  return store;
}

// Opens the DB with both column families; reads back the offset it reaches.
absl::Status RocksDbStore::OpenDb(bool created) {
  RS_CHECK(db_ == nullptr, "store '{}' opened twice", name_);
  // Whether the database already had its offsets family: if so, a missing offset means "0"
  // (made, never flushed since); if not, it is a database of an earlier release (unknown).
  bool had_offsets = false;
  if (!created) {
    size_t count = 0;
    char* error = nullptr;
    char** names =
        lib_.rocksdb_list_column_families(db_options_.get(), dir_.c_str(), &count, &error);
    if (error == nullptr) {
      for (size_t i = 0; i < count; ++i) had_offsets |= std::strcmp(names[i], kOffsetsFamily) == 0;
    }
    // The list is malloc'd even when the call failed (an empty one: found by LeakSanitizer).
    if (names != nullptr) lib_.rocksdb_list_column_families_destroy(names, count);
    lib_.rocksdb_free(error);
  }
  const char* families[] = {"default", kOffsetsFamily};
  const rocksdb_options_t* family_options[] = {db_options_.get(), db_options_.get()};
  rocksdb_column_family_handle_t* handles[] = {nullptr, nullptr};
  char* error = nullptr;
  rocksdb_t* db = lib_.rocksdb_open_column_families(db_options_.get(), dir_.c_str(), 2, families,
                                                    family_options, handles, &error);
  // ... or a MANIFEST that CURRENT names and that is missing or a directory.
  if (!created && error != nullptr && std::strncmp(error, "IO error: ", 10) == 0 &&
      ManifestIsGone(dir_)) {
    const std::string why = error;
    lib_.rocksdb_free(error);
    return absl::DataLossError(fmt::format("store '{}': rocksdb open {}: {}", name_, dir_, why));
  }
  if (absl::Status s = lib_.Check(error, "open " + dir_); !s.ok()) return s;
  RS_CHECK(db != nullptr && handles[0] != nullptr && handles[1] != nullptr, "open {}", dir_);
  db_ = db;
  data_ = handles[0];
  offsets_ = handles[1];
  created_ = created;
  if (absl::Status s = ReadCommittedOffset(); !s.ok()) return s;
  if (had_offsets && !committed_offset_.has_value()) committed_offset_ = 0;
  // A new database reaches offset 0, durably at once: a copy of it taken before its first
  // flush must not pass as a database of an earlier release (offset unknown, trusted).
  if (created) return Commit(0);
  return absl::OkStatus();
}

absl::Status RocksDbStore::ReadCommittedOffset() {
  size_t length = 0;
  char* error = nullptr;
  char* value = lib_.rocksdb_get_cf(db_, read_, offsets_, kOffsetKey, sizeof(kOffsetKey) - 1,
                                    &length, &error);
  if (absl::Status t = lib_.Check(error, "read the changelog offset"); !t.ok()) return t;
  if (value == nullptr) return absl::OkStatus();  // not found
  const std::string bytes(value, length);
  lib_.rocksdb_free(value);
  absl::StatusOr<int64_t> offset = DecodeOffset(bytes);
  if (!offset.ok()) {
    return absl::DataLossError(fmt::format("store '{}' in {}: {}", name_, dir_,
                                           std::string(offset.status().message())));
  }
  committed_offset_ = *offset;
  return absl::OkStatus();
}

absl::Status RocksDbStore::CheckOpen() const {
  if (db_ == nullptr) {
    return absl::FailedPreconditionError(fmt::format("store '{}' is closed", name_));
  }
  return absl::OkStatus();
}

absl::Status RocksDbStore::Put(std::string_view key, std::string_view value) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = LeaveBulk(); !s.ok()) return s;
  char* error = nullptr;
  lib_.rocksdb_put_cf(db_, no_wal_, data_, key.data(), key.size(), value.data(), value.size(),
                      &error);
  return lib_.Check(error, "put");
}

absl::Status RocksDbStore::Delete(std::string_view key) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = LeaveBulk(); !s.ok()) return s;
  char* error = nullptr;
  lib_.rocksdb_delete_cf(db_, no_wal_, data_, key.data(), key.size(), &error);
  return lib_.Check(error, "delete");
}

absl::StatusOr<std::optional<std::string>> RocksDbStore::Get(std::string_view key) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = IngestBuffered(); !s.ok()) return s;
  size_t length = 0;
  char* error = nullptr;
  char* value = lib_.rocksdb_get_cf(db_, read_, data_, key.data(), key.size(), &length, &error);
  if (absl::Status t = lib_.Check(error, "get"); !t.ok()) return t;
  if (value == nullptr) return std::optional<std::string>();  // not found
  std::optional<std::string> found(std::in_place, value, length);
  lib_.rocksdb_free(value);
  return found;
}

absl::Status RocksDbStore::ApplyBatch(const std::vector<KeyValueWrite>& writes) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = LeaveBulk(); !s.ok()) return s;
  rocksdb_writebatch_t* batch = lib_.rocksdb_writebatch_create();
  for (const KeyValueWrite& w : writes) {
    if (w.value.has_value()) {
      lib_.rocksdb_writebatch_put(batch, w.key.data(), w.key.size(), w.value->data(),
                                  w.value->size());
    } else {
      lib_.rocksdb_writebatch_delete(batch, w.key.data(), w.key.size());
    }
  }
  char* error = nullptr;
  lib_.rocksdb_write(db_, no_wal_, batch, &error);
  lib_.rocksdb_writebatch_destroy(batch);
  return lib_.Check(error, "write batch");
}

bool RocksDbStore::TakesBulkPath(int64_t records_expected) const {
  switch (options_.bulk_restore) {
    case RocksDbStoreOptions::BulkRestore::kOff:
      return false;
    case RocksDbStoreOptions::BulkRestore::kAlways:
      return true;
    case RocksDbStoreOptions::BulkRestore::kAuto:
      break;
  }
  return records_expected >= options_.bulk_min_records;
}

bool RocksDbStore::DbIsEmpty() const {
  rocksdb_iterator_t* it = lib_.rocksdb_create_iterator_cf(db_, read_, data_);
  lib_.rocksdb_iter_seek_to_first(it);
  char* error = nullptr;
  const bool valid = lib_.rocksdb_iter_valid(it) != 0;
  lib_.rocksdb_iter_get_error(it, &error);
  lib_.rocksdb_iter_destroy(it);
  const bool failed = error != nullptr;
  lib_.rocksdb_free(error);
  return !valid && !failed;  // an error counts as "may hold data"
}

void RocksDbStore::BeginRestore(int64_t records_expected) {
  if (db_ == nullptr) return;  // the first RestoreBatch reports the closed store
  if (bulk_ != nullptr) {
    // An unfinished bulk restoration goes on (its buffer stays), from where it stopped.
    RS_CHECK(chunking_.has_value());
    chunking_->ExpectMore(records_expected);
    return;
  }
  if (!TakesBulkPath(records_expected)) {
    ++stats_.restores_batch;
    return;
  }
  ++stats_.restores_bulk;
  bulk_ = std::make_unique<SstBulkLoader>(ScratchDir(dir_), db_options_);
  RS_CHECK(bulk_->empty());
  chunking_.emplace(options_.bulk_chunk_bytes_min, options_.bulk_chunk_bytes_max,
                    records_expected);
  stats_.last_chunks_bytes.clear();
  // Chunk files overlap (a changelog's keys come in no order): compacting them while more come
  // would merge each several times, on the cores the restoration needs. They are compacted
  // once, after it (RocksDB's PrepareForBulkLoad does the same; Kafka Streams' RocksDBStore
  // did, before 3.0, for every restoration). A failure only costs compactions.
  compactions_off_ = SetAutoCompactions(false).ok();
  bulk_into_empty_ = DbIsEmpty();
}

absl::Status RocksDbStore::RestoreBatch(std::vector<KeyValueWrite> writes) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (bulk_ == nullptr) return ApplyBatch(writes);
  // The full chunk goes first, so a failure leaves this batch untaken (all or nothing).
  if (chunking_->Full(*bulk_)) {
    if (absl::Status s = CutChunk(); !s.ok()) return s;
  }
  chunking_->AddTo(*bulk_, writes);
  return absl::OkStatus();
}

absl::Status RocksDbStore::CutChunk() {
  RS_CHECK(bulk_ != nullptr && !bulk_->empty());
  if (!options_.bulk_pipelined) return IngestBuffered();
  // Written and ingested by the loader's thread while this one buffers the next chunk.
  const auto bytes = static_cast<int64_t>(bulk_->buffered_bytes());
  if (absl::Status s = bulk_->IngestInBackground(db_, bulk_into_empty_); !s.ok()) return s;
  bulk_into_empty_ = false;  // the DB holds (or will, before the next chunk) this chunk
  stats_.last_chunks_bytes.push_back(bytes);
  chunking_->Cut();
  RS_CHECK(bulk_->buffered_records() == 0, "the chunk handed over is still buffered");
  return absl::OkStatus();
}

absl::Status RocksDbStore::IngestBuffered() {
  if (bulk_ == nullptr || bulk_->empty()) return absl::OkStatus();
  const auto bytes = static_cast<int64_t>(bulk_->buffered_bytes());
  if (absl::Status s = bulk_->IngestInto(db_, bulk_into_empty_); !s.ok()) return s;
  bulk_into_empty_ = false;  // the DB now holds this chunk: later deletions must be kept
  stats_.last_chunks_bytes.push_back(bytes);
  if (chunking_.has_value()) chunking_->Cut();
  return absl::OkStatus();
}

absl::Status RocksDbStore::LeaveBulk() {
  if (bulk_ != nullptr) {
    if (absl::Status s = IngestBuffered(); !s.ok()) return s;
    const BulkLoadStats& done = bulk_->stats();
    stats_.bulk += done;
    bulk_.reset();
    chunking_.reset();
  }
  // Compactions come back on (a failure is retried by the next write, read or flush).
  if (!compactions_off_) return absl::OkStatus();
  if (absl::Status s = SetAutoCompactions(true); !s.ok()) return s;
  compactions_off_ = false;
  return absl::OkStatus();
}

absl::Status RocksDbStore::SetAutoCompactions(bool on) {
  RS_CHECK(db_ != nullptr);
  return restoresim::SetAutoCompactions(lib_, db_, on);
}

absl::Status RocksDbStore::EndRestore() {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  return LeaveBulk();
}

RocksDbStoreStats RocksDbStore::stats() const {
  RocksDbStoreStats stats = stats_;
  if (bulk_ != nullptr) {
    stats.bulk += bulk_->stats();
  }
  return stats;
}

absl::Status RocksDbStore::Flush() {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = IngestBuffered(); !s.ok()) return s;
  return FlushBoth();
}

// One atomic flush of both families (atomic_flush), waited for.
absl::Status RocksDbStore::FlushBoth() {
  RS_CHECK(db_ != nullptr && data_ != nullptr && offsets_ != nullptr);
  rocksdb_flushoptions_t* options = lib_.rocksdb_flushoptions_create();
  lib_.rocksdb_flushoptions_set_wait(options, 1);
  rocksdb_column_family_handle_t* families[] = {data_, offsets_};
  char* error = nullptr;
  lib_.flush_cfs(db_, options, families, 2, &error);
  lib_.rocksdb_flushoptions_destroy(options);
  return lib_.Check(error, "flush");
}

// The offset goes into the offsets family's memtable, then one atomic flush of both families
// makes it durable together with every write before it. A crash before the flush ends loses
// both; one after keeps both.
absl::Status RocksDbStore::Commit(int64_t changelog_offset) {
  RS_CHECK(changelog_offset >= 0, "store '{}': changelog offset {}", name_, changelog_offset);
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = IngestBuffered(); !s.ok()) return s;
  const std::string encoded = EncodeOffset(changelog_offset);
  char* error = nullptr;
  lib_.rocksdb_put_cf(db_, no_wal_, offsets_, kOffsetKey, sizeof(kOffsetKey) - 1,
                      encoded.data(), encoded.size(), &error);
  if (absl::Status s = lib_.Check(error, "record the changelog offset"); !s.ok()) return s;
  if (absl::Status s = FlushBoth(); !s.ok()) return s;
  committed_offset_ = changelog_offset;
  RS_CHECK(committed_offset_ == changelog_offset);
  return absl::OkStatus();
}

absl::Status RocksDbStore::Close() {
  if (db_ == nullptr) return absl::OkStatus();
  // Buffered records survive a clean close, as the memtable does (avoid_flush_during_shutdown
  // is off); a failure is reported, and the store closes anyway.
  const absl::Status drained = LeaveBulk();
  bulk_.reset();
  for (rocksdb_column_family_handle_t* h : {data_, offsets_}) {
    if (h != nullptr) lib_.rocksdb_column_family_handle_destroy(h);
  }
  data_ = nullptr;
  offsets_ = nullptr;
  // The C API's close flushes the memtables and reports nothing (DB::Close's status is lost).
  lib_.rocksdb_close(db_);
  db_ = nullptr;
  return drained;
}

absl::StatusOr<std::map<std::string, std::string>> RocksDbStore::ReadAll() {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = IngestBuffered(); !s.ok()) return s;
  std::map<std::string, std::string> all;
  if (absl::Status s = lib_.ForEach(lib_.rocksdb_create_iterator_cf(db_, read_, data_),
                                     [&all](std::string_view key, std::string_view value) {
                                       all.emplace(key, value);
                                     },
                                     "iterate");
      !s.ok()) {
    return s;
  }
  return all;
}

uint64_t RocksDbStore::NumEntries() const {
  if (db_ == nullptr) return 0;
  uint64_t n = 0;
  (void)lib_.rocksdb_property_int_cf(db_, data_, "rocksdb.estimate-num-keys", &n);
  return n;
}

}  // namespace restoresim
