#include "bench/restore_limits.h"

#include <fmt/format.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>

#include "core/state/rocksdb_library.h"
#include "core/state/rocksdb_options.h"
#include "core/state/sst_bulk_loader.h"

namespace restoresim::bench {
namespace {

constexpr size_t kOverlapQueueBatchesMax = 16;  // ~16k records in flight between the threads

// One DB per partition, written the way the store's write path writes.
class RawWriter {
 public:
  RawWriter(WritePath path, const LimitConfig& config) : path_(path), config_(config) {}
  ~RawWriter() { Close(); }

  absl::Status Open(int32_t partitions) {
    absl::StatusOr<const RocksDbLibrary*> lib = RocksDb();
    if (!lib.ok()) return lib.status();
    lib_ = *lib;
    options_ = std::make_unique<RocksDbOptions>(KafkaStreamsRocksDbOptions(*lib_));
    no_wal_ = lib_->rocksdb_writeoptions_create();
    lib_->rocksdb_writeoptions_disable_WAL(no_wal_, 1);
    batch_ = lib_->rocksdb_writebatch_create();
    std::error_code error;
    std::filesystem::create_directories(config_.dir, error);
    for (int32_t p = 0; p < partitions; ++p) {
      const std::string dir = fmt::format("{}/p{}", config_.dir, p);
      char* failure = nullptr;
      rocksdb_t* db = lib_->rocksdb_open(options_->get(), dir.c_str(), &failure);
      if (absl::Status s = lib_->Check(failure, "open " + dir); !s.ok()) return s;
      dbs_.push_back(db);
      if (path_ == WritePath::kBulk) {  // as the store's bulk path: compacted after, not during
        if (absl::Status s = SetAutoCompactions(*lib_, db, false); !s.ok()) return s;
      }
      loaders_.push_back(std::make_unique<SstBulkLoader>(dir + "/bulk-restore", *options_));
      first_chunk_.push_back(true);
      const size_t at = static_cast<size_t>(p);
      chunking_.emplace_back(
          config_.bulk_chunk_bytes_min, config_.bulk_chunk_bytes_max,
          at < config_.records_per_partition.size() ? config_.records_per_partition[at] : 0);
    }
    return absl::OkStatus();
  }

  absl::Status Write(int32_t p, std::vector<KeyValueWrite>& batch) {
    if (path_ == WritePath::kWriteBatch) {
      lib_->rocksdb_writebatch_clear(batch_);
      for (const KeyValueWrite& w : batch) {
        if (w.value.has_value()) {
          lib_->rocksdb_writebatch_put(batch_, w.key.data(), w.key.size(), w.value->data(),
                                       w.value->size());
        } else {
          lib_->rocksdb_writebatch_delete(batch_, w.key.data(), w.key.size());
        }
      }
      char* failure = nullptr;
      lib_->rocksdb_write(dbs_[p], no_wal_, batch_, &failure);
      return lib_->Check(failure, "write");
    }
    SstBulkLoader& loader = *loaders_[p];
    BulkChunking& chunking = chunking_[static_cast<size_t>(p)];
    if (chunking.Full(loader)) {
      // As the store does: the full chunk is written by the loader's thread meanwhile.
      if (absl::Status s = loader.IngestInBackground(dbs_[p], first_chunk_[p]); !s.ok()) return s;
      first_chunk_[p] = false;
      chunking.Cut();
    }
    chunking.AddTo(loader, batch);
    return absl::OkStatus();
  }

