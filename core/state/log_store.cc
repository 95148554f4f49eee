#include "core/state/log_store.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "core/state/log_record.h"
#include "core/state/log_store_manifest.h"
#include "core/util/check.h"
#include "core/util/run_context.h"
#include "core/util/stable_hash.h"

namespace restoresim {
namespace {

// Segment numbers from here on are renumbered at open (LogStore::Renumber).
constexpr uint32_t kRenumberAt = uint32_t{1} << 31;
constexpr std::string_view kSegmentPrefix = "segment-";
constexpr std::string_view kSegmentSuffix = ".log";

std::string SegmentName(uint32_t number) {
  return fmt::format(FMT_COMPILE("{}{:08}{}"), kSegmentPrefix, number, kSegmentSuffix);
}

// The number of a segment file name, or nullopt for other files. Only the names SegmentName
// gives count: recovery reads segment n under SegmentName(n), so a look-alike such as
// "segment-7.log" would be counted, then not found ("segment-7.log" is a stray file).
std::optional<uint32_t> SegmentNumber(std::string_view name) {
  if (!name.starts_with(kSegmentPrefix) || !name.ends_with(kSegmentSuffix)) return std::nullopt;
  const std::string_view digits =
      name.substr(kSegmentPrefix.size(), name.size() - kSegmentPrefix.size() -
                                             kSegmentSuffix.size());
  uint32_t n = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty() ||
      name != SegmentName(n)) {
    return std::nullopt;
  }
  return n;
}

size_t RecordBytes(std::string_view key, std::string_view value) {
  return 13 + key.size() + value.size();  // header 8 + type 1 + key length 4
}

absl::Status Annotate(const absl::Status& s, std::string_view what) {
  if (s.ok()) return s;
  absl::Status out(s.code(), fmt::format("{}: {}", what, std::string(s.message())));
  if (IsInjected(s)) out = TagInjected(out);
  return out;
}

// An error reading the store's own files at open, classified: something other than what the
// store wrote in their place (a file where its directory should be, a directory, FIFO or device
// where a manifest or segment should be) is damage, kDataLoss, so the task is wiped and
// restored; other errors (I/O) keep their code. A store that cannot be opened as it is never
// blocks its task for ever.
absl::Status OpenError(const absl::Status& s, std::string_view what) {
  if (absl::IsFailedPrecondition(s) || absl::IsAlreadyExists(s)) {
    return absl::DataLossError(fmt::format("{}: {}", what, std::string(s.message())));
  }
  return Annotate(s, what);
}

}  // namespace

LogStore::LogStore(FileSystem& fs, std::string dir, std::string name, LogStoreOptions options)
    : fs_(fs), dir_(std::move(dir)), name_(std::move(name)), options_(options) {}

LogStore::~LogStore() = default;

absl::StatusOr<std::unique_ptr<LogStore>> LogStore::Open(FileSystem& fs, std::string dir,
                                                         std::string name,
                                                         LogStoreOptions options) {
  std::unique_ptr<LogStore> store(new LogStore(fs, std::move(dir), std::move(name), options));
  if (absl::Status s = store->Recover(); !s.ok()) return s;
  return store;
}

// Never 0 (no salt): the store's directory and the segment's number, so that no two segments
// of the state directory share one (stores of two tasks have the same name, not the same
// directory).
uint64_t LogStore::SegmentSalt(uint32_t number) const {
  StableHash h;
  h.AddString(dir_);
  h.Add(number);
  const uint64_t salt = h.Value();
  return salt == 0 ? 1 : salt;
}

std::string LogStore::SegmentPath(uint32_t number) const {
  return fmt::format("{}/{}", dir_, SegmentName(number));
}

std::string LogStore::ManifestPath() const {
  return fmt::format("{}/{}", dir_, kLogStoreManifestName);
}

// manifest_ becomes `next` only once `next` is on disk: a failed write leaves the old one in
// force in memory too, so the next Flush writes it again.
// The same holds for the changelog offset it records.
absl::Status LogStore::WriteManifest(std::vector<LogSegmentEntry> next) {
  return WriteManifest(std::move(next), committed_offset_);
}

absl::Status LogStore::WriteManifest(std::vector<LogSegmentEntry> next,
                                     std::optional<int64_t> offset) {
  absl::Status s = WriteFileAtomically(
      fs_, ManifestPath(), EncodeLogStoreManifest(LogStoreManifest{next, offset}));
  if (s.ok()) {
    manifest_ = std::move(next);
    committed_offset_ = offset;
  }
  return Annotate(s, fmt::format("store '{}' manifest", name_));
}

