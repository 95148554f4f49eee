// LogStore: a key-value store kept in memory and made durable through the file-system port as
// a sequence of append-only segment files ("<dir>/segment-<n>.log"). Under the simulator its
// files live in the crash-model file system, so a crash loses exactly what a RocksDB store
// with its WAL off would lose: everything written after the last Flush.
//
// Layout and recovery:
//   * each write appends a record {u32 length, u32 checksum, u8 type, u32 key length, key,
//     value}; Flush syncs the current segment (and, the first time, its directory entry);
//   * Open replays all segments in order, then starts a new segment. A damaged tail of the
//     LAST segment (a write cut short by a crash) is cut off and counted in tail_bytes_dropped();
//     damage anywhere else is kDataLoss: the caller wipes the store and restores from scratch;
//   * when the log holds more than twice the live data, Flush writes a snapshot segment of the
//     live entries and deletes the older segments (crash-safe: the snapshot only repeats puts).
//
// Thread-safety: not thread-safe; one owner at a time (see key_value_store.h).
#ifndef RESTORESIM_CORE_STATE_LOG_STORE_H_
#define RESTORESIM_CORE_STATE_LOG_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/port/file_system.h"
#include "core/state/key_value_store.h"

namespace restoresim {

struct LogStoreOptions {
  uint64_t compact_min_bytes = 1 << 20;  // never compact a log smaller than this
  uint32_t segments_max = 1024;          // more segments than this on disk is corruption
};

class LogStore final : public KeyValueStore {
 public:
  static absl::StatusOr<std::unique_ptr<LogStore>> Open(FileSystem& fs, std::string dir,
                                                        std::string name,
                                                        LogStoreOptions options = {});
  ~LogStore() override;

  const std::string& name() const override { return name_; }
  absl::Status Put(std::string_view key, std::string_view value) override;
  absl::Status Delete(std::string_view key) override;
  absl::StatusOr<std::optional<std::string>> Get(std::string_view key) override;
  absl::Status ApplyBatch(const std::vector<KeyValueWrite>& writes) override;
  absl::Status Flush() override;
  absl::Status Close() override;
  absl::StatusOr<std::map<std::string, std::string>> ReadAll() override;
  uint64_t NumEntries() const override { return data_.size(); }
  bool IsOpen() const override { return file_ != nullptr; }

  uint64_t tail_bytes_dropped() const { return tail_bytes_dropped_; }
  uint64_t log_bytes() const { return log_bytes_; }
  uint32_t current_segment() const { return segment_; }

 private:
  LogStore(FileSystem& fs, std::string dir, std::string name, LogStoreOptions options);
  absl::Status Recover();
  absl::Status ReplaySegment(const std::string& path, bool last);
  absl::Status StartSegment(uint32_t number);
  absl::Status Append(std::string_view key, const std::string_view* value);
  absl::Status Compact();
  absl::Status CheckOpen() const;
  std::string SegmentPath(uint32_t number) const;

  FileSystem& fs_;
  const std::string dir_;
  const std::string name_;
  const LogStoreOptions options_;
  std::map<std::string, std::string, std::less<>> data_;
  std::unique_ptr<WritableFile> file_;  // the current segment; null once closed
  uint32_t segment_ = 0;
  bool segment_entry_synced_ = false;  // the current segment's directory entry is durable
  uint64_t log_bytes_ = 0;   // bytes in all segments
  uint64_t live_bytes_ = 0;  // bytes a snapshot of data_ would take
  uint64_t tail_bytes_dropped_ = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_LOG_STORE_H_
