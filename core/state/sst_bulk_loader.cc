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

void SstBulkLoader::Add(KeyValueWrite write) {
  RS_CHECK(writes_.size() < UINT32_MAX, "bulk chunk of more than 2^32 writes");
  common_ = writes_.empty() ? write.key.size() : CommonPrefix(writes_[0].key, write.key, common_);
  bytes_ += write.key.size() + (write.value ? write.value->size() : 0);
  writes_.push_back(std::move(write));
}

void SstBulkLoader::Clear() {
  writes_.clear();
  bytes_ = 0;
  common_ = 0;
}

bool SstBulkLoader::Less(const Entry& a, const Entry& b) const {
  if (a.prefix != b.prefix) return a.prefix < b.prefix;
  const std::string& ka = writes_[a.index].key;
  const std::string& kb = writes_[b.index].key;
  const int c = std::string_view(ka).compare(kb);  // bytewise, as RocksDB's default comparator
  if (c != 0) return c < 0;
  return a.index < b.index;  // the same key: arrival order, so the last write comes last
}

std::vector<SstBulkLoader::Entry> SstBulkLoader::SortedEntries() const {
  std::vector<Entry> entries(writes_.size());
  for (uint32_t i = 0; i < entries.size(); ++i) {
    entries[i] = Entry{PrefixAt(writes_[i].key, common_), i};
  }
  std::sort(entries.begin(), entries.end(),
            [this](const Entry& a, const Entry& b) { return Less(a, b); });
  return entries;
}

// Sorted order visits the buffered writes at random: without prefetching, nearly every record
// costs two or three cache misses (the write, its key, its value), which was most of the time
// spent writing a chunk. The write `kAhead` entries on is fetched now, and the key and value of
// the one half as far on (whose write arrived earlier).
void SstBulkLoader::Prefetch(const std::vector<Entry>& sorted, size_t i) const {
  constexpr size_t kAhead = 32;
  if (i + kAhead < sorted.size()) {
    const KeyValueWrite* w = &writes_[sorted[i + kAhead].index];
    __builtin_prefetch(w);
    __builtin_prefetch(reinterpret_cast<const char*>(w) + 64);
  }
  if (i + kAhead / 2 < sorted.size()) {
    const KeyValueWrite& w = writes_[sorted[i + kAhead / 2].index];
    __builtin_prefetch(w.key.data());
    if (w.value.has_value()) __builtin_prefetch(w.value->data());
  }
}

absl::Status SstBulkLoader::WriteFile(const std::vector<Entry>& sorted, bool drop_tombstones,
                                      const std::string& path, int64_t& written) {
  // The C API's writer drops the written pages from the page cache as it goes (RocksDB's
  // default); the C++ API could keep them, the C API cannot say so.
  rocksdb_envoptions_t* env = lib_.rocksdb_envoptions_create();
  rocksdb_sstfilewriter_t* writer = lib_.rocksdb_sstfilewriter_create(env, options_.get());
  lib_.rocksdb_envoptions_destroy(env);
  absl::Status s = WriteEntries(writer, sorted, drop_tombstones, path, written);
  lib_.rocksdb_sstfilewriter_destroy(writer);
  return s;
}

absl::Status SstBulkLoader::WriteEntries(rocksdb_sstfilewriter_t* writer,
                                         const std::vector<Entry>& sorted, bool drop_tombstones,
                                         const std::string& path, int64_t& written) {
  char* error = nullptr;
  lib_.rocksdb_sstfilewriter_open(writer, path.c_str(), &error);
  if (absl::Status s = lib_.Check(error, "open sst " + path); !s.ok()) return s;
  for (size_t i = 0; i < sorted.size(); ++i) {
    Prefetch(sorted, i);
    const KeyValueWrite& w = writes_[sorted[i].index];
    // A later write of the same key follows: it wins.
    if (i + 1 < sorted.size() && sorted[i + 1].prefix == sorted[i].prefix &&
        writes_[sorted[i + 1].index].key == w.key) {
      continue;
    }
    if (!w.value.has_value() && drop_tombstones) {
      ++stats_.tombstones_dropped;
      continue;
    }
    if (w.value.has_value()) {
      lib_.rocksdb_sstfilewriter_put(writer, w.key.data(), w.key.size(), w.value->data(),
                                     w.value->size(), &error);
    } else {
      lib_.rocksdb_sstfilewriter_delete(writer, w.key.data(), w.key.size(), &error);
    }
    if (absl::Status t = lib_.Check(error, "sst add"); !t.ok()) return t;
    ++written;
  }
  if (written == 0) return absl::OkStatus();  // nothing left: the caller removes the file
  lib_.rocksdb_sstfilewriter_finish(writer, &error);
  return lib_.Check(error, "finish sst " + path);
}

absl::Status SstBulkLoader::IngestInto(rocksdb_t* db, bool drop_tombstones) {
  RS_CHECK(db != nullptr, "bulk ingestion into a closed DB");
  if (writes_.empty()) return absl::OkStatus();
  if (absl::Status s = MakeDirectory(scratch_dir_); !s.ok()) return s;
  const std::string path = fmt::format("{}/chunk-{}.sst", scratch_dir_, next_file_++);
  const std::vector<Entry> sorted = SortedEntries();
  const int64_t dropped_before = stats_.tombstones_dropped;
  int64_t written = 0;
  absl::Status s = WriteFile(sorted, drop_tombstones, path, written);
  if (s.ok() && written > 0) {
    rocksdb_ingestexternalfileoptions_t* ingest = lib_.rocksdb_ingestexternalfileoptions_create();
    // A hard link: the chunk is not copied again. An overlapping memtable is flushed first.
    lib_.rocksdb_ingestexternalfileoptions_set_move_files(ingest, 1);
    lib_.rocksdb_ingestexternalfileoptions_set_allow_blocking_flush(ingest, 1);
    const char* files[] = {path.c_str()};
    char* error = nullptr;
    lib_.rocksdb_ingest_external_file(db, files, 1, ingest, &error);
    lib_.rocksdb_ingestexternalfileoptions_destroy(ingest);
    s = lib_.Check(error, "ingest " + path);
  }
  (void)::unlink(path.c_str());  // moved on success (the link stays in the DB); a leftover else
  if (!s.ok()) {
    stats_.tombstones_dropped = dropped_before;
    return s;
  }
  if (written > 0) ++stats_.files;
  stats_.records_in += static_cast<int64_t>(writes_.size());
  stats_.entries_out += written;
  Clear();
  return absl::OkStatus();
}

}  // namespace restoresim
