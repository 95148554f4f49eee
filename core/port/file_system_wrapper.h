// A FileSystem that forwards every call to another one (LevelDB's EnvWrapper): subclass it and
// override only the methods a test or a decorator needs to change.
//
//   class FailingDeletes : public FileSystemWrapper {
//    public:
//     using FileSystemWrapper::FileSystemWrapper;
//     absl::Status DeleteFile(const std::string&) override { return absl::InternalError("x"); }
//   };
//
// Thread-safety: as thread-safe as the target. The target must outlive the wrapper.
#ifndef RESTORESIM_CORE_PORT_FILE_SYSTEM_WRAPPER_H_
#define RESTORESIM_CORE_PORT_FILE_SYSTEM_WRAPPER_H_

#include <memory>
#include <string>
#include <vector>

#include "core/port/file_system.h"
#include "core/util/check.h"

namespace restoresim {

class FileSystemWrapper : public FileSystem {
 public:
  // REQUIRES: target != nullptr.
  explicit FileSystemWrapper(FileSystem* target) : target_(target) {
    RS_CHECK(target_ != nullptr, "FileSystemWrapper needs a target");
  }

  // The file system every call is forwarded to.
  FileSystem* target() const { return target_; }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    return target_->NewWritableFile(path);
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    return target_->ReadFile(path);
  }
  absl::Status FileExists(const std::string& path) override { return target_->FileExists(path); }
  absl::Status RenameFile(const std::string& from, const std::string& to) override {
    return target_->RenameFile(from, to);
  }
  absl::Status DeleteFile(const std::string& path) override { return target_->DeleteFile(path); }
  absl::Status CreateDirIfMissing(const std::string& path) override {
    return target_->CreateDirIfMissing(path);
  }
  absl::Status DeleteDirRecursively(const std::string& path) override {
    return target_->DeleteDirRecursively(path);
  }
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override {
    return target_->ListDir(dir);
  }
  absl::Status SyncDir(const std::string& dir) override { return target_->SyncDir(dir); }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    return target_->LockFile(path);
  }

 private:
  FileSystem* const target_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_PORT_FILE_SYSTEM_WRAPPER_H_
