// LogStore: a key-value store kept in memory and made durable through the file-system port as
// a sequence of append-only segment files ("<dir>/segment-<n>.log"). Under the simulator its
// files live in the crash-model file system, so a crash loses exactly what a RocksDB store
// with its WAL off would lose: everything written after the last Flush.
//
// Layout and recovery:
//   * each write appends a record {u32 length, u32 checksum, u8 type, u32 key length, key,
//     value} to the current segment; Flush syncs it and records in the manifest
//     (log_store_manifest.h, written atomically) how many of its bytes are now durable;
//   * Open replays exactly the flushed bytes of every segment the manifest lists, then names a
//     new segment in the manifest and starts it. Bytes written after the last flush are
//     dropped (counted in tail_bytes_dropped()): a crash loses them, as a RocksDB store with
//     its WAL off would, and so does a reopen after a close without a flush;
//   * every kind of damage to what was flushed is kDataLoss with the reason — a record that
//     does not decode or whose checksum fails below the flushed length (a flipped bit, a zeroed
//     sector, a cut), a segment shorter than its flushed length, a listed segment missing,
//     segment files without a manifest, a damaged manifest. The caller wipes the store and
//     restores it from its changelog. Only names of the form above ("segment-00000007.log")
//     are segments: other files in the directory, look-alikes such as "segment-7.log"
//     included, are left alone;
//   * numbers only grow (one per open or compaction), so a segment numbered in the upper half
//     of the range came from damage or a foreign file: that open writes the live entries as
//     one segment under the lowest free number and lists it alone (Renumber), so every number
//     an open starts leaves one for the next;
//   * a directory with neither manifest nor segments is a new store (created_on_open());
//   * Commit(offset) is a Flush that also records, in the same manifest write, the changelog
//     offset the flushed contents reach (CommittedOffset(), read back at Open);
//   * when the log holds more than twice the live data, or more than segments_compact_at
//     segments, a snapshot segment of the live entries replaces the others (crash-safe: the
//     manifest lists the old segments or the snapshot alone, never a mix).
//
// Thread-safety: not thread-safe; one owner at a time (see key_value_store.h).
#ifndef RESTORESIM_CORE_STATE_LOG_STORE_H_
#define RESTORESIM_CORE_STATE_LOG_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/port/file_system.h"
#include "core/state/key_value_store.h"
#include "core/state/log_store_manifest.h"

namespace restoresim {

struct LogStoreOptions {
  uint64_t compact_min_bytes = 1 << 20;  // never compact a log smaller than this
  uint32_t segments_max = 1024;          // more segments than this on disk is corruption
  uint32_t segments_compact_at = 16;     // an open that finds more compacts them into one
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
  absl::Status Commit(int64_t changelog_offset) override;
  std::optional<int64_t> CommittedOffset() const override { return committed_offset_; }
  absl::Status Close() override;
  absl::StatusOr<std::map<std::string, std::string>> ReadAll() override;
  uint64_t NumEntries() const override { return data_.size(); }
  bool IsOpen() const override { return file_ != nullptr; }

  bool CreatedOnOpen() const override { return created_; }
  uint64_t tail_bytes_dropped() const { return tail_bytes_dropped_; }
  uint64_t log_bytes() const { return log_bytes_; }
  uint32_t current_segment() const { return segment_; }

 private:
  LogStore(FileSystem& fs, std::string dir, std::string name, LogStoreOptions options);
  absl::Status Recover();
  absl::Status ReplaySegment(uint32_t number, uint64_t flushed_bytes, uint64_t salt);
  absl::Status StartSegment(uint32_t number);
  absl::Status Renumber(const std::set<uint32_t>& on_disk);
  absl::Status WriteManifest(std::vector<LogSegmentEntry> next);
  absl::Status WriteManifest(std::vector<LogSegmentEntry> next, std::optional<int64_t> offset);
  absl::Status FlushRecording(std::optional<int64_t> offset);
  std::string ManifestPath() const;
  absl::Status Append(std::string_view key, const std::string_view* value);
  absl::Status WriteRecords(std::string_view records);  // one append, accounted
  void ApplyInMemory(std::string_view key, const std::string_view* value);
  absl::Status Compact();
  absl::Status CheckOpen() const;
  std::string SegmentPath(uint32_t number) const;
  uint64_t SegmentSalt(uint32_t number) const;

  FileSystem& fs_;
  const std::string dir_;
  const std::string name_;
  const LogStoreOptions options_;
  std::map<std::string, std::string, std::less<>> data_;
  std::unique_ptr<WritableFile> file_;  // the current segment; null once closed
  uint32_t segment_ = 0;
  uint64_t segment_bytes_ = 0;  // bytes appended to the current segment
  uint64_t segment_salt_ = 0;   // mixed into its records' checksums (log_record.h)
  std::vector<LogSegmentEntry> manifest_;  // as last written (sealed ones, then the current)
  std::optional<int64_t> committed_offset_;  // as the manifest last written records it
  bool created_ = false;                   // Open found no store: a new one
  uint64_t log_bytes_ = 0;   // bytes in all segments
  uint64_t live_bytes_ = 0;  // bytes a snapshot of data_ would take
  uint64_t tail_bytes_dropped_ = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_LOG_STORE_H_