absl::Status LogStore::Recover() {
  if (absl::Status s = fs_.CreateDirIfMissing(dir_); !s.ok()) {
    return OpenError(s, fmt::format("store '{}'", name_));
  }
  absl::StatusOr<std::vector<std::string>> names = fs_.ListDir(dir_);
  if (!names.ok()) return OpenError(names.status(), fmt::format("store '{}'", name_));
  std::set<uint32_t> on_disk;
  bool has_manifest = false;
  for (const std::string& n : *names) {
    if (std::optional<uint32_t> number = SegmentNumber(n)) on_disk.insert(*number);
    if (n == kLogStoreManifestName) has_manifest = true;
  }
  if (on_disk.size() > options_.segments_max) {
    return absl::DataLossError(fmt::format("store '{}' in {}: {} segments (more than {})", name_,
                                           dir_, on_disk.size(), options_.segments_max));
  }
  std::vector<LogSegmentEntry> listed;
  if (!has_manifest) {
    if (!on_disk.empty()) {
      // The manifest is written before the first segment file exists: only damage removes it.
      return absl::DataLossError(fmt::format(
          "store '{}' in {}: {} segment files but no manifest (it was lost): what was flushed "
          "is unknown",
          name_, dir_, on_disk.size()));
    }
    created_ = true;
    // A new store reaches offset 0. Only a manifest of an earlier release has no offset (it
    // stays unknown until the first Commit): a manifest of this one saying "none" could pass
    // a store older than its checkpoint as trusted.
    committed_offset_ = 0;
  } else {
    absl::StatusOr<std::string> text = fs_.ReadFile(ManifestPath());
    if (!text.ok()) return OpenError(text.status(), fmt::format("store '{}'", name_));
    absl::StatusOr<LogStoreManifest> decoded =
        DecodeLogStoreManifest(*text, options_.segments_max);
    if (!decoded.ok()) {
      return absl::DataLossError(fmt::format("store '{}' in {}: {}", name_, dir_,
                                             std::string(decoded.status().message())));
    }
    listed = std::move(decoded->segments);
    committed_offset_ = decoded->changelog_offset;
  }
  // Replay exactly what the listed segments flushed. Bytes past that (and newer segments a
  // crash left unlisted) were never promised durable: they are dropped, as a RocksDB store with
  // its WAL off loses what it wrote after its last flush.
  std::vector<LogSegmentEntry> kept;
  const uint32_t last_listed = listed.empty() ? 0 : listed.back().number;
  for (const LogSegmentEntry& e : listed) {
    if (!on_disk.contains(e.number)) {
      if (e.flushed_bytes == 0) continue;  // named before it was created, then a crash
      return absl::DataLossError(fmt::format(
          "store '{}': segment {} ({} flushed bytes) is listed in the manifest but missing",
          name_, SegmentPath(e.number), e.flushed_bytes));
    }
    if (absl::Status s = ReplaySegment(e.number, e.flushed_bytes, e.salt); !s.ok()) return s;
    if (e.flushed_bytes > 0) kept.push_back({e.number, e.flushed_bytes, true, e.salt});
  }
  for (uint32_t number : on_disk) {
    if (number <= last_listed) continue;
    absl::StatusOr<std::string> contents = fs_.ReadFile(SegmentPath(number));
    if (contents.ok()) tail_bytes_dropped_ += contents->size();
  }
  manifest_ = std::move(kept);
  const uint32_t highest = std::max(last_listed, on_disk.empty() ? 0u : *on_disk.rbegin());
  if (highest >= kRenumberAt) return Renumber(on_disk);
  if (absl::Status s = StartSegment(highest + 1); !s.ok()) return s;
  // Segments no longer listed (empty ones, those a compaction replaced, unlisted older ones)
  // go once the new manifest is durable.
  for (uint32_t number : on_disk) {
    const bool still_listed = std::any_of(manifest_.begin(), manifest_.end(),
                                          [&](const LogSegmentEntry& e) {
                                            return e.number == number;
                                          });
    if (!still_listed) {
      if (absl::Status s = fs_.DeleteFile(SegmentPath(number)); !s.ok() && !absl::IsNotFound(s)) {
        return Annotate(s, fmt::format("store '{}'", name_));
      }
    }
  }
  // Each open adds a segment: fold them into one before they pile up.
  if (manifest_.size() > options_.segments_compact_at) return Compact();
  return absl::OkStatus();
}

