#include "soak/disk_full_file_system.h"

#include <fmt/format.h>

namespace restoresim::soak {
namespace {

// A file whose appends and syncs fail while its file system is full.
class SpaceCheckedFile final : public WritableFile {
 public:
  SpaceCheckedFile(DiskFullFileSystem& fs, std::string path, std::unique_ptr<WritableFile> file)
      : fs_(fs), path_(std::move(path)), file_(std::move(file)) {}
  absl::Status Append(std::string_view data) override {
    if (absl::Status s = fs_.CheckSpace("append to", path_); !s.ok()) return s;
    return file_->Append(data);
  }
  absl::Status Sync() override {
    if (absl::Status s = fs_.CheckSpace("sync", path_); !s.ok()) return s;
    return file_->Sync();
  }
  absl::Status Close() override { return file_->Close(); }

 private:
  DiskFullFileSystem& fs_;
  const std::string path_;
  std::unique_ptr<WritableFile> file_;
};

}  // namespace

absl::Status DiskFullFileSystem::CheckSpace(std::string_view what, const std::string& path) {
  if (!full_.load()) return absl::OkStatus();
  refused_.fetch_add(1);
  absl::Status s = absl::ResourceExhaustedError(
      fmt::format("{} {}: No space left on device (soak disk-full fault)", what, path));
  s.SetPayload(std::string(kInjectedFaultPayload), absl::Cord("disk-full"));
  return s;
}

absl::StatusOr<std::unique_ptr<WritableFile>> DiskFullFileSystem::NewWritableFile(
    const std::string& path) {
  if (absl::Status s = CheckSpace("create", path); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<WritableFile>> file = target()->NewWritableFile(path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<WritableFile>(new SpaceCheckedFile(*this, path, std::move(*file)));
}

absl::Status DiskFullFileSystem::CreateDirIfMissing(const std::string& path) {
  if (target()->FileExists(path).ok()) return absl::OkStatus();
  if (absl::Status s = CheckSpace("mkdir", path); !s.ok()) return s;
  return target()->CreateDirIfMissing(path);
}

}  // namespace restoresim::soak
