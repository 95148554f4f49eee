#include "core/state/sst_bulk_loader.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

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

void SstBulkLoader::Add(std::string_view key, const std::optional<std::string>& value) {
  Chunk& c = buffer_;
  RS_CHECK(c.records.size() < UINT32_MAX, "bulk chunk of more than 2^32 writes");
  RS_CHECK(key.size() < UINT32_MAX && (!value || value->size() < Record::kTombstone),
           "a bulk write of 4 GiB or more");
  const size_t value_size = value ? value->size() : 0;
  char* at = Reserve(key.size() + value_size);
  if (!key.empty()) std::memcpy(at, key.data(), key.size());
  if (value_size > 0) std::memcpy(at + key.size(), value->data(), value_size);
  c.common = c.records.empty() ? key.size() : CommonPrefix(c.records[0].key(), key, c.common);
  c.bytes += key.size() + value_size;
  if (!c.sorted.empty()) c.sorted.clear();
  c.records.push_back(Record{at, static_cast<uint32_t>(key.size()),
                             value ? static_cast<uint32_t>(value_size) : Record::kTombstone});
  RS_CHECK(at + key.size() + value_size == c.blocks.back().data.get() + c.block_used,
           "a record ends where its block's used bytes end");
}

char* SstBulkLoader::Reserve(size_t size) {
  Chunk& c = buffer_;
  if (c.blocks.empty() || c.blocks.back().size - c.block_used < size) {
    Block block;
    if (size <= kBlockBytes && !spare_.empty()) {
      block = std::move(spare_.back());
      spare_.pop_back();
    } else {
      block.size = std::max(size, kBlockBytes);
      block.data = std::make_unique_for_overwrite<char[]>(block.size);
    }
    c.blocks.push_back(std::move(block));
    c.block_used = 0;
  }
  char* at = c.blocks.back().data.get() + c.block_used;
  c.block_used += size;
  RS_CHECK_LE(c.block_used, c.blocks.back().size);
  return at;
}

void SstBulkLoader::Recycle(Chunk& chunk) {
  for (Block& block : chunk.blocks) {
    if (block.size == kBlockBytes && spare_.size() < kSpareBlocksMax) {
      spare_.push_back(std::move(block));
    }
  }
  chunk = Chunk();
  RS_CHECK(chunk.records.empty() && chunk.blocks.empty());
}

void SstBulkLoader::Clear() {
  JoinWriter();
  Recycle(buffer_);
}

bool SstBulkLoader::Chunk::Less(const Entry& a, const Entry& b) const {
  if (a.prefix != b.prefix) return a.prefix < b.prefix;
  // Bytewise, as RocksDB's default comparator.
  const int c = records[a.index].key().compare(records[b.index].key());
  if (c != 0) return c < 0;
  return a.index < b.index;  // the same key: arrival order, so the last write comes last
}

// A least-significant-digit radix sort by prefix, a byte a pass, skipping the passes of a byte
// every entry shares. It is stable: entries of one prefix keep their arrival order.
std::vector<SstBulkLoader::Entry> SstBulkLoader::Chunk::Sorted() const {
  const size_t n = records.size();
  RS_CHECK_LT(n, size_t{UINT32_MAX});
  std::vector<Entry> entries(n);
  std::array<std::array<uint32_t, 256>, 8> counts{};
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t prefix = PrefixAt(records[i].key(), common);
    entries[i] = Entry{prefix, i};
    for (size_t d = 0; d < 8; ++d) ++counts[d][(prefix >> (8 * d)) & 0xff];
  }
  std::vector<Entry> scratch(n);
  for (size_t d = 0; d < 8 && n > 1; ++d) {
    std::array<uint32_t, 256>& at = counts[d];
    if (at[(entries[0].prefix >> (8 * d)) & 0xff] == n) continue;  // one byte for all
    uint32_t sum = 0;
    for (uint32_t& c : at) sum += std::exchange(c, sum);
    for (const Entry& e : entries) scratch[at[(e.prefix >> (8 * d)) & 0xff]++] = e;
    entries.swap(scratch);
  }
  SortTies(entries);
  return entries;
}

// Runs of one prefix (keys that agree on the 8 bytes) by their keys' remaining bytes.
void SstBulkLoader::Chunk::SortTies(std::vector<Entry>& entries) const {
  for (size_t i = 0; i < entries.size();) {
    size_t j = i + 1;
    while (j < entries.size() && entries[j].prefix == entries[i].prefix) ++j;
    if (j - i > 1) {
      std::sort(entries.begin() + static_cast<std::ptrdiff_t>(i),
                entries.begin() + static_cast<std::ptrdiff_t>(j),
                [this](const Entry& a, const Entry& b) { return Less(a, b); });
    }
    RS_CHECK(i == 0 || entries[i - 1].prefix < entries[i].prefix, "radix order");
    i = j;
  }
}

