#include "core/port/posix_file_system.h"

#include "core/util/check.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

namespace restoresim {
namespace {

// Appends up to this many bytes are gathered before a write(2); larger ones go straight out.
constexpr size_t kWriteBufferBytes = 64 * 1024;
// ReadFile's first read size when the file's size is unknown (0 from fstat, e.g. procfs).
constexpr size_t kReadChunkBytes = 64 * 1024;

// strerror_r comes in two flavours (XSI returns int, GNU returns the message); overloads pick
// whichever the C library declares. strerror(3) itself is not thread-safe.
[[maybe_unused]] const char* StrErrorResult(int rc, const char* buffer) {
  return rc == 0 ? buffer : "unknown error";
}
[[maybe_unused]] const char* StrErrorResult(const char* message, const char* /*buffer*/) {
  return message;
}

// The one place errno becomes a Status.
absl::Status PosixError(std::string_view op, std::string_view path, int error_number) {
  char buffer[128] = {};
  const char* reason = StrErrorResult(strerror_r(error_number, buffer, sizeof(buffer)), buffer);
  std::string message = fmt::format("{} {}: {}", op, path, reason);
  switch (error_number) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case ENOSPC:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

// Calls `syscall` until it fails with something other than EINTR.
template <typename Syscall>
auto RetryOnEintr(Syscall syscall) {
  decltype(syscall()) result;
  do {
    result = syscall();
  } while (result == -1 && errno == EINTR);
  return result;
}

// Closes `fd`, returning errno or 0. EINTR counts as success: Linux has released the
// descriptor by then, so retrying could close a descriptor another thread just opened.
int CloseFd(int fd) { return (::close(fd) == 0 || errno == EINTR) ? 0 : errno; }

// Owns a file descriptor (closing it on scope exit, ignoring errors).
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) CloseFd(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }

 private:
  const int fd_;
};

struct DirCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }
};
using ScopedDir = std::unique_ptr<DIR, DirCloser>;

// Writes all of `data`, resuming after short writes and EINTR.
absl::Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t written = RetryOnEintr([&] { return ::write(fd, data.data(), data.size()); });
    if (written < 0) return PosixError("write", path, errno);
    if (written == 0) return absl::InternalError(fmt::format("write {}: wrote nothing", path));
    data.remove_prefix(static_cast<size_t>(written));
  }
  return absl::OkStatus();
}

// A WritableFile on an O_WRONLY descriptor with a small write buffer.
class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) Close().IgnoreError();
  }

  absl::Status Append(std::string_view data) override {
    if (fd_ < 0) return ClosedError("append");
    if (data.size() <= kWriteBufferBytes - buffer_.size()) {
      buffer_.append(data);
      return absl::OkStatus();
    }
    if (absl::Status status = Flush(); !status.ok()) return status;
    if (data.size() <= kWriteBufferBytes) {
      buffer_.assign(data);
      return absl::OkStatus();
    }
    return WriteAll(fd_, data, path_);
  }

  absl::Status Sync() override {
    if (fd_ < 0) return ClosedError("sync");
    if (absl::Status status = Flush(); !status.ok()) return status;
    if (RetryOnEintr([&] { return ::fsync(fd_); }) != 0) return PosixError("fsync", path_, errno);
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (fd_ < 0) return ClosedError("close");
    absl::Status status = Flush();
    const int close_error = CloseFd(fd_);
    fd_ = -1;
    if (status.ok() && close_error != 0) status = PosixError("close", path_, close_error);
    return status;
  }

 private:
  // Writes out the buffer. The buffer is emptied even on failure (as LevelDB does): the file's
  // tail is unknown after a failed write, and re-sending the bytes would not make it known.
  absl::Status Flush() {
    absl::Status status = WriteAll(fd_, buffer_, path_);
    buffer_.clear();
    return status;
  }

  absl::Status ClosedError(std::string_view op) const {
    return absl::FailedPreconditionError(fmt::format("{} {}: file is closed", op, path_));
  }

  const std::string path_;
  int fd_;  // -1 once closed
  std::string buffer_;
};

// The entries of `dir` (opened from `path`), without "." and "..", sorted.
absl::StatusOr<std::vector<std::string>> ReadNames(DIR* dir, const std::string& path) {
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) return PosixError("readdir", path, errno);
      break;
    }
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Creates the single directory `path` unless a directory (or a symlink to one) is there.
absl::Status MakeDir(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    return S_ISDIR(st.st_mode) ? absl::OkStatus() : PosixError("mkdir", path, EEXIST);
  }
  if (errno != ENOENT) return PosixError("stat", path, errno);
  if (::mkdir(path.c_str(), 0755) == 0) return absl::OkStatus();
  const int mkdir_error = errno;
  // Lost a race with another creator: fine if what it created is a directory.
  if (mkdir_error == EEXIST && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::OkStatus();
  }
  return PosixError("mkdir", path, mkdir_error);
}