// Numbers only grow, by one per open or compaction, so one in the upper half of the range came
// from damage or a foreign file. Refusing it (DataLoss) was not enough: the fuzzer found a
// stray segment-4294967294.log that the open accepted, starting segment 2^32-1, after which
// the next open had no number left and failed a store that had opened and closed cleanly
// (fuzz/log_store_fuzzer, CI of 2026-12-06). Whatever refusal threshold, the segment an open
// starts may land on it; so the open writes the live entries (replayed from what the manifest
// lists) as one segment under the lowest number not on disk, which the manifest then lists
// alone, and deletes the rest. A crash before the manifest names the new segment leaves it
// unlisted, and the next open deletes it; after, the old segments are unlisted and go.
absl::Status LogStore::Renumber(const std::set<uint32_t>& on_disk) {
  RS_CHECK(file_ == nullptr, "store '{}': renumbered with a segment open", name_);
  uint32_t number = 1;
  while (on_disk.contains(number)) ++number;
  const uint64_t salt = SegmentSalt(number);
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs_.NewWritableFile(SegmentPath(number));
  if (!file.ok()) return Annotate(file.status(), fmt::format("store '{}'", name_));
  std::string records;
  for (const auto& [key, value] : data_) {
    const std::string_view v = value;
    AppendLogRecord(records, key, &v, salt);
  }
  if (!records.empty()) {
    if (absl::Status s = (*file)->Append(records); !s.ok()) return Annotate(s, "renumbering");
  }
  if (absl::Status s = (*file)->Sync(); !s.ok()) return Annotate(s, "renumbering");
  if (absl::Status s = WriteManifest({{number, records.size(), false, salt}}); !s.ok()) return s;
  file_ = std::move(*file);
  segment_ = number;
  segment_salt_ = salt;
  segment_bytes_ = log_bytes_ = records.size();
  for (uint32_t old : on_disk) {
    if (absl::Status s = fs_.DeleteFile(SegmentPath(old)); !s.ok() && !absl::IsNotFound(s)) {
      return Annotate(s, fmt::format("store '{}'", name_));
    }
  }
  RS_CHECK(manifest_.size() == 1 && manifest_.back().number == number, "store '{}' renumbered",
           name_);
  return Annotate(fs_.SyncDir(dir_), "renumbering");
}

absl::Status LogStore::ReplaySegment(uint32_t number, uint64_t flushed_bytes, uint64_t salt) {
  const std::string path = SegmentPath(number);
  absl::StatusOr<std::string> contents = fs_.ReadFile(path);
  if (!contents.ok()) return OpenError(contents.status(), fmt::format("store '{}'", name_));
  if (contents->size() < flushed_bytes) {
    return absl::DataLossError(fmt::format(
        "store '{}': segment {} holds {} bytes, but {} were flushed", name_, path,
        contents->size(), flushed_bytes));
  }
  // Every record below flushed_bytes must be whole and intact: a flush synced them.
  std::string_view in = std::string_view(*contents).substr(0, flushed_bytes);
  uint64_t at = 0;
  while (!in.empty()) {
    DecodedLogRecord r;
    if (DecodeLogRecord(in, r, salt) != DecodeResult::kOk) {
      // Mutation damage-cut-as-torn-tail: the damage is cut off as if a crash had torn it.
      if (RS_MUTANT(kDamageCutAsTornTail)) {
        tail_bytes_dropped_ += contents->size() - at;
        return absl::OkStatus();
      }
      return absl::DataLossError(fmt::format(
          "store '{}': segment {} is damaged at byte {}, within the {} bytes a flush made "
          "durable (a record that does not decode, or whose checksum fails: damaged bytes, or "
          "bytes written for another segment)",
          name_, path, at, flushed_bytes));
    }
    if (r.value.has_value()) {
      auto it = data_.find(r.key);
      if (it != data_.end()) live_bytes_ -= RecordBytes(it->first, it->second);
      data_.insert_or_assign(std::string(r.key), std::string(*r.value));
      live_bytes_ += RecordBytes(r.key, *r.value);
    } else if (auto it = data_.find(r.key); it != data_.end()) {
      live_bytes_ -= RecordBytes(it->first, it->second);
      data_.erase(it);
    }
    log_bytes_ += r.bytes;
    at += r.bytes;
    in.remove_prefix(r.bytes);
  }
  RS_CHECK(at == flushed_bytes, "segment {} replayed to {} of {} flushed bytes", path, at,
           flushed_bytes);
  tail_bytes_dropped_ += contents->size() - flushed_bytes;  // written after the last flush
  return absl::OkStatus();
}

