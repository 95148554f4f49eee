// Tests for PosixFileSystem, WriteFileAtomically, the injected-fault tag and FileSystemWrapper.
// Each test gets a fresh mkdtemp directory, removed afterwards with std::filesystem (not with
// the code under test, so a broken DeleteDirRecursively cannot leak or mask anything).
#include "core/port/posix_file_system.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "core/port/file_system.h"
#include "core/port/file_system_wrapper.h"

namespace restoresim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class PosixFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/restoresim_fs_test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr) << std::strerror(errno);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code error;
    std::filesystem::remove_all(dir_, error);
    EXPECT_FALSE(error) << error.message();
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  void WriteString(const std::string& path, const std::string& contents) {
    absl::StatusOr<std::unique_ptr<WritableFile>> file = fs_.NewWritableFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Append(contents).ok());
    ASSERT_TRUE((*file)->Close().ok());
  }

  std::string ReadString(const std::string& path) {
    absl::StatusOr<std::string> contents = fs_.ReadFile(path);
    EXPECT_TRUE(contents.ok()) << contents.status();
    return contents.ok() ? *contents : "";
  }

  PosixFileSystem& fs_ = *PosixFileSystem::Default();
  std::string dir_;
};

TEST_F(PosixFileSystemTest, WriteReadRoundTrip) {
  // Appends below, at and above the 64 KiB write buffer, so every branch of Append runs.
  std::string expected;
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs_.NewWritableFile(Path("data"));
  ASSERT_TRUE(file.ok()) << file.status();
  for (size_t size : {0, 1, 100, 64 * 1024, 64 * 1024 - 7, 200 * 1024, 3}) {
    std::string chunk(size, '\0');
    for (size_t i = 0; i < size; ++i) {
      chunk[i] = static_cast<char>('a' + (expected.size() + i) % 26);  // offset-dependent bytes
    }
    expected += chunk;
    ASSERT_TRUE((*file)->Append(chunk).ok());
  }
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ(ReadString(Path("data")), expected);

  WriteString(Path("empty"), "");
  EXPECT_EQ(ReadString(Path("empty")), "");
  EXPECT_TRUE(fs_.FileExists(Path("empty")).ok());
}

TEST_F(PosixFileSystemTest, NewWritableFileTruncates) {
  WriteString(Path("f"), "a long first version");
  WriteString(Path("f"), "short");
  EXPECT_EQ(ReadString(Path("f")), "short");
}

TEST_F(PosixFileSystemTest, DestroyingAnUnclosedFileFlushesIt) {
  {
    absl::StatusOr<std::unique_ptr<WritableFile>> file = fs_.NewWritableFile(Path("f"));
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Append("buffered").ok());
  }
  EXPECT_EQ(ReadString(Path("f")), "buffered");
}

TEST_F(PosixFileSystemTest, WriteFileAtomicallyReplacesAndLeavesNoTempFile) {
  ASSERT_TRUE(WriteFileAtomically(fs_, Path("state"), "old").ok());
  EXPECT_EQ(ReadString(Path("state")), "old");
  ASSERT_TRUE(WriteFileAtomically(fs_, Path("state"), "new contents").ok());
  EXPECT_EQ(ReadString(Path("state")), "new contents");
  absl::StatusOr<std::vector<std::string>> names = fs_.ListDir(dir_);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(*names, ElementsAre("state"));
}

TEST_F(PosixFileSystemTest, WriteFileAtomicallyIntoMissingDirIsAnnotatedNotFound) {
  const std::string path = Path("missing/state");
  absl::Status status = WriteFileAtomically(fs_, path, "x");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("write atomically " + path));
  EXPECT_FALSE(IsInjected(status));
}

// A WritableFile whose Sync fails with an injected error; everything else is forwarded.
class SyncFailingFile final : public WritableFile {
 public:
  explicit SyncFailingFile(std::unique_ptr<WritableFile> target) : target_(std::move(target)) {}
  absl::Status Append(std::string_view data) override { return target_->Append(data); }
  absl::Status Sync() override {
    return TagInjected(absl::UnavailableError("injected: sync failed"));
  }
  absl::Status Close() override { return target_->Close(); }

 private:
  std::unique_ptr<WritableFile> target_;
};

// Overrides one method of the wrapped file system, as the wrapper is meant to be used.
class SyncFailingFileSystem final : public FileSystemWrapper {
 public:
  using FileSystemWrapper::FileSystemWrapper;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    absl::StatusOr<std::unique_ptr<WritableFile>> file = target()->NewWritableFile(path);
    if (!file.ok()) return file.status();
    return std::make_unique<SyncFailingFile>(*std::move(file));
  }
};

TEST_F(PosixFileSystemTest, WriteFileAtomicallyPropagatesInjectedSyncError) {
  ASSERT_TRUE(WriteFileAtomically(fs_, Path("state"), "original").ok());
  SyncFailingFileSystem failing(&fs_);

  absl::Status status = WriteFileAtomically(failing, Path("state"), "replacement");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_TRUE(IsInjected(status)) << "the tag must survive annotation";
  EXPECT_THAT(std::string(status.message()), HasSubstr(Path("state")));
  EXPECT_THAT(std::string(status.message()), HasSubstr("injected: sync failed"));

  // The old contents are untouched and the temp file is gone.
  absl::StatusOr<std::string> contents = failing.ReadFile(Path("state"));
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(*contents, "original");
  absl::StatusOr<std::vector<std::string>> names = failing.ListDir(dir_);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(*names, ElementsAre("state"));
}

