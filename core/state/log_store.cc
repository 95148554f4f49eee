#include "core/state/log_store.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "core/state/log_record.h"
#include "core/util/check.h"

namespace restoresim {
namespace {

constexpr std::string_view kSegmentPrefix = "segment-";
constexpr std::string_view kSegmentSuffix = ".log";

// The number of a segment file name, or nullopt for other files.
std::optional<uint32_t> SegmentNumber(std::string_view name) {
  if (!name.starts_with(kSegmentPrefix) || !name.ends_with(kSegmentSuffix)) return std::nullopt;
  const std::string_view digits =
      name.substr(kSegmentPrefix.size(), name.size() - kSegmentPrefix.size() -
                                             kSegmentSuffix.size());
  uint32_t n = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty()) {
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

std::string LogStore::SegmentPath(uint32_t number) const {
  return fmt::format("{}/{}{:08}{}", dir_, kSegmentPrefix, number, kSegmentSuffix);
}

absl::Status LogStore::Recover() {
  if (absl::Status s = fs_.CreateDirIfMissing(dir_); !s.ok()) {
    return Annotate(s, fmt::format("store '{}'", name_));
  }
  absl::StatusOr<std::vector<std::string>> names = fs_.ListDir(dir_);
  if (!names.ok()) return Annotate(names.status(), fmt::format("store '{}'", name_));
  std::vector<uint32_t> segments;
  for (const std::string& n : *names) {
    if (std::optional<uint32_t> number = SegmentNumber(n)) segments.push_back(*number);
  }
  std::sort(segments.begin(), segments.end());
  if (segments.size() > options_.segments_max) {
    return absl::DataLossError(fmt::format("store '{}' in {}: {} segments (more than {})", name_,
                                           dir_, segments.size(), options_.segments_max));
  }
  for (size_t i = 0; i < segments.size(); ++i) {
    if (absl::Status s = ReplaySegment(SegmentPath(segments[i]), i + 1 == segments.size());
        !s.ok()) {
      return s;
    }
  }
  return StartSegment(segments.empty() ? 1 : segments.back() + 1);
}

absl::Status LogStore::ReplaySegment(const std::string& path, bool last) {
  absl::StatusOr<std::string> contents = fs_.ReadFile(path);
  if (!contents.ok()) return Annotate(contents.status(), fmt::format("store '{}'", name_));
  std::string_view in = *contents;
  while (!in.empty()) {
    DecodedLogRecord r;
    const DecodeResult result = DecodeLogRecord(in, r);
    if (result != DecodeResult::kOk) {
      if (!last) {
        return absl::DataLossError(fmt::format(
            "store '{}': segment {} is damaged at byte {} of {} (not its last segment)", name_,
            path, contents->size() - in.size(), contents->size()));
      }
      tail_bytes_dropped_ += in.size();  // a write cut short by a crash
      break;
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
    in.remove_prefix(r.bytes);
  }
  return absl::OkStatus();
}

absl::Status LogStore::StartSegment(uint32_t number) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs_.NewWritableFile(SegmentPath(number));
  if (!file.ok()) return Annotate(file.status(), fmt::format("store '{}'", name_));
  file_ = std::move(*file);
  segment_ = number;
  segment_entry_synced_ = false;
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
  AppendLogRecord(record, key, value);
  if (absl::Status s = file_->Append(record); !s.ok()) {
    return Annotate(s, fmt::format("store '{}' write", name_));
  }
  log_bytes_ += record.size();
  auto it = data_.find(key);
  if (it != data_.end()) live_bytes_ -= RecordBytes(it->first, it->second);
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
  return absl::OkStatus();
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

absl::Status LogStore::ApplyBatch(const std::vector<KeyValueWrite>& writes) {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  for (const KeyValueWrite& w : writes) {
    absl::Status s = w.value ? Put(w.key, *w.value) : Delete(w.key);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status LogStore::Flush() {
  if (absl::Status s = CheckOpen(); !s.ok()) return s;
  if (absl::Status s = file_->Sync(); !s.ok()) return Annotate(s, fmt::format("store '{}'", name_));
  if (!segment_entry_synced_) {
    if (absl::Status s = fs_.SyncDir(dir_); !s.ok()) {
      return Annotate(s, fmt::format("store '{}'", name_));
    }
    segment_entry_synced_ = true;
  }
  if (log_bytes_ > options_.compact_min_bytes && log_bytes_ > 2 * live_bytes_) return Compact();
  return absl::OkStatus();
}

// Writes the live entries into a new segment, makes it durable, then deletes the older ones.
// A crash at any point leaves a set of segments whose replay gives the same entries.
absl::Status LogStore::Compact() {
  const uint32_t previous = segment_;
  if (absl::Status s = file_->Close(); !s.ok()) return Annotate(s, "compaction");
  if (absl::Status s = StartSegment(previous + 1); !s.ok()) return s;
  log_bytes_ = 0;
  for (const auto& [key, value] : data_) {
    std::string record;
    const std::string_view v = value;
    AppendLogRecord(record, key, &v);
    if (absl::Status s = file_->Append(record); !s.ok()) return Annotate(s, "compaction");
    log_bytes_ += record.size();
  }
  if (absl::Status s = file_->Sync(); !s.ok()) return Annotate(s, "compaction");
  if (absl::Status s = fs_.SyncDir(dir_); !s.ok()) return Annotate(s, "compaction");
  segment_entry_synced_ = true;
  absl::StatusOr<std::vector<std::string>> names = fs_.ListDir(dir_);
  if (!names.ok()) return Annotate(names.status(), "compaction");
  for (const std::string& n : *names) {
    std::optional<uint32_t> number = SegmentNumber(n);
    if (number && *number <= previous) {
      if (absl::Status s = fs_.DeleteFile(dir_ + "/" + n); !s.ok()) return Annotate(s, "compaction");
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
