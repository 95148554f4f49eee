// The file-system port: everything the runtime does with its state directory (checkpoint
// files, store directories, locks) goes through it. Implementations: POSIX (core/), and an
// in-memory one with a crash model and injectable errors (fakes/).
//
// Errors are absl::Status values: kNotFound for a missing path, kAlreadyExists,
// kFailedPrecondition for misuse (e.g. writing a closed file), kUnavailable/kInternal for I/O
// errors; injected errors carry the payload key kInjectedFaultPayload.
//
// Thread-safety: implementations are thread-safe; a WritableFile is used by one thread.
#ifndef RESTORESIM_CORE_PORT_FILE_SYSTEM_H_
#define RESTORESIM_CORE_PORT_FILE_SYSTEM_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace restoresim {

// Payload key set on statuses produced by fault injection, so an oracle can tell an injected
// error from a real bug.
inline constexpr std::string_view kInjectedFaultPayload = "restoresim.injected";

class WritableFile {
 public:
  virtual ~WritableFile() = default;
  [[nodiscard]] virtual absl::Status Append(std::string_view data) = 0;
  // Makes appended data durable (survives a crash).
  [[nodiscard]] virtual absl::Status Sync() = 0;
  [[nodiscard]] virtual absl::Status Close() = 0;
};

// A held lock on a file (LockFile); released when destroyed.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Creates (or truncates) `path` for writing.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) = 0;
  // kFailedPrecondition for anything but a regular file (a directory, a FIFO, a device),
  // refused without waiting: never blocks on a FIFO.
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path) = 0;
  virtual absl::Status FileExists(const std::string& path) = 0;
  // Atomically replaces `to` with `from` (POSIX rename).
  virtual absl::Status RenameFile(const std::string& from, const std::string& to) = 0;
  virtual absl::Status DeleteFile(const std::string& path) = 0;
  virtual absl::Status CreateDirIfMissing(const std::string& path) = 0;
  // Deletes a directory and everything under it; OK if it does not exist.
  virtual absl::Status DeleteDirRecursively(const std::string& path) = 0;
  // Names (not paths) of the entries of `dir`, sorted.
  virtual absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) = 0;
  // Makes the directory's entries (creations, renames, deletions) durable.
  virtual absl::Status SyncDir(const std::string& dir) = 0;
  // Takes an exclusive lock on `path` (LevelDB's Env::LockFile; Kafka Streams' state-directory
  // lock), held until the returned FileLock is destroyed or its process dies. kAborted when it
  // is held already — by another process, or by another lock of this one (two runtimes in one
  // process cannot share a state directory either). The POSIX file system creates the file
  // (flock); the in-memory one keeps its locks beside the namespace (fakes/mem_file_system.h).
  virtual absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) = 0;
};

// Writes `contents` to `path` so that after a crash `path` holds either its old contents or
// the new ones, never a mix: write to "<path>.tmp", sync, close, rename over `path`, sync the
// directory.
[[nodiscard]] absl::Status WriteFileAtomically(FileSystem& fs, const std::string& path,
                                               std::string_view contents);

// Marks `status` as injected by a fault injector.
absl::Status TagInjected(absl::Status status);
bool IsInjected(const absl::Status& status);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_PORT_FILE_SYSTEM_H_
