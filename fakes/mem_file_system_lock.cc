// MemFileSystem's file locks (LockFile): a table beside the namespace, keyed by path. A lock
// taken in one crash epoch is void once Crash() starts the next (its process died), so a
// successor process takes it again; the dead holder's release then leaves the new one alone.
#include <fmt/format.h>

#include "core/util/check.h"
#include "core/util/sim_hooks.h"
#include "fakes/mem_file_system.h"

namespace restoresim::fakes {

class MemFileSystem::Lock final : public FileLock {
 public:
  Lock(MemFileSystem* fs, std::string path, uint64_t token)
      : fs_(fs), path_(std::move(path)), token_(token) {
    RS_CHECK(fs_ != nullptr && token_ != 0);
  }
  ~Lock() override {
    SimNoAbortScope no_abort;  // a destructor that locks: see core/util/sim_hooks.h
    fs_->UnlockFile(path_, token_);
  }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  MemFileSystem* const fs_;
  const std::string path_;
  const uint64_t token_;
};

absl::StatusOr<std::unique_ptr<FileLock>> MemFileSystem::LockFile(const std::string& path) {
  return LockFileAs(kAnyProcess, path);
}

absl::StatusOr<std::unique_ptr<FileLock>> MemFileSystem::LockFileAs(uint64_t process,
                                                                    const std::string& path) {
  MutexLock lock(mu_);
  if (process != kAnyProcess && process != crash_epoch_) {
    return absl::FailedPreconditionError(
        fmt::format("lock {}: process view from before a crash", path));
  }
  if (path.empty()) return absl::InvalidArgumentError("lock: empty path");
  auto it = locks_.find(path);
  if (it != locks_.end() && it->second.epoch == crash_epoch_) {
    return absl::AbortedError(fmt::format("lock {}: held by another process or runtime", path));
  }
  const uint64_t token = next_lock_token_++;
  locks_[path] = HeldLock{.token = token, .epoch = crash_epoch_};
  RS_CHECK(locks_.at(path).token == token);
  return std::unique_ptr<FileLock>(std::make_unique<Lock>(this, path, token));
}

void MemFileSystem::UnlockFile(const std::string& path, uint64_t token) {
  MutexLock lock(mu_);
  auto it = locks_.find(path);
  // Taken over after a crash: the new holder's lock stays.
  if (it == locks_.end() || it->second.token != token) return;
  locks_.erase(it);
}

}  // namespace restoresim::fakes