// Sorted order visits the buffered records at random: without prefetching, nearly every record
// costs two or three cache misses (the record, its first and last bytes), which was most of the
// time spent writing a chunk. The record `kAhead` entries on is fetched now, and the bytes of
// the one half as far on (whose record arrived earlier).
void SstBulkLoader::Chunk::Prefetch(const std::vector<Entry>& sorted, size_t i) const {
  constexpr size_t kAhead = 32;
  if (i + kAhead < sorted.size()) __builtin_prefetch(&records[sorted[i + kAhead].index]);
  if (i + kAhead / 2 < sorted.size()) {
    const Record& r = records[sorted[i + kAhead / 2].index];
    const size_t size = r.key_size + (r.tombstone() ? 0 : r.value_size);
    for (size_t at = 0; at < size && at < 256; at += 64) __builtin_prefetch(r.data + at);
    if (size > 0) __builtin_prefetch(r.data + size - 1);
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
    const Record& w = chunk.records[sorted[i].index];
    // A later write of the same key follows: it wins.
    if (i + 1 < sorted.size() && sorted[i + 1].prefix == sorted[i].prefix &&
        chunk.records[sorted[i + 1].index].key() == w.key()) {
      continue;
    }
    if (w.tombstone() && chunk.drop_tombstones) {
      ++out.dropped;
      continue;
    }
    if (!w.tombstone()) {
      lib_.rocksdb_sstfilewriter_put(writer, w.data, w.key_size, w.data + w.key_size,
                                     w.value_size, &error);
    } else {
      lib_.rocksdb_sstfilewriter_delete(writer, w.data, w.key_size, &error);
    }
    if (absl::Status t = lib_.Check(error, "sst add"); !t.ok()) return t;
    ++out.entries;
  }
  if (out.entries == 0) return absl::OkStatus();  // nothing left: the caller removes the file
  lib_.rocksdb_sstfilewriter_finish(writer, &error);
  return lib_.Check(error, "finish sst " + path);
}

SstBulkLoader::Written SstBulkLoader::Ingest(const Chunk& chunk, rocksdb_t* db) const {
  RS_CHECK(db != nullptr && !chunk.records.empty(), "bulk ingestion of nothing or into nothing");
  Written out;
  out.status = MakeDirectory(scratch_dir_);
  if (!out.status.ok()) return out;
  const std::string path = fmt::format("{}/chunk-{}.sst", scratch_dir_, chunk.file);
  const bool fresh = chunk.sorted.size() == chunk.records.size();
  const std::vector<Entry> taken = fresh ? std::vector<Entry>() : chunk.Sorted();
  const std::vector<Entry>& sorted = fresh ? chunk.sorted : taken;
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
  stats_.records_in += static_cast<int64_t>(chunk.records.size());
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
  Recycle(chunk_);
  return absl::OkStatus();
}

absl::Status SstBulkLoader::IngestInBackground(rocksdb_t* db, bool drop_tombstones) {
  // Sorted on this thread while the writer thread still writes the chunk before.
  if (buffer_.sorted.size() != buffer_.records.size()) buffer_.sorted = buffer_.Sorted();
  if (absl::Status s = Wait(); !s.ok()) return s;
  RS_CHECK(!in_flight_ && writer_ == nullptr);
  if (buffer_.records.empty()) return absl::OkStatus();
  chunk_ = TakeBuffer(drop_tombstones);
  chunk_db_ = db;
  in_flight_ = true;
  writer_ = std::make_unique<Thread>("bulk-writer",
                                     [this] { result_ = Ingest(chunk_, chunk_db_); });
  return absl::OkStatus();
}

absl::Status SstBulkLoader::IngestInto(rocksdb_t* db, bool drop_tombstones) {
  if (absl::Status s = Wait(); !s.ok()) return s;
  if (buffer_.records.empty()) return absl::OkStatus();
  buffer_.drop_tombstones = drop_tombstones;
  buffer_.file = next_file_;
  const Written written = Ingest(buffer_, db);
  if (!written.status.ok()) return written.status;
  ++next_file_;
  Count(buffer_, written);
  Recycle(buffer_);
  RS_CHECK(empty());
  return absl::OkStatus();
}

}  // namespace restoresim
