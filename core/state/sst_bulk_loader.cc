#include "core/state/sst_bulk_loader.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/util/check.h"

namespace restoresim {
namespace {

size_t CommonPrefix(std::string_view a, std::string_view b, size_t limit) {
  const size_t n = std::min({a.size(), b.size(), limit});
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Eight key bytes from `offset`, big-endian and zero-padded: integer order is bytewise order.
uint64_t PrefixAt(std::string_view key, size_t offset) {
  uint64_t prefix = 0;
  for (size_t i = 0; i < 8; ++i) {
    const size_t at = offset + i;
    const uint8_t byte = at < key.size() ? static_cast<uint8_t>(key[at]) : 0;
    prefix = (prefix << 8) | byte;
  }
  return prefix;
}

// The chunk files' directory, made when missing (an I/O error is retryable).
absl::Status MakeDirectory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) return absl::OkStatus();
  return absl::UnavailableError(fmt::format("mkdir {}: {}", dir, std::strerror(errno)));
}

}  // namespace

SstBulkLoader::SstBulkLoader(std::string scratch_dir, const RocksDbOptions& options)
    : scratch_dir_(std::move(scratch_dir)), options_(options), lib_(options.lib()) {}

SstBulkLoader::~SstBulkLoader() { JoinWriter(); }

void SstBulkLoader::JoinWriter() {
  if (writer_ == nullptr) return;
  writer_->Join();
  writer_.reset();
}

void SstBulkLoader::Add(KeyValueWrite write) {
  Chunk& c = buffer_;
  RS_CHECK(c.writes.size() < UINT32_MAX, "bulk chunk of more than 2^32 writes");
  c.common = c.writes.empty() ? write.key.size() : CommonPrefix(c.writes[0].key, write.key,
                                                                c.common);
  c.bytes += write.key.size() + (write.value ? write.value->size() : 0);
  c.writes.push_back(std::move(write));
}

void SstBulkLoader::Clear() {
  JoinWriter();
  buffer_ = Chunk();
}

bool SstBulkLoader::Chunk::Less(const Entry& a, const Entry& b) const {
  if (a.prefix != b.prefix) return a.prefix < b.prefix;
  const std::string& ka = writes[a.index].key;
  const std::string& kb = writes[b.index].key;
  const int c = std::string_view(ka).compare(kb);  // bytewise, as RocksDB's default comparator
  if (c != 0) return c < 0;
  return a.index < b.index;  // the same key: arrival order, so the last write comes last
}

std::vector<SstBulkLoader::Entry> SstBulkLoader::Chunk::Sorted() const {
  std::vector<Entry> entries(writes.size());
  for (uint32_t i = 0; i < entries.size(); ++i) {
    entries[i] = Entry{PrefixAt(writes[i].key, common), i};
  }
  std::sort(entries.begin(), entries.end(),
            [this](const Entry& a, const Entry& b) { return Less(a, b); });
  return entries;
}

// Sorted order visits the buffered writes at random: without prefetching, nearly every record
// costs two or three cache misses (the write, its key, its value), which was most of the time
// spent writing a chunk. The write `kAhead` entries on is fetched now, and the key and value of
// the one half as far on (whose write arrived earlier).
void SstBulkLoader::Chunk::Prefetch(const std::vector<Entry>& sorted, size_t i) const {
  constexpr size_t kAhead = 32;
  if (i + kAhead < sorted.size()) {
    const KeyValueWrite* w = &writes[sorted[i + kAhead].index];
    __builtin_prefetch(w);
    __builtin_prefetch(reinterpret_cast<const char*>(w) + 64);
  }
  if (i + kAhead / 2 < sorted.size()) {
    const KeyValueWrite& w = writes[sorted[i + kAhead / 2].index];
    __builtin_prefetch(w.key.data());
    if (w.value.has_value()) __builtin_prefetch(w.value->data());
  }
}

absl::Status SstBulkLoader::WriteFile(const Chunk& chunk, const std::vector<Entry>& sorted,
                                      const std::string& path, Written& out) const {
  // The C API's writer drops the written pages from the page cache as it goes (RocksDB's
  // default); the C++ API could keep them, the C API cannot say so.
  rocksdb_envoptions_t* env = lib_.rocksdb_envoptions_create();
  rocksdb_sstfilewriter_t* writer = lib_.rocksdb_sstfilewriter_create(env, options_.get());
  lib_.rocksdb_envoptions_destroy(env);
  absl::Status s = WriteEntries(writer, chunk, sorted, path, out);
  lib_.rocksdb_sstfilewriter_destroy(writer);
  return s;
}

