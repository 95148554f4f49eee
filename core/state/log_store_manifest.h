// The manifest of a LogStore: which segments make up the store, and how many bytes of each
// were made durable by a Flush. It is what lets recovery tell damage from a crash:
//   * bytes of a segment below its flushed length were synced before Flush returned, so any
//     damage there (a flipped bit, a zeroed sector, a record cut short) is data loss;
//   * bytes past it were never promised durable: a damaged tail there is a write cut short
//     by a crash, and is cut off;
//   * a listed segment with flushed bytes that is missing is data loss;
//   * segment files with no manifest at all are data loss (the manifest is written before the
//     first segment file exists, so only damage removes it).
// Written atomically (WriteFileAtomically: a temporary file, sync, rename, directory sync), so
// a crash leaves the old manifest or the new one, never a mix.
//
// It also records how far the store's flushed contents reach in its changelog (the next offset
// to restore, as KIP-1035's offsets column family in Kafka 4.3's RocksDB stores): written in
// the same atomic manifest write as the flushed lengths, so the offset never names records the
// flushed bytes do not hold, and a manifest older than the store's checkpoint (a lost
// directory update, a stale copy of the directory) tells by its offset.
//
// Format (text, one entry per line, the last line a checksum of the lines before it):
//   restoresim-logstore-manifest 3
//   changelog-offset <offset>|none
//   segment <number> <flushed bytes> sealed|open <salt: 16 hex digits>
//   checksum <16 hex digits>
// Segment numbers increase strictly; only the last segment may be open (the one written to).
// The salt, fixed when the segment is started, goes into every record's checksum (log_record.h),
// so that records another store wrote cannot pass for this store's. Version 1 manifests (no
// salt: salt 0, unsalted records) and version 2 manifests (no changelog offset: none) are still
// read; Encode writes version 3.
#ifndef RESTORESIM_CORE_STATE_LOG_STORE_MANIFEST_H_
#define RESTORESIM_CORE_STATE_LOG_STORE_MANIFEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace restoresim {

inline constexpr std::string_view kLogStoreManifestName = "MANIFEST";
inline constexpr size_t kLogStoreManifestBytesMax = 1 << 20;  // a larger manifest is damage

struct LogSegmentEntry {
  uint32_t number = 0;
  uint64_t flushed_bytes = 0;  // bytes of the segment that a Flush made durable
  bool sealed = false;         // no longer written to (an older segment)
  uint64_t salt = 0;           // mixed into its records' checksums (0: none, version 1)

  bool operator==(const LogSegmentEntry&) const = default;
};

struct LogStoreManifest {
  std::vector<LogSegmentEntry> segments;
  // The changelog offset the flushed contents reach (the next one to restore; 0 for a new
  // store); none when unknown (a store written before stores recorded offsets, not committed
  // since).
  std::optional<int64_t> changelog_offset;

  bool operator==(const LogStoreManifest&) const = default;
};

std::string EncodeLogStoreManifest(const LogStoreManifest& manifest);

// DataLoss, with the reason, for anything that is not a manifest Encode wrote: bad header,
// checksum, numbers, order, an open segment before the last, too many segments, a negative
// offset.
absl::StatusOr<LogStoreManifest> DecodeLogStoreManifest(std::string_view text,
                                                        uint32_t segments_max);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_LOG_STORE_MANIFEST_H_
