// The checkpoint file of a task: the changelog offsets up to which its stores are known to hold
// flushed data. Written atomically through the file-system port (temp file, sync, rename, sync
// directory), so a crash leaves the old or the new checkpoint, never a mix.
//
// Format (text, one item per line, checked on read):
//   restoresim-checkpoint 1
//   <number of entries>
//   <topic> <partition> <offset>        (one line per changelog partition, sorted)
//   checksum <16 hex digits>            (StableHash of every line above)
// A missing file reads as kNotFound; anything malformed as kDataLoss with the reason. Callers
// restore from scratch in both cases (logging the reason) — never crash.
//
// Thread-safety: stateless functions; the file-system port is thread-safe.
#ifndef RESTORESIM_CORE_STATE_CHECKPOINT_FILE_H_
#define RESTORESIM_CORE_STATE_CHECKPOINT_FILE_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "core/port/file_system.h"
#include "core/transport/transport.h"

namespace restoresim {

using CheckpointOffsets = std::map<TopicPartition, int64_t>;

inline constexpr int kCheckpointVersion = 1;
inline constexpr size_t kCheckpointEntriesMax = 1 << 16;
inline constexpr size_t kCheckpointBytesMax = 16 << 20;

std::string EncodeCheckpoint(const CheckpointOffsets& offsets);
absl::StatusOr<CheckpointOffsets> DecodeCheckpoint(std::string_view text);

[[nodiscard]] absl::Status WriteCheckpoint(FileSystem& fs, const std::string& path,
                                           const CheckpointOffsets& offsets);
absl::StatusOr<CheckpointOffsets> ReadCheckpoint(FileSystem& fs, const std::string& path);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_CHECKPOINT_FILE_H_
