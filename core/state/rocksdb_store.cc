// The RocksDB adapter: the one place in core/ that talks to RocksDB. RocksDB statuses are
// translated here, once.
#include "core/state/rocksdb_store.h"

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

namespace restoresim {
namespace {

absl::Status Translate(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return absl::OkStatus();
  const std::string message = fmt::format("rocksdb {}: {}", what, s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(message);
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsIOError() || s.IsBusy() || s.IsTryAgain() || s.IsTimedOut()) {
    return absl::UnavailableError(message);
  }
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(message);
  return absl::InternalError(message);
}

rocksdb::WriteOptions NoWal() {
  rocksdb::WriteOptions options;
  options.disableWAL = true;  // the changelog is the log, as in Kafka Streams
  return options;
}

rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

}  // namespace

RocksDbStore::RocksDbStore(std::unique_ptr<rocksdb::DB> db, std::string name)
    : db_(std::move(db)), name_(std::move(name)) {}

RocksDbStore::~RocksDbStore() { (void)Close(); }

absl::StatusOr<std::unique_ptr<RocksDbStore>> RocksDbStore::Open(const std::string& dir,
                                                                 std::string name) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.avoid_flush_during_shutdown = false;
  rocksdb::DB* raw = nullptr;
  if (absl::Status s = Translate(rocksdb::DB::Open(options, dir, &raw), "open " + dir); !s.ok()) {
    return s;
  }
  return std::unique_ptr<RocksDbStore>(
      new RocksDbStore(std::unique_ptr<rocksdb::DB>(raw), std::move(name)));
}

absl::Status RocksDbStore::CheckOpen() const {
  if (db_ == nullptr) {
    return absl::FailedPreconditionError(fmt::format("store '{}' is closed", name_));
  }
  return absl::OkStatus();
}

absl::Status RocksDbStore::Put(std::string_view key, std::string_view value) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  return Translate(db_->Put(NoWal(), ToSlice(key), ToSlice(value)), "put");
}

absl::Status RocksDbStore::Delete(std::string_view key) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  return Translate(db_->Delete(NoWal(), ToSlice(key)), "delete");
}

absl::StatusOr<std::optional<std::string>> RocksDbStore::Get(std::string_view key) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  std::string value;
  const rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), ToSlice(key), &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (absl::Status t = Translate(s, "get"); !t.ok()) return t;
  return std::optional<std::string>(std::move(value));
}

absl::Status RocksDbStore::ApplyBatch(const std::vector<KeyValueWrite>& writes) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  rocksdb::WriteBatch batch;
  for (const KeyValueWrite& w : writes) {
    const rocksdb::Status s =
        w.value ? batch.Put(ToSlice(w.key), ToSlice(*w.value)) : batch.Delete(ToSlice(w.key));
    if (absl::Status t = Translate(s, "batch"); !t.ok()) return t;
  }
  return Translate(db_->Write(NoWal(), &batch), "write batch");
}

absl::Status RocksDbStore::Flush() {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  return Translate(db_->Flush(rocksdb::FlushOptions()), "flush");
}

absl::Status RocksDbStore::Close() {
  if (db_ == nullptr) return absl::OkStatus();
  const rocksdb::Status s = db_->Close();
  db_.reset();
  return Translate(s, "close");
}

absl::StatusOr<std::map<std::string, std::string>> RocksDbStore::ReadAll() {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  std::map<std::string, std::string> all;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    all.emplace(it->key().ToString(), it->value().ToString());
  }
  if (absl::Status s = Translate(it->status(), "iterate"); !s.ok()) return s;
  return all;
}

uint64_t RocksDbStore::NumEntries() const {
  if (db_ == nullptr) return 0;
  uint64_t n = 0;
  db_->GetIntProperty("rocksdb.estimate-num-keys", &n);
  return n;
}

}  // namespace restoresim
