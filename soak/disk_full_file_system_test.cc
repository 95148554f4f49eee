#include "soak/disk_full_file_system.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/port/posix_file_system.h"

namespace restoresim::soak {
namespace {

class DiskFullFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/disk-full-" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
  DiskFullFileSystem fs_{PosixFileSystem::Default()};
};

TEST_F(DiskFullFileSystemTest, WhileFullEveryWriteFailsAsENOSPCAndReadsGoOn) {
  auto file = fs_.NewWritableFile(dir_ + "/a");
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->Append("kept").ok());
  ASSERT_TRUE((*file)->Close().ok());
  auto open = fs_.NewWritableFile(dir_ + "/b");  // opened before the disk fills
  ASSERT_TRUE(open.ok());

  fs_.SetFull(true);
  const absl::Status created = fs_.NewWritableFile(dir_ + "/c").status();
  EXPECT_EQ(created.code(), absl::StatusCode::kResourceExhausted) << created;
  EXPECT_TRUE(created.GetPayload(std::string(kInjectedFaultPayload)).has_value());
  EXPECT_EQ((*open)->Append("x").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ((*open)->Sync().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(fs_.CreateDirIfMissing(dir_ + "/d").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(fs_.CreateDirIfMissing(dir_).ok()) << "an existing directory needs no space";
  EXPECT_EQ(*fs_.ReadFile(dir_ + "/a"), "kept");
  EXPECT_TRUE(fs_.DeleteFile(dir_ + "/a").ok()) << "deleting frees space";
  EXPECT_EQ(fs_.refused(), 4);

  fs_.SetFull(false);
  EXPECT_TRUE((*open)->Append("y").ok());
  EXPECT_TRUE((*open)->Close().ok());
  EXPECT_TRUE(fs_.NewWritableFile(dir_ + "/c").ok());
  EXPECT_EQ(fs_.refused(), 4);
}

}  // namespace
}  // namespace restoresim::soak
