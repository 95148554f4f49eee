// The RocksDB adapter: the one place in core/ that talks to RocksDB (with its bulk loader and
// options). RocksDB statuses are translated once, in rocksdb_status.h.
#include "core/state/rocksdb_store.h"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "core/state/rocksdb_options.h"
#include "core/state/rocksdb_status.h"
#include "core/util/check.h"

namespace restoresim {
namespace {

rocksdb::WriteOptions NoWal() {
  rocksdb::WriteOptions options;
  options.disableWAL = true;  // the changelog is the log, as in Kafka Streams
  return options;
}

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

// Whether the MANIFEST that `dir`'s CURRENT names is missing or not a file (damage, where an
// I/O error opening the database may also be a passing one).
bool ManifestIsGone(rocksdb::Env* env, const std::string& dir) {
  std::string current;
  if (!rocksdb::ReadFileToString(env, dir + "/CURRENT", &current).ok()) return false;
  while (!current.empty() && (current.back() == '\n' || current.back() == '\r')) {
    current.pop_back();
  }
  if (current.empty() || current.find('/') != std::string::npos) return false;
  const std::string manifest = dir + "/" + current;
  if (env->FileExists(manifest).IsNotFound()) return true;
  bool is_dir = false;
  return env->IsDirectory(manifest, &is_dir).ok() && is_dir;
}

}  // namespace

RocksDbStore::RocksDbStore(std::unique_ptr<rocksdb::DB> db, rocksdb::Options db_options,
                           std::string dir, std::string name, RocksDbStoreOptions options)
    : db_(std::move(db)),
      db_options_(std::move(db_options)),
      dir_(std::move(dir)),
      name_(std::move(name)),
      options_(options) {}

RocksDbStore::~RocksDbStore() { (void)Close(); }

absl::StatusOr<std::unique_ptr<RocksDbStore>> RocksDbStore::Open(const std::string& dir,
                                                                 std::string name,
                                                                 RocksDbStoreOptions options) {
  rocksdb::Options db_options = KafkaStreamsRocksDbOptions();
  // The offsets family is flushed with the data, in one version edit: its offset is durable
  // exactly when the data it reaches is. A database from before it existed gains it empty.
  db_options.atomic_flush = true;
  db_options.create_missing_column_families = true;
  // A database is its CURRENT file (naming the live MANIFEST): without one, DB::Open with
  // create_if_missing makes a new, empty database, whatever else the directory holds.
  // Damage of the store's own files is data loss (the task is wiped and restored), never an
  // error retried as it is: a file in place of the directory, ...
  bool is_dir = true;
  if (db_options.env->IsDirectory(dir, &is_dir).ok() && !is_dir) {
    return absl::DataLossError(fmt::format("store '{}': {} is not a directory", name, dir));
  }
  const rocksdb::Status current = db_options.env->FileExists(dir + "/CURRENT");
  if (!current.ok() && !current.IsNotFound()) {
    return TranslateRocksDb(current, "open " + dir);
  }
  const bool created = current.IsNotFound();
  // ... something other than a file among the database's files (RocksDB opens every table
  // file at open: a FIFO in place of one would wait for a writer for ever), ...
  if (absl::Status s = CheckEntriesAreFiles(dir, name); !s.ok()) return s;
  // Whether the database already had its offsets family: if so, a missing offset means "0"
  // (made, never flushed since); if not, it is a database of an earlier release (unknown).
  bool had_offsets = false;
  if (!created) {
    std::vector<std::string> names;
    if (rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(db_options), dir, &names).ok()) {
      had_offsets = std::find(names.begin(), names.end(), kOffsetsFamily) != names.end();
    }
  }
  const std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions(db_options)},
      {kOffsetsFamily, rocksdb::ColumnFamilyOptions(db_options)}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  const rocksdb::Status opened =
      rocksdb::DB::Open(rocksdb::DBOptions(db_options), dir, families, &handles, &raw);
  // ... or a MANIFEST that CURRENT names and that is missing or a directory.
  if (!created && opened.IsIOError() && ManifestIsGone(db_options.env, dir)) {
    return absl::DataLossError(fmt::format("store '{}': rocksdb open {}: {}", name, dir,
                                           opened.ToString()));
  }
  if (absl::Status s = TranslateRocksDb(opened, "open " + dir); !s.ok()) return s;
  RS_CHECK(handles.size() == 2, "open {}: {} column families", dir, handles.size());
  auto store = std::unique_ptr<RocksDbStore>(new RocksDbStore(
      std::unique_ptr<rocksdb::DB>(raw), std::move(db_options), dir, std::move(name), options));
  store->data_ = handles[0];
  store->offsets_ = handles[1];
  store->created_ = created;
  if (absl::Status s = store->ReadCommittedOffset(); !s.ok()) return s;
  if (had_offsets && !store->committed_offset_.has_value()) store->committed_offset_ = 0;
  // A new database reaches offset 0, durably at once: a copy of it taken before its first
  // flush must not pass as a database of an earlier release (offset unknown, trusted).
  if (created) {
    if (absl::Status s = store->Commit(0); !s.ok()) return s;
  }
  return store;
}

absl::Status RocksDbStore::ReadCommittedOffset() {
  std::string value;
  const rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), offsets_, kOffsetKey, &value);
  if (s.IsNotFound()) return absl::OkStatus();
  if (absl::Status t = TranslateRocksDb(s, "read the changelog offset"); !t.ok()) return t;
  absl::StatusOr<int64_t> offset = DecodeOffset(value);
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
  return TranslateRocksDb(db_->Put(NoWal(), ToSlice(key), ToSlice(value)), "put");
}

