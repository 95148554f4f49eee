#include "tools/restoresim/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/port/file_system.h"
#include "core/port/posix_file_system.h"

namespace restoresim::tools {
namespace {

int data_fd = -1;  // the original standard output, once ReserveStdoutForData ran

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The file a write to `path` lands in: symbolic links followed (also a dangling one, whose
// target is then created). An existing path resolves through realpath; a path to something
// that is not a regular file (a terminal behind /dev/stdout, a pipe behind /proc/self/fd/1)
// stays as given, since it is opened as it is.
absl::StatusOr<std::string> Resolve(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return path;
    char real[PATH_MAX];
    if (::realpath(path.c_str(), real) == nullptr) {
      return absl::InvalidArgumentError(fmt::format("output {}: {}", path, std::strerror(errno)));
    }
    return std::string(real);
  }
  std::string current = path;
  for (int hops = 0; hops < 40; ++hops) {
    if (::lstat(current.c_str(), &st) != 0) {
      if (errno == ENOENT) return current;  // a new file
      return absl::InvalidArgumentError(
          fmt::format("output {}: {}", path, std::strerror(errno)));
    }
    if (!S_ISLNK(st.st_mode)) return current;
    char target[PATH_MAX];
    const ssize_t n = ::readlink(current.c_str(), target, sizeof(target) - 1);
    if (n < 0) {
      return absl::InvalidArgumentError(
          fmt::format("output {}: {}", path, std::strerror(errno)));
    }
    target[n] = '\0';
    current = target[0] == '/' ? std::string(target) : Parent(current) + "/" + target;
  }
  return absl::InvalidArgumentError(fmt::format("output {}: too many symbolic links", path));
}

absl::Status WriteAll(int fd, std::string_view contents, const std::string& path) {
  while (!contents.empty()) {
    const ssize_t n = ::write(fd, contents.data(), contents.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    }
    contents.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// Where a write to `path` goes (not "-"), or why it must not: the file to write and whether it
// is written in place (not a regular file) rather than atomically.
struct OutputTarget {
  std::string path;
  bool in_place = false;
};

absl::StatusOr<OutputTarget> ResolveOutput(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("an output path is empty");
  absl::StatusOr<std::string> target = Resolve(path);
  if (!target.ok()) return target.status();
  struct stat st;
  if (::stat(target->c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(fmt::format("output {} is a directory", path));
    }
    // The mode bits too: root may write anything, but a file nobody may write is read-only
    // on purpose and is not silently replaced.
    if (::access(target->c_str(), W_OK) != 0 || (st.st_mode & 0222) == 0) {
      return absl::FailedPreconditionError(
          fmt::format("output {} is not writable (read-only?)", path));
    }
    if (!S_ISREG(st.st_mode)) return OutputTarget{*target, /*in_place=*/true};
  }
  const std::string dir = Parent(*target);
  struct stat dst;
  if (::stat(dir.c_str(), &dst) != 0 || !S_ISDIR(dst.st_mode)) {
    return absl::InvalidArgumentError(
        fmt::format("output {}: directory {} does not exist", path, dir));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    return absl::FailedPreconditionError(
        fmt::format("output {}: directory {} is not writable", path, dir));
  }
  return OutputTarget{*target, /*in_place=*/false};
}

}  // namespace

absl::Status CheckOutputPath(const std::string& path) {
  if (path == "-") return absl::OkStatus();
  return ResolveOutput(path).status();
}

absl::Status CheckInputFile(const std::string& path, uint64_t bytes_max) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(fmt::format("{}: {}", path, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(fmt::format(
        "{} is not a regular file ({})", path,
        S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a special file"));
  }
  if (static_cast<uint64_t>(st.st_size) > bytes_max) {
    return absl::InvalidArgumentError(
        fmt::format("{} is {} bytes (at most {})", path, st.st_size, bytes_max));
  }
  return absl::OkStatus();
}

absl::Status WriteOutput(const std::string& path, std::string_view contents) {
  if (path == "-") {
    std::fflush(stdout);
    return WriteAll(data_fd >= 0 ? data_fd : STDOUT_FILENO, contents, "standard output");
  }
  absl::StatusOr<OutputTarget> target = ResolveOutput(path);
  if (!target.ok()) return target.status();
  if (target->in_place) {
    const int fd = ::open(target->path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      return absl::UnavailableError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    }
    // Blocking writes from here on (O_NONBLOCK only kept a FIFO without reader from hanging
    // the open; such an open fails with ENXIO instead).
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    absl::Status s = WriteAll(fd, contents, path);
    ::close(fd);
    return s;
  }
  return WriteFileAtomically(*PosixFileSystem::Default(), target->path, contents);
}

void ReserveStdoutForData() {
  if (data_fd >= 0) return;
  std::fflush(stdout);
  data_fd = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

}  // namespace restoresim::tools