absl::Status SstBulkLoader::WriteEntries(rocksdb_sstfilewriter_t* writer, const Chunk& chunk,
                                         const std::vector<Entry>& sorted,
                                         const std::string& path, Written& out) const {
  char* error = nullptr;
  lib_.rocksdb_sstfilewriter_open(writer, path.c_str(), &error);
  if (absl::Status s = lib_.Check(error, "open sst " + path); !s.ok()) return s;
  for (size_t i = 0; i < sorted.size(); ++i) {
    chunk.Prefetch(sorted, i);
    const KeyValueWrite& w = chunk.writes[sorted[i].index];
    // A later write of the same key follows: it wins.
    if (i + 1 < sorted.size() && sorted[i + 1].prefix == sorted[i].prefix &&
        chunk.writes[sorted[i + 1].index].key == w.key) {
      continue;
    }
    if (!w.value.has_value() && chunk.drop_tombstones) {
      ++out.dropped;
      continue;
    }
    if (w.value.has_value()) {
      lib_.rocksdb_sstfilewriter_put(writer, w.key.data(), w.key.size(), w.value->data(),
                                     w.value->size(), &error);
    } else {
      lib_.rocksdb_sstfilewriter_delete(writer, w.key.data(), w.key.size(), &error);
    }
    if (absl::Status t = lib_.Check(error, "sst add"); !t.ok()) return t;
    ++out.entries;
  }
  if (out.entries == 0) return absl::OkStatus();  // nothing left: the caller removes the file
  lib_.rocksdb_sstfilewriter_finish(writer, &error);
  return lib_.Check(error, "finish sst " + path);
}

SstBulkLoader::Written SstBulkLoader::Ingest(const Chunk& chunk, rocksdb_t* db) const {
  RS_CHECK(db != nullptr && !chunk.writes.empty(), "bulk ingestion of nothing or into nothing");
  Written out;
  out.status = MakeDirectory(scratch_dir_);
  if (!out.status.ok()) return out;
  const std::string path = fmt::format("{}/chunk-{}.sst", scratch_dir_, chunk.file);
  const std::vector<Entry> sorted = chunk.Sorted();
  out.status = WriteFile(chunk, sorted, path, out);
  if (out.status.ok() && out.entries > 0) {
    rocksdb_ingestexternalfileoptions_t* ingest = lib_.rocksdb_ingestexternalfileoptions_create();
    // A hard link: the chunk is not copied again. An overlapping memtable is flushed first.
    lib_.rocksdb_ingestexternalfileoptions_set_move_files(ingest, 1);
    lib_.rocksdb_ingestexternalfileoptions_set_allow_blocking_flush(ingest, 1);
    const char* files[] = {path.c_str()};
    char* error = nullptr;
    lib_.rocksdb_ingest_external_file(db, files, 1, ingest, &error);
    lib_.rocksdb_ingestexternalfileoptions_destroy(ingest);
    out.status = lib_.Check(error, "ingest " + path);
  }
  (void)::unlink(path.c_str());  // moved on success (the link stays in the DB); a leftover else
  return out;
}

void SstBulkLoader::Count(const Chunk& chunk, const Written& written) {
  RS_CHECK(written.status.ok());
  if (written.entries > 0) ++stats_.files;
  stats_.records_in += static_cast<int64_t>(chunk.writes.size());
  stats_.entries_out += written.entries;
  stats_.tombstones_dropped += written.dropped;
}

SstBulkLoader::Chunk SstBulkLoader::TakeBuffer(bool drop_tombstones) {
  Chunk chunk = std::move(buffer_);
  buffer_ = Chunk();
  chunk.drop_tombstones = drop_tombstones;
  chunk.file = next_file_++;
  return chunk;
}

absl::Status SstBulkLoader::Wait() {
  if (!in_flight_) return absl::OkStatus();
  JoinWriter();
  if (!result_.status.ok()) {
    // Written again here, in order, before anything buffered after it.
    result_ = Ingest(chunk_, chunk_db_);
    if (!result_.status.ok()) return result_.status;
  } else {
    ++stats_.background;
  }
  Count(chunk_, result_);
  in_flight_ = false;
  chunk_ = Chunk();
  return absl::OkStatus();
}

absl::Status SstBulkLoader::IngestInBackground(rocksdb_t* db, bool drop_tombstones) {
  if (absl::Status s = Wait(); !s.ok()) return s;
  RS_CHECK(!in_flight_ && writer_ == nullptr);
  if (buffer_.writes.empty()) return absl::OkStatus();
  chunk_ = TakeBuffer(drop_tombstones);
  chunk_db_ = db;
  in_flight_ = true;
  writer_ = std::make_unique<Thread>("bulk-writer",
                                     [this] { result_ = Ingest(chunk_, chunk_db_); });
  return absl::OkStatus();
}

absl::Status SstBulkLoader::IngestInto(rocksdb_t* db, bool drop_tombstones) {
  if (absl::Status s = Wait(); !s.ok()) return s;
  if (buffer_.writes.empty()) return absl::OkStatus();
  buffer_.drop_tombstones = drop_tombstones;
  buffer_.file = next_file_;
  const Written written = Ingest(buffer_, db);
  if (!written.status.ok()) return written.status;
  ++next_file_;
  Count(buffer_, written);
  buffer_ = Chunk();
  RS_CHECK(empty());
  return absl::OkStatus();
}

}  // namespace restoresim
