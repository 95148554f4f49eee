// DiskFullFileSystem: the soak's disk-full fault at the file-system port. While full, every
// write the runtime makes through the port (a new file, an append, a sync, a new directory)
// fails with kResourceExhausted "No space left on device", as ENOSPC; reads, renames and
// deletes go on (deleting frees space). RocksDB writes through its own Env, not the port, so
// its files are not affected: the fault reaches checkpoints, the state-directory lock and
// task directories (docs/SOAK.md says so).
//
// Thread-safety: thread-safe (the switch is an atomic; the target is thread-safe).
#ifndef RESTORESIM_SOAK_DISK_FULL_FILE_SYSTEM_H_
#define RESTORESIM_SOAK_DISK_FULL_FILE_SYSTEM_H_

#include <atomic>
#include <memory>
#include <string>

#include "core/port/file_system_wrapper.h"

namespace restoresim::soak {

class DiskFullFileSystem final : public FileSystemWrapper {
 public:
  using FileSystemWrapper::FileSystemWrapper;

  void SetFull(bool full) { full_.store(full); }
  bool full() const { return full_.load(); }
  int64_t refused() const { return refused_.load(); }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  absl::Status CreateDirIfMissing(const std::string& path) override;

  // kResourceExhausted when full (and counts it), else OK.
  absl::Status CheckSpace(std::string_view what, const std::string& path);

 private:
  std::atomic<bool> full_{false};
  std::atomic<int64_t> refused_{0};
};

}  // namespace restoresim::soak

#endif  // RESTORESIM_SOAK_DISK_FULL_FILE_SYSTEM_H_