// Deletes directory `name` (relative to `parent_fd`) and its contents. Works on descriptors
// (openat with O_NOFOLLOW, fstatat without following, unlinkat) so that a symlink swapped in
// mid-walk is never followed out of the tree. `path` names the directory in messages.
absl::Status DeleteTree(int parent_fd, const std::string& name, const std::string& path,
                        int depth) {
  if (depth >= PosixFileSystem::kDirDepthMax) {
    return absl::FailedPreconditionError(
        fmt::format("delete dir {}: nested deeper than {}", path, PosixFileSystem::kDirDepthMax));
  }
  const int fd = RetryOnEintr([&] {
    return ::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  });
  if (fd < 0) return PosixError("open", path, errno);
  ScopedDir dir(::fdopendir(fd));
  if (dir == nullptr) {
    const int error = errno;
    CloseFd(fd);
    return PosixError("opendir", path, error);
  }
  absl::StatusOr<std::vector<std::string>> names = ReadNames(dir.get(), path);
  if (!names.ok()) return names.status();
  const int dir_fd = ::dirfd(dir.get());
  for (const std::string& child : *names) {
    const std::string child_path = path + "/" + child;
    struct stat st;
    if (::fstatat(dir_fd, child.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // already gone
      return PosixError("stat", child_path, errno);
    }
    if (S_ISDIR(st.st_mode)) {
      if (absl::Status s = DeleteTree(dir_fd, child, child_path, depth + 1); !s.ok()) return s;
    } else if (::unlinkat(dir_fd, child.c_str(), 0) != 0 && errno != ENOENT) {
      return PosixError("unlink", child_path, errno);
    }
  }
  dir.reset();
  if (::unlinkat(parent_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return PosixError("rmdir", path, errno);
  }
  return absl::OkStatus();
}

}  // namespace

PosixFileSystem* PosixFileSystem::Default() {
  static PosixFileSystem* fs = new PosixFileSystem();
  return fs;
}

absl::StatusOr<std::unique_ptr<WritableFile>> PosixFileSystem::NewWritableFile(
    const std::string& path) {
  const int fd = RetryOnEintr(
      [&] { return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); });
  if (fd < 0) return PosixError("open", path, errno);
  return std::make_unique<PosixWritableFile>(path, fd);
}

absl::StatusOr<std::string> PosixFileSystem::ReadFile(const std::string& path) {
  // O_NONBLOCK: an open of a FIFO for reading would wait for a writer for ever (a FIFO in
  // place of a checkpoint or manifest hung the task); the check below refuses it at once.
  // For a regular file the flag changes nothing.
  ScopedFd fd(
      RetryOnEintr([&] { return ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC); }));
  if (fd.get() < 0) return PosixError("open", path, errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return PosixError("stat", path, errno);
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(fmt::format("read {}: not a regular file", path));
  }
  // One spare byte so a file read whole is confirmed by a 0-byte read without regrowing.
  std::string contents(st.st_size > 0 ? static_cast<size_t>(st.st_size) + 1 : kReadChunkBytes,
                       '\0');
  size_t size = 0;
  for (;;) {
    if (size == contents.size()) contents.resize(contents.size() * 2);
    const ssize_t n = RetryOnEintr(
        [&] { return ::read(fd.get(), contents.data() + size, contents.size() - size); });
    if (n < 0) return PosixError("read", path, errno);
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }
  contents.resize(size);
  return contents;
}

absl::Status PosixFileSystem::FileExists(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return PosixError("stat", path, errno);
  return absl::OkStatus();
}

absl::Status PosixFileSystem::RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return PosixError("rename", fmt::format("{} -> {}", from, to), errno);
  }
  return absl::OkStatus();
}

absl::Status PosixFileSystem::DeleteFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return PosixError("unlink", path, errno);
  return absl::OkStatus();
}

absl::Status PosixFileSystem::CreateDirIfMissing(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("create dir: empty path");
  // Each prefix ending just before a '/' (and the whole path) is one level, parents first.
  for (size_t end = 1; end <= path.size(); ++end) {
    if (end < path.size() && path[end] != '/') continue;
    if (path[end - 1] == '/') continue;  // "//" or a trailing '/': no new level
    if (absl::Status status = MakeDir(path.substr(0, end)); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status PosixFileSystem::DeleteDirRecursively(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? absl::OkStatus() : PosixError("stat", path, errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(fmt::format("delete dir {}: not a directory", path));
  }
  return DeleteTree(AT_FDCWD, path, path, /*depth=*/0);
}

absl::StatusOr<std::vector<std::string>> PosixFileSystem::ListDir(const std::string& dir) {
  ScopedDir stream(::opendir(dir.c_str()));
  if (stream == nullptr) return PosixError("opendir", dir, errno);
  return ReadNames(stream.get(), dir);
}

absl::Status PosixFileSystem::SyncDir(const std::string& dir) {
  ScopedFd fd(
      RetryOnEintr([&] { return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }));
  if (fd.get() < 0) return PosixError("open", dir, errno);
  if (RetryOnEintr([&] { return ::fsync(fd.get()); }) != 0) {
    return PosixError("fsync", dir, errno);
  }
  return absl::OkStatus();
}

namespace {

// flock(2) locks belong to the open file description: a second open of the same file, in this
// process or another, conflicts, so two runtimes of one process are refused too (fcntl's
// per-process locks would not see that).
class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) { RS_CHECK(fd_ >= 0); }
  ~PosixFileLock() override {
    (void)::flock(fd_, LOCK_UN);
    CloseFd(fd_);
  }
  PosixFileLock(const PosixFileLock&) = delete;
  PosixFileLock& operator=(const PosixFileLock&) = delete;

 private:
  const int fd_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<FileLock>> PosixFileSystem::LockFile(const std::string& path) {
  const int fd = RetryOnEintr(
      [&] { return ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644); });
  if (fd < 0) return PosixError("open", path, errno);
  if (RetryOnEintr([&] { return ::flock(fd, LOCK_EX | LOCK_NB); }) != 0) {
    const int error_number = errno;
    CloseFd(fd);
    if (error_number == EWOULDBLOCK) {
      return absl::AbortedError(fmt::format("lock {}: held by another process or runtime", path));
    }
    return PosixError("flock", path, error_number);
  }
  return std::unique_ptr<FileLock>(std::make_unique<PosixFileLock>(fd));
}

}  // namespace restoresim