// Names the new segment in the manifest (open, nothing flushed) before it exists, so that a
// segment file is never on disk without a manifest naming what of it is durable.
absl::Status LogStore::StartSegment(uint32_t number) {
  RS_CHECK(manifest_.empty() || manifest_.back().number < number, "segment {} after {}", number,
           manifest_.back().number);
  std::vector<LogSegmentEntry> next = manifest_;
  for (LogSegmentEntry& e : next) e.sealed = true;
  const uint64_t salt = SegmentSalt(number);
  next.push_back({number, 0, false, salt});
  if (absl::Status s = WriteManifest(std::move(next)); !s.ok()) return s;
  RS_CHECK(manifest_.back().number == number && !manifest_.back().sealed, "segment {} not open",
           number);
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs_.NewWritableFile(SegmentPath(number));
  if (!file.ok()) return Annotate(file.status(), fmt::format("store '{}'", name_));
  file_ = std::move(*file);
  segment_ = number;
  segment_bytes_ = 0;
  segment_salt_ = salt;
  return absl::OkStatus();
}

absl::Status LogStore::CheckOpen() const {
  if (file_ == nullptr) {
    return absl::FailedPreconditionError(fmt::format("store '{}' is closed", name_));
  }
  return absl::OkStatus();
}

absl::Status LogStore::Append(std::string_view key, const std::string_view* value) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  std::string record;
  AppendLogRecord(record, key, value, segment_salt_);
  if (absl::Status s = WriteRecords(record); !s.ok()) return s;
  ApplyInMemory(key, value);
  return absl::OkStatus();
}

// One append to the segment: an injected or real failure leaves the file and the accounting as
// they were (MemFileSystem's Append changes nothing when it fails; a torn tail after a crash is
// dropped by the replay).
absl::Status LogStore::WriteRecords(std::string_view records) {
  RS_CHECK(file_ != nullptr && !records.empty(), "store '{}': a write of nothing", name_);
  if (absl::Status s = file_->Append(records); !s.ok()) {
    return Annotate(s, fmt::format("store '{}' write", name_));
  }
  log_bytes_ += records.size();
  segment_bytes_ += records.size();
  return absl::OkStatus();
}

void LogStore::ApplyInMemory(std::string_view key, const std::string_view* value) {
  auto it = data_.find(key);
  if (it != data_.end()) {
    const uint64_t replaced = RecordBytes(it->first, it->second);
    RS_CHECK(live_bytes_ >= replaced, "store '{}': live bytes {} below a record's {}", name_,
             live_bytes_, replaced);
    live_bytes_ -= replaced;
  }
  if (value != nullptr) {
    if (it != data_.end()) {
      it->second.assign(*value);
    } else {
      data_.emplace(std::string(key), std::string(*value));
    }
    live_bytes_ += RecordBytes(key, *value);
  } else if (it != data_.end()) {
    data_.erase(it);
  }
}

absl::Status LogStore::Put(std::string_view key, std::string_view value) {
  return Append(key, &value);
}

absl::Status LogStore::Delete(std::string_view key) { return Append(key, nullptr); }

