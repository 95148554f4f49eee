// The production file system: POSIX calls on file descriptors (open/write/fsync/rename/...),
// retrying EINTR and short writes, with errno translated into absl::Status in one place:
// ENOENT -> kNotFound, EEXIST -> kAlreadyExists, EACCES/EPERM -> kPermissionDenied,
// ENOSPC -> kResourceExhausted, anything else -> kInternal; messages name the operation, the
// path and strerror. Misuse (writing a closed file, reading a directory, deleting a tree
// deeper than kDirDepthMax) is kFailedPrecondition.
//
// Thread-safety: PosixFileSystem is stateless and thread-safe. A WritableFile it returns is
// used by one thread at a time; destroying it without Close() closes it, ignoring errors.
#ifndef RESTORESIM_CORE_PORT_POSIX_FILE_SYSTEM_H_
#define RESTORESIM_CORE_PORT_POSIX_FILE_SYSTEM_H_

#include <memory>
#include <string>
#include <vector>

#include "core/port/file_system.h"

namespace restoresim {

class PosixFileSystem final : public FileSystem {
 public:
  // Nesting limit of DeleteDirRecursively: bounds its recursion and open descriptors.
  static constexpr int kDirDepthMax = 64;

  // The process-wide instance.
  static PosixFileSystem* Default();

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  // Fails (kFailedPrecondition) for anything but a regular file, e.g. a directory.
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  absl::Status FileExists(const std::string& path) override;
  absl::Status RenameFile(const std::string& from, const std::string& to) override;
  absl::Status DeleteFile(const std::string& path) override;
  // Creates missing parents too (mkdir -p). kAlreadyExists if a component is not a directory.
  absl::Status CreateDirIfMissing(const std::string& path) override;
  // Never follows symlinks: a symlink inside the tree is unlinked, not descended into, and a
  // `path` that is not a directory (a symlink included) is kFailedPrecondition.
  absl::Status DeleteDirRecursively(const std::string& path) override;
  // Sorted by byte value, without "." and "..".
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override;
  absl::Status SyncDir(const std::string& dir) override;
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) override;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_PORT_POSIX_FILE_SYSTEM_H_