TEST(InjectedFaultTest, TagIsDetectedAndKeepsCodeAndMessage) {
  absl::Status tagged = TagInjected(absl::InternalError("disk on fire"));
  EXPECT_TRUE(IsInjected(tagged));
  EXPECT_EQ(tagged.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(tagged.message(), "disk on fire");
  EXPECT_FALSE(IsInjected(absl::InternalError("disk on fire")));
  EXPECT_FALSE(IsInjected(absl::OkStatus()));
}

TEST_F(PosixFileSystemTest, MissingPathIsNotFound) {
  const std::string path = Path("nope");
  absl::StatusOr<std::string> contents = fs_.ReadFile(path);
  EXPECT_EQ(contents.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(contents.status().message()), HasSubstr(path));
  EXPECT_THAT(std::string(contents.status().message()), HasSubstr(std::strerror(ENOENT)));
  EXPECT_EQ(fs_.FileExists(path).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fs_.DeleteFile(path).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fs_.RenameFile(path, Path("other")).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fs_.ListDir(path).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fs_.SyncDir(path).code(), absl::StatusCode::kNotFound);
}

TEST_F(PosixFileSystemTest, ListDirIsSortedWithoutDots) {
  for (const char* name : {"b", "a", "10", "9", "A"}) WriteString(Path(name), name);
  ASSERT_TRUE(fs_.CreateDirIfMissing(Path("c")).ok());
  absl::StatusOr<std::vector<std::string>> names = fs_.ListDir(dir_);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(*names, ElementsAre("10", "9", "A", "a", "b", "c"));
  names = fs_.ListDir(Path("c"));
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(*names, IsEmpty());
}

TEST_F(PosixFileSystemTest, RenameReplacesAndDeleteRemoves) {
  WriteString(Path("from"), "new");
  WriteString(Path("to"), "old");
  ASSERT_TRUE(fs_.RenameFile(Path("from"), Path("to")).ok());
  EXPECT_EQ(ReadString(Path("to")), "new");
  EXPECT_EQ(fs_.FileExists(Path("from")).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(fs_.DeleteFile(Path("to")).ok());
  EXPECT_EQ(fs_.FileExists(Path("to")).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(fs_.SyncDir(dir_).ok());
}

TEST_F(PosixFileSystemTest, DeleteDirRecursivelyDoesNotFollowSymlinks) {
  ASSERT_TRUE(fs_.CreateDirIfMissing(Path("tree/a/b/c")).ok());
  ASSERT_TRUE(fs_.CreateDirIfMissing(Path("tree/empty")).ok());
  WriteString(Path("tree/top"), "1");
  WriteString(Path("tree/a/b/c/leaf"), "2");
  ASSERT_TRUE(fs_.CreateDirIfMissing(Path("outside")).ok());
  WriteString(Path("outside/keep"), "precious");
  ASSERT_EQ(::symlink(Path("outside").c_str(), Path("tree/a/link").c_str()), 0);

  ASSERT_TRUE(fs_.DeleteDirRecursively(Path("tree")).ok());
  EXPECT_EQ(fs_.FileExists(Path("tree")).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadString(Path("outside/keep")), "precious");

  EXPECT_TRUE(fs_.DeleteDirRecursively(Path("tree")).ok()) << "missing is OK";
  EXPECT_EQ(fs_.DeleteDirRecursively(Path("outside/keep")).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(PosixFileSystemTest, UseAfterCloseIsFailedPrecondition) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs_.NewWritableFile(Path("f"));
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->Append("kept").ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ((*file)->Append("lost").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*file)->Sync().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*file)->Close().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadString(Path("f")), "kept");
}

TEST_F(PosixFileSystemTest, ReadOfDirectoryIsAnError) {
  absl::StatusOr<std::string> contents = fs_.ReadFile(dir_);
  EXPECT_EQ(contents.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(contents.status().message()), HasSubstr(dir_));
}

TEST_F(PosixFileSystemTest, CreateDirIfMissingCreatesParents) {
  ASSERT_TRUE(fs_.CreateDirIfMissing(Path("a/b/c")).ok());
  struct stat st;
  ASSERT_EQ(::stat(Path("a/b/c").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_TRUE(fs_.CreateDirIfMissing(Path("a/b/c")).ok()) << "existing is OK";
  EXPECT_TRUE(fs_.CreateDirIfMissing(Path("a//b/d/")).ok()) << "repeated and trailing '/'";
  absl::StatusOr<std::vector<std::string>> names = fs_.ListDir(Path("a/b"));
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(*names, ElementsAre("c", "d"));

  WriteString(Path("file"), "");
  EXPECT_EQ(fs_.CreateDirIfMissing(Path("file")).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_FALSE(fs_.CreateDirIfMissing(Path("file/sub")).ok());
  EXPECT_EQ(fs_.CreateDirIfMissing("").code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PosixFileSystemTest, ALockedFileCannotBeLockedAgainUntilReleased) {
  absl::StatusOr<std::unique_ptr<FileLock>> first = fs_.LockFile(Path(".lock"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(std::filesystem::exists(Path(".lock"))) << "flock needs a file: created";
  absl::StatusOr<std::unique_ptr<FileLock>> second = fs_.LockFile(Path(".lock"));
  ASSERT_FALSE(second.ok()) << "a second lock in the same process is refused (flock)";
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("held by another"));
  first->reset();
  EXPECT_TRUE(fs_.LockFile(Path(".lock")).ok()) << "released when the FileLock is destroyed";
  EXPECT_EQ(fs_.LockFile(Path("missing/.lock")).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace restoresim