absl::StatusOr<std::optional<std::string>> LogStore::Get(std::string_view key) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  auto it = data_.find(key);
  if (it == data_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

// All or nothing (KeyValueStore::RestoreBatch, as RocksDB's WriteBatch): the batch's records
// go to the segment in one append and reach the map only once it was written, so a failed
// write takes none of them and the reader may give the batch again. It used to append record
// by record, and a failure part-way left the first records applied
// (LogStoreCrashTest.ARestoreBatchWhoseWriteFailsTakesNoneOfItsRecords).
absl::Status LogStore::ApplyBatch(const std::vector<KeyValueWrite>& writes) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (writes.empty()) return absl::OkStatus();
  // Mutation restore-batch-record-by-record: the store before the fix.
  if (RS_MUTANT(kRestoreBatchRecordByRecord)) {
    for (const KeyValueWrite& w : writes) {
      absl::Status s = w.value ? Put(w.key, *w.value) : Delete(w.key);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  std::string records;
  for (const KeyValueWrite& w : writes) {
    const std::string_view value = w.value ? std::string_view(*w.value) : std::string_view();
    AppendLogRecord(records, w.key, w.value ? &value : nullptr, segment_salt_);
  }
  if (absl::Status s = WriteRecords(records); !s.ok()) return s;
  for (const KeyValueWrite& w : writes) {
    const std::string_view value = w.value ? std::string_view(*w.value) : std::string_view();
    ApplyInMemory(w.key, w.value ? &value : nullptr);
  }
  return absl::OkStatus();
}

absl::Status LogStore::Flush() { return FlushRecording(committed_offset_); }

absl::Status LogStore::Commit(int64_t changelog_offset) {
  RS_CHECK(changelog_offset >= 0, "store '{}': changelog offset {}", name_, changelog_offset);
  absl::Status s = FlushRecording(changelog_offset);
  RS_CHECK(!s.ok() || committed_offset_ == changelog_offset, "store '{}': offset not recorded",
           name_);
  return s;
}

// The flushed length and the offset go into one manifest write: the offset is durable exactly
// when the bytes it reaches are.
absl::Status LogStore::FlushRecording(std::optional<int64_t> offset) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  RS_CHECK(!manifest_.empty() && manifest_.back().number == segment_ && !manifest_.back().sealed,
           "store '{}': the manifest does not end with the open segment {}", name_, segment_);
  if (absl::Status s = file_->Sync(); !s.ok()) return Annotate(s, fmt::format("store '{}'", name_));
  if (manifest_.back().flushed_bytes != segment_bytes_ || committed_offset_ != offset) {
    // The directory sync of the manifest's rename also makes the segment's entry durable.
    std::vector<LogSegmentEntry> next = manifest_;
    next.back().flushed_bytes = segment_bytes_;
    if (absl::Status s = WriteManifest(std::move(next), offset); !s.ok()) return s;
  }
  RS_CHECK(manifest_.back().flushed_bytes == segment_bytes_, "store '{}': flush not recorded",
           name_);
  if (log_bytes_ > options_.compact_min_bytes && log_bytes_ > 2 * live_bytes_) return Compact();
  return absl::OkStatus();
}

// Writes the live entries into a new segment, makes it durable and the only one the manifest
// lists, then deletes the older ones. A crash at any point leaves a manifest whose segments
// replay to the same entries (the new segment, unlisted or listed with nothing flushed, only
// repeats puts).
absl::Status LogStore::Compact() {
  RS_CHECK(manifest_.back().number == segment_ && manifest_.back().flushed_bytes == segment_bytes_,
           "store '{}': compaction of segment {} with unflushed bytes", name_, segment_);
  const uint32_t previous = segment_;
  if (absl::Status s = file_->Close(); !s.ok()) return Annotate(s, "compaction");
  file_.reset();
  if (absl::Status s = StartSegment(previous + 1); !s.ok()) return s;
  log_bytes_ = 0;
  for (const auto& [key, value] : data_) {
    std::string record;
    const std::string_view v = value;
    AppendLogRecord(record, key, &v, segment_salt_);
    if (absl::Status s = file_->Append(record); !s.ok()) return Annotate(s, "compaction");
    log_bytes_ += record.size();
    segment_bytes_ += record.size();
  }
  if (absl::Status s = file_->Sync(); !s.ok()) return Annotate(s, "compaction");
  if (absl::Status s = WriteManifest({{segment_, segment_bytes_, false, segment_salt_}}); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::vector<std::string>> names = fs_.ListDir(dir_);
  if (!names.ok()) return Annotate(names.status(), "compaction");
  for (const std::string& n : *names) {
    std::optional<uint32_t> number = SegmentNumber(n);
    if (number && *number <= previous) {
      absl::Status s = fs_.DeleteFile(dir_ + "/" + n);
      if (!s.ok()) return Annotate(s, "compaction");
    }
  }
  return Annotate(fs_.SyncDir(dir_), "compaction");
}

absl::Status LogStore::Close() {
  if (file_ == nullptr) return absl::OkStatus();
  absl::Status s = file_->Close();
  file_.reset();
  data_.clear();
  return Annotate(s, fmt::format("store '{}' close", name_));
}

absl::StatusOr<std::map<std::string, std::string>> LogStore::ReadAll() {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  return std::map<std::string, std::string>(data_.begin(), data_.end());
}

}  // namespace restoresim
