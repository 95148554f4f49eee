#include "core/state/sst_bulk_loader.h"

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/sst_file_writer.h>

#include <algorithm>
#include <cstring>

#include "core/state/rocksdb_status.h"
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

}  // namespace

SstBulkLoader::SstBulkLoader(std::string scratch_dir, rocksdb::Options options)
    : scratch_dir_(std::move(scratch_dir)), options_(std::move(options)) {}

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
  const int c = ToSlice(ka).compare(ToSlice(kb));  // bytewise, as RocksDB's default comparator
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
  // The written pages stay cached (the default drops them): restored data is read soon.
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options_, nullptr,
                                /*invalidate_page_cache=*/false);
  if (absl::Status s = TranslateRocksDb(writer.Open(path), "open sst " + path); !s.ok()) return s;
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
    const rocksdb::Status s = w.value ? writer.Put(ToSlice(w.key), ToSlice(*w.value))
                                      : writer.Delete(ToSlice(w.key));
    if (absl::Status t = TranslateRocksDb(s, "sst add"); !t.ok()) return t;
    ++written;
  }
  if (written == 0) return absl::OkStatus();  // nothing left: the caller removes the file
  return TranslateRocksDb(writer.Finish(), "finish sst " + path);
}

absl::Status SstBulkLoader::IngestInto(rocksdb::DB& db, bool drop_tombstones) {
  if (writes_.empty()) return absl::OkStatus();
  rocksdb::Env* env = rocksdb::Env::Default();
  if (absl::Status s = TranslateRocksDb(env->CreateDirIfMissing(scratch_dir_), "mkdir");
      !s.ok()) {
    return s;
  }
  const std::string path = fmt::format("{}/chunk-{}.sst", scratch_dir_, next_file_++);
  const std::vector<Entry> sorted = SortedEntries();
  const int64_t dropped_before = stats_.tombstones_dropped;
  int64_t written = 0;
  absl::Status s = WriteFile(sorted, drop_tombstones, path, written);
  if (s.ok() && written > 0) {
    rocksdb::IngestExternalFileOptions ingest;
    ingest.move_files = true;          // a hard link: the chunk is not copied again
    ingest.allow_blocking_flush = true;  // an overlapping memtable is flushed first (older)
    s = TranslateRocksDb(db.IngestExternalFile({path}, ingest), "ingest " + path);
  }
  (void)env->DeleteFile(path);  // moved on success (the link stays in the DB); a leftover else
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
