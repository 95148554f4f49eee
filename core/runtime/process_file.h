// The process id an instance keeps in its state directory. Kafka counterpart: StateDirectory's
// initializeProcessId and its "kafka-streams-process-metadata" file, a JSON object
// {"processId": "<UUID>"} in <state.dir>/<application.id>, read at start-up and written with a
// fresh random UUID when it is missing. The process id names the instance to the assignor and to
// a streams group's coordinator (standbys are never placed on the process of their active) and is
// part of its transactional ids, so two hosts that use the same state.dir path are two processes,
// and a restart over the same state directory is the same process (it fences its predecessor).
//
// As Kafka: a file that cannot be parsed, or whose processId is missing, is replaced by a fresh
// one (with a warning on stderr); the id changing loses no data (stores and checkpoints are
// per task). Unlike Kafka, the file is written atomically (WriteFileAtomically), so a crash
// mid-write leaves the old file or the new one. A file that cannot be read or written at all
// (permissions, a directory in its place) is an error for the caller, which fails Start.
//
// Thread-safety: stateless functions over a FileSystem (itself thread-safe).
#ifndef RESTORESIM_CORE_RUNTIME_PROCESS_FILE_H_
#define RESTORESIM_CORE_RUNTIME_PROCESS_FILE_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/port/file_system.h"

namespace restoresim {

inline constexpr std::string_view kProcessFileName = "kafka-streams-process-metadata";

// The process id in `contents` (Kafka's JSON), or nothing when it is not such a file.
std::optional<std::string> ParseProcessFile(std::string_view contents);
// Kafka's JSON for `process_id`.
std::string FormatProcessFile(const std::string& process_id);
// A random UUID (version 4) from the OS: never the simulator's (it has no process files).
std::string NewProcessUuid();

// The id kept in `app_dir`/kProcessFileName, written first with `fresh()` if there is none (or
// none that parses).
absl::StatusOr<std::string> LoadOrCreateProcessId(FileSystem& fs, const std::string& app_dir,
                                                  const std::function<std::string()>& fresh);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_PROCESS_FILE_H_
