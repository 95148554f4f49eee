// MemFileSystem's file locks: exclusive while held, released with the FileLock, void after a
// crash (the process that took it died), and a dead process view cannot take one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "fakes/mem_file_system.h"

namespace restoresim::fakes {
namespace {

TEST(MemFileSystemLockTest, ALockIsExclusiveUntilItsFileLockIsDestroyed) {
  MemFileSystem fs;
  absl::StatusOr<std::unique_ptr<FileLock>> first = fs.LockFile("/state/app/.lock");
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<FileLock>> second = fs.LockFile("/state/app/.lock");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(fs.LockFile("/state/other/.lock").ok()) << "another path is another lock";
  first->reset();
  EXPECT_TRUE(fs.LockFile("/state/app/.lock").ok());
  EXPECT_FALSE(fs.Exists("/state/app/.lock")) << "locks live beside the namespace";
  EXPECT_EQ(fs.write_ops(), 0u) << "taking a lock is no mutation point";
}

TEST(MemFileSystemLockTest, ACrashReleasesTheDeadProcessesLocksAndItsLateReleaseKeepsTheNewOne) {
  MemFileSystem fs;
  std::unique_ptr<FileSystem> before = fs.NewProcessView();
  absl::StatusOr<std::unique_ptr<FileLock>> dead = before->LockFile("/state/app/.lock");
  ASSERT_TRUE(dead.ok()) << dead.status();
  fs.Crash();
  std::unique_ptr<FileSystem> after = fs.NewProcessView();
  absl::StatusOr<std::unique_ptr<FileLock>> successor = after->LockFile("/state/app/.lock");
  ASSERT_TRUE(successor.ok()) << "the holder died in the crash: " << successor.status();
  dead->reset();  // the dead process's threads are reaped later
  EXPECT_EQ(after->LockFile("/state/app/.lock").status().code(), absl::StatusCode::kAborted)
      << "the successor still holds it";
  EXPECT_EQ(before->LockFile("/state/x/.lock").status().code(),
            absl::StatusCode::kFailedPrecondition)
      << "a view from before the crash takes nothing";
}

}  // namespace
}  // namespace restoresim::fakes