absl::Status RocksDbStore::Delete(std::string_view key) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = LeaveBulk(); !s.ok()) return s;
  return TranslateRocksDb(db_->Delete(NoWal(), ToSlice(key)), "delete");
}

absl::StatusOr<std::optional<std::string>> RocksDbStore::Get(std::string_view key) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = IngestBuffered(); !s.ok()) return s;
  std::string value;
  const rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), ToSlice(key), &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (absl::Status t = TranslateRocksDb(s, "get"); !t.ok()) return t;
  return std::optional<std::string>(std::move(value));
}

absl::Status RocksDbStore::ApplyBatch(const std::vector<KeyValueWrite>& writes) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = LeaveBulk(); !s.ok()) return s;
  rocksdb::WriteBatch batch;
  for (const KeyValueWrite& w : writes) {
    const rocksdb::Status s =
        w.value ? batch.Put(ToSlice(w.key), ToSlice(*w.value)) : batch.Delete(ToSlice(w.key));
    if (absl::Status t = TranslateRocksDb(s, "batch"); !t.ok()) return t;
  }
  return TranslateRocksDb(db_->Write(NoWal(), &batch), "write batch");
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
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  it->SeekToFirst();
  return !it->Valid() && it->status().ok();  // an error counts as "may hold data"
}

void RocksDbStore::BeginRestore(int64_t records_expected) {
  if (db_ == nullptr) return;  // the first RestoreBatch reports the closed store
  if (bulk_ != nullptr) return;  // an unfinished bulk restoration goes on: its buffer stays
  if (!TakesBulkPath(records_expected)) {
    ++stats_.restores_batch;
    return;
  }
  ++stats_.restores_bulk;
  bulk_ = std::make_unique<SstBulkLoader>(ScratchDir(dir_), db_options_);
  bulk_into_empty_ = DbIsEmpty();
}

absl::Status RocksDbStore::RestoreBatch(std::vector<KeyValueWrite> writes) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (bulk_ == nullptr) return ApplyBatch(writes);
  // The full chunk goes first, so a failure leaves this batch untaken (all or nothing).
  if (bulk_->buffered_bytes() >= options_.bulk_chunk_bytes_max) {
    if (absl::Status s = IngestBuffered(); !s.ok()) return s;
  }
  for (KeyValueWrite& w : writes) bulk_->Add(std::move(w));
  return absl::OkStatus();
}

absl::Status RocksDbStore::IngestBuffered() {
  if (bulk_ == nullptr || bulk_->empty()) return absl::OkStatus();
  if (absl::Status s = bulk_->IngestInto(*db_, bulk_into_empty_); !s.ok()) return s;
  bulk_into_empty_ = false;  // the DB now holds this chunk: later deletions must be kept
  return absl::OkStatus();
}

absl::Status RocksDbStore::LeaveBulk() {
  if (bulk_ == nullptr) return absl::OkStatus();
  if (absl::Status s = IngestBuffered(); !s.ok()) return s;
  const BulkLoadStats& done = bulk_->stats();
  stats_.bulk.files += done.files;
  stats_.bulk.records_in += done.records_in;
  stats_.bulk.entries_out += done.entries_out;
  stats_.bulk.tombstones_dropped += done.tombstones_dropped;
  bulk_.reset();
  return absl::OkStatus();
}

absl::Status RocksDbStore::EndRestore() {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  return LeaveBulk();
}

RocksDbStoreStats RocksDbStore::stats() const {
  RocksDbStoreStats stats = stats_;
  if (bulk_ != nullptr) {
    stats.bulk.files += bulk_->stats().files;
    stats.bulk.records_in += bulk_->stats().records_in;
    stats.bulk.entries_out += bulk_->stats().entries_out;
    stats.bulk.tombstones_dropped += bulk_->stats().tombstones_dropped;
  }
  return stats;
}

absl::Status RocksDbStore::Flush() {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = IngestBuffered(); !s.ok()) return s;
  return TranslateRocksDb(db_->Flush(rocksdb::FlushOptions(), {data_, offsets_}), "flush");
}

// The offset goes into the offsets family's memtable, then one atomic flush of both families
// makes it durable together with every write before it. A crash before the flush ends loses
// both; one after keeps both.
absl::Status RocksDbStore::Commit(int64_t changelog_offset) {
  RS_CHECK(changelog_offset >= 0, "store '{}': changelog offset {}", name_, changelog_offset);
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = IngestBuffered(); !s.ok()) return s;
  if (absl::Status s = TranslateRocksDb(
          db_->Put(NoWal(), offsets_, kOffsetKey, EncodeOffset(changelog_offset)),
          "record the changelog offset");
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          TranslateRocksDb(db_->Flush(rocksdb::FlushOptions(), {data_, offsets_}), "flush");
      !s.ok()) {
    return s;
  }
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
  for (rocksdb::ColumnFamilyHandle* h : {data_, offsets_}) {
    if (h != nullptr) (void)db_->DestroyColumnFamilyHandle(h);
  }
  data_ = nullptr;
  offsets_ = nullptr;
  const rocksdb::Status s = db_->Close();
  db_.reset();
  if (!drained.ok()) return drained;
  return TranslateRocksDb(s, "close");
}

absl::StatusOr<std::map<std::string, std::string>> RocksDbStore::ReadAll() {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = IngestBuffered(); !s.ok()) return s;
  std::map<std::string, std::string> all;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    all.emplace(it->key().ToString(), it->value().ToString());
  }
  if (absl::Status s = TranslateRocksDb(it->status(), "iterate"); !s.ok()) return s;
  return all;
}

uint64_t RocksDbStore::NumEntries() const {
  if (db_ == nullptr) return 0;
  uint64_t n = 0;
  db_->GetIntProperty("rocksdb.estimate-num-keys", &n);
  return n;
}

}  // namespace restoresim
