#include "bench/restore_limits.h"

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>

#include "core/state/rocksdb_options.h"
#include "core/state/rocksdb_status.h"
#include "core/state/sst_bulk_loader.h"

namespace restoresim::bench {
namespace {

constexpr size_t kOverlapQueueBatchesMax = 16;  // ~16k records in flight between the threads

rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

// One DB per partition, written the way the store's write path writes.
class RawWriter {
 public:
  RawWriter(WritePath path, const LimitConfig& config) : path_(path), config_(config) {}
  ~RawWriter() { Close(); }

  absl::Status Open(int32_t partitions) {
    options_ = KafkaStreamsRocksDbOptions();
    std::error_code error;
    std::filesystem::create_directories(config_.dir, error);
    for (int32_t p = 0; p < partitions; ++p) {
      const std::string dir = fmt::format("{}/p{}", config_.dir, p);
      rocksdb::DB* raw = nullptr;
      if (absl::Status s = TranslateRocksDb(rocksdb::DB::Open(options_, dir, &raw), "open");
          !s.ok()) {
        return s;
      }
      dbs_.emplace_back(raw);
      loaders_.push_back(std::make_unique<SstBulkLoader>(dir + "/bulk-restore", options_));
      first_chunk_.push_back(true);
    }
    return absl::OkStatus();
  }

  absl::Status Write(int32_t p, std::vector<KeyValueWrite>& batch) {
    if (path_ == WritePath::kWriteBatch) {
      rocksdb::WriteBatch wb;
      for (const KeyValueWrite& w : batch) {
        (void)(w.value ? wb.Put(ToSlice(w.key), ToSlice(*w.value)) : wb.Delete(ToSlice(w.key)));
      }
      rocksdb::WriteOptions no_wal;
      no_wal.disableWAL = true;
      return TranslateRocksDb(dbs_[p]->Write(no_wal, &wb), "write");
    }
    SstBulkLoader& loader = *loaders_[p];
    if (loader.buffered_bytes() >= config_.bulk_chunk_bytes_max) {
      if (absl::Status s = Ingest(p); !s.ok()) return s;
    }
    for (KeyValueWrite& w : batch) loader.Add(std::move(w));
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
    for (auto& db : dbs_) {
      if (db != nullptr) (void)db->Close();
    }
    dbs_.clear();
  }

 private:
  absl::Status Ingest(int32_t p) {
    // Fresh DBs: the first chunk may drop its tombstones, as the store does.
    if (absl::Status s = loaders_[p]->IngestInto(*dbs_[p], first_chunk_[p]); !s.ok()) return s;
    first_chunk_[p] = false;
    return absl::OkStatus();
  }

  const WritePath path_;
  const LimitConfig config_;
  rocksdb::Options options_;
  std::vector<std::unique_ptr<rocksdb::DB>> dbs_;
  std::vector<std::unique_ptr<SstBulkLoader>> loaders_;
  std::vector<bool> first_chunk_;
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
  rocksdb::DB* raw = nullptr;
  rocksdb::Options options = KafkaStreamsRocksDbOptions();
  options.create_if_missing = false;
  if (absl::Status s = TranslateRocksDb(rocksdb::DB::OpenForReadOnly(options, dir, &raw),
                                        "open for reading " + dir);
      !s.ok()) {
    return s;
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  StoreDigest digest;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    digest.Add(std::string_view(it->key().data(), it->key().size()),
               std::string_view(it->value().data(), it->value().size()));
  }
  if (absl::Status s = TranslateRocksDb(it->status(), "iterate " + dir); !s.ok()) return s;
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