  // The last chunks (bulk). Everything written is in the DBs afterwards.
  absl::Status Finish() {
    for (size_t p = 0; p < dbs_.size(); ++p) {
      if (absl::Status s = Ingest(static_cast<int32_t>(p)); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  std::string Note() const {
    if (path_ == WritePath::kWriteBatch) {
      return fmt::format("WriteBatch of {} records", config_.batch_records);
    }
    int64_t files = 0;
    for (const auto& loader : loaders_) files += loader->stats().files;
    return fmt::format("{} SST file(s)", files);
  }

  void Close() {
    loaders_.clear();
    for (rocksdb_t* db : dbs_) lib_->rocksdb_close(db);
    dbs_.clear();
    if (lib_ != nullptr) {
      if (batch_ != nullptr) lib_->rocksdb_writebatch_destroy(batch_);
      if (no_wal_ != nullptr) lib_->rocksdb_writeoptions_destroy(no_wal_);
    }
    batch_ = nullptr;
    no_wal_ = nullptr;
  }

 private:
  absl::Status Ingest(int32_t p) {
    // Fresh DBs: the first chunk may drop its tombstones, as the store does.
    if (absl::Status s = loaders_[p]->IngestInto(dbs_[p], first_chunk_[p]); !s.ok()) return s;
    first_chunk_[p] = false;
    return absl::OkStatus();
  }

  const WritePath path_;
  const LimitConfig config_;
  const RocksDbLibrary* lib_ = nullptr;
  std::unique_ptr<RocksDbOptions> options_;  // the loaders hold a reference: it stays put
  rocksdb_writeoptions_t* no_wal_ = nullptr;
  rocksdb_writebatch_t* batch_ = nullptr;  // reused: cleared before each write
  std::vector<rocksdb_t*> dbs_;
  std::vector<std::unique_ptr<SstBulkLoader>> loaders_;
  std::vector<bool> first_chunk_;
  std::vector<BulkChunking> chunking_;  // per partition
};

void CheckContents(const LimitConfig& config, const std::vector<StoreDigest>& expected,
                   Measurement& m) {
  m.contents_checked = true;
  for (size_t p = 0; p < expected.size(); ++p) {
    absl::StatusOr<StoreDigest> got = DigestOfRocksDb(fmt::format("{}/p{}", config.dir, p));
    if (!got.ok() || !(*got == expected[p])) {
      m.contents_ok = false;
      m.note += fmt::format("; partition {} holds {} (expected {})", p,
                            got.ok() ? got->ToString() : got.status().ToString(),
                            expected[p].ToString());
    }
  }
}

// Batches of (partition, records) from the fetching thread to the writing thread.
class BatchQueue {
 public:
  void Push(int32_t p, std::vector<KeyValueWrite> batch) {
    std::unique_lock lock(mu_);
    not_full_.wait(lock, [&] { return queue_.size() < kOverlapQueueBatchesMax || closed_; });
    queue_.emplace_back(p, std::move(batch));
    not_empty_.notify_one();
  }
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }
  bool Pop(int32_t& p, std::vector<KeyValueWrite>& batch) {
    std::unique_lock lock(mu_);
    not_empty_.wait(lock, [&] { return !queue_.empty() || closed_; });
    if (queue_.empty()) return false;
    p = queue_.front().first;
    batch = std::move(queue_.front().second);
    queue_.pop_front();
    not_full_.notify_one();
    return true;
  }

 private:
  std::mutex mu_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<std::pair<int32_t, std::vector<KeyValueWrite>>> queue_;
  bool closed_ = false;
};

}  // namespace

const char* WritePathName(WritePath path) {
  return path == WritePath::kWriteBatch ? "WriteBatch" : "bulk (SST)";
}

absl::StatusOr<StoreDigest> DigestOfRocksDb(const std::string& dir) {
  absl::StatusOr<const RocksDbLibrary*> library = RocksDb();
  if (!library.ok()) return library.status();
  const RocksDbLibrary& lib = **library;
  RocksDbOptions options = KafkaStreamsRocksDbOptions(lib);
  lib.rocksdb_options_set_create_if_missing(options.get(), 0);
  char* failure = nullptr;
  rocksdb_t* db = lib.rocksdb_open_for_read_only(options.get(), dir.c_str(), 0, &failure);
  if (absl::Status s = lib.Check(failure, "open for reading " + dir); !s.ok()) return s;
  rocksdb_readoptions_t* read = lib.rocksdb_readoptions_create();
  StoreDigest digest;
  const absl::Status walked = lib.ForEach(
      lib.rocksdb_create_iterator(db, read),
      [&digest](std::string_view key, std::string_view value) { digest.Add(key, value); },
      "iterate " + dir);
  lib.rocksdb_readoptions_destroy(read);
  lib.rocksdb_close(db);
  if (!walked.ok()) return walked;
  return digest;
}

absl::StatusOr<Measurement> MeasureConsume(Backend& backend, const std::string& topic,
                                           int32_t partitions) {
  Measurement m;
  Span span = Span::Begin();
  absl::StatusOr<RawConsumeResult> r =
      backend.RawConsume(topic, partitions, [](int32_t, const std::vector<RawRecord>&) {});
  span.End();
  if (!r.ok()) return r.status();
  m.records = r->records;
  m.bytes = r->bytes;
  m.seconds = span.seconds;
  m.cpu_seconds = span.cpu_seconds;
  m.note = "records dropped after the batch call";
  return m;
}

absl::StatusOr<Measurement> MeasureWrites(const std::vector<std::vector<KeyValueWrite>>& changelog,
                                          WritePath path, const LimitConfig& config,
                                          const std::vector<StoreDigest>& expected) {
  Measurement m;
  {
    RawWriter writer(path, config);
    if (absl::Status s = writer.Open(static_cast<int32_t>(changelog.size())); !s.ok()) return s;
    const size_t batch_max = static_cast<size_t>(config.batch_records);
    Span span = Span::Begin();
    std::vector<KeyValueWrite> batch;
    for (size_t p = 0; p < changelog.size(); ++p) {
      for (size_t at = 0; at < changelog[p].size(); at += batch_max) {
        const size_t end = std::min(changelog[p].size(), at + batch_max);
        batch.assign(changelog[p].begin() + at, changelog[p].begin() + end);  // owned copies
        for (const KeyValueWrite& w : batch) {
          m.bytes += static_cast<int64_t>(w.key.size() + (w.value ? w.value->size() : 0));
        }
        m.records += static_cast<int64_t>(batch.size());
        if (absl::Status s = writer.Write(static_cast<int32_t>(p), batch); !s.ok()) return s;
      }
    }
    if (absl::Status s = writer.Finish(); !s.ok()) return s;
    span.End();
    m.seconds = span.seconds;
    m.cpu_seconds = span.cpu_seconds;
    m.note = writer.Note();
  }
  CheckContents(config, expected, m);
  return m;
}

absl::StatusOr<Measurement> MeasureOverlapped(Backend& backend, const std::string& topic,
                                              int32_t partitions, WritePath path,
                                              const LimitConfig& config,
                                              const std::vector<StoreDigest>& expected) {
  Measurement m;
  {
    RawWriter writer(path, config);
    if (absl::Status s = writer.Open(partitions); !s.ok()) return s;
    BatchQueue queue;
    absl::Status write_status;
    const size_t batch_max = static_cast<size_t>(config.batch_records);
    Span span = Span::Begin();
    std::thread write_thread([&] {
      int32_t p = 0;
      std::vector<KeyValueWrite> batch;
      while (queue.Pop(p, batch)) {
        if (write_status.ok()) write_status = writer.Write(p, batch);
      }
      if (write_status.ok()) write_status = writer.Finish();
    });
    std::vector<std::vector<KeyValueWrite>> pending(static_cast<size_t>(partitions));
    absl::StatusOr<RawConsumeResult> fetched = backend.RawConsume(
        topic, partitions, [&](int32_t p, const std::vector<RawRecord>& records) {
          std::vector<KeyValueWrite>& batch = pending[static_cast<size_t>(p)];
          for (const RawRecord& r : records) {
            batch.push_back(KeyValueWrite{std::string(r.key),
                                          r.value ? std::optional<std::string>(*r.value)
                                                  : std::nullopt});
            if (batch.size() == batch_max) queue.Push(p, std::exchange(batch, {}));
          }
        });
    for (int32_t p = 0; p < partitions; ++p) {
      if (!pending[p].empty()) queue.Push(p, std::move(pending[p]));
    }
    queue.Close();
    write_thread.join();
    span.End();
    if (!fetched.ok()) return fetched.status();
    if (!write_status.ok()) return write_status;
    m.records = fetched->records;
    m.bytes = fetched->bytes;
    m.seconds = span.seconds;
    m.cpu_seconds = span.cpu_seconds;
    m.note = writer.Note() + ", fetch and write on two threads";
  }
  CheckContents(config, expected, m);
  return m;
}

}  // namespace restoresim::bench
