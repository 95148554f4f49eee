#include "core/state/checkpoint_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/port/posix_file_system.h"
#include "core/util/prng.h"

namespace restoresim {
namespace {

using ::testing::HasSubstr;

CheckpointOffsets Sample() {
  return {{{"app-counts-changelog", 0}, 42}, {{"app-counts-changelog", 3}, 0},
          {{"app-other-changelog", 1}, 9000000000}};
}

TEST(CheckpointFileTest, RoundTrip) {
  const std::string text = EncodeCheckpoint(Sample());
  EXPECT_THAT(text, HasSubstr("restoresim-checkpoint 1\n3\napp-counts-changelog 0 42\n"));
  absl::StatusOr<CheckpointOffsets> back = DecodeCheckpoint(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, Sample());
  EXPECT_EQ(*DecodeCheckpoint(EncodeCheckpoint({})), CheckpointOffsets{});
}

TEST(CheckpointFileTest, RejectsEveryKindOfDamageWithAReason) {
  const std::string good = EncodeCheckpoint(Sample());
  struct Case {
    std::string text;
    std::string reason;
  } cases[] = {
      {"", "truncated"},
      {good.substr(0, good.size() - 1), "truncated"},
      {good.substr(0, good.size() / 2), ""},
      {"hello 1\n0\nchecksum 0000000000000000\n", "header"},
      {"restoresim-checkpoint 7\n0\nchecksum 0000000000000000\n", "version 7"},
      {"restoresim-checkpoint 1\n5\nchecksum 0000000000000000\n", "5 entries announced"},
      {"restoresim-checkpoint 1\nx\nchecksum 0000000000000000\n", "count"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<CheckpointOffsets> r = DecodeCheckpoint(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.reason)) << c.text;
  }
  std::string flipped = good;
  flipped[flipped.find("42")] = '7';  // 72: a plausible but wrong offset
  EXPECT_THAT(std::string(DecodeCheckpoint(flipped).status().message()),
              HasSubstr("checksum mismatch"));
}

TEST(CheckpointFileTest, RandomDamageNeverCrashesAndIsAlmostAlwaysCaught) {
  const std::string good = EncodeCheckpoint(Sample());
  Prng prng(11);
  int accepted_changed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bad = good;
    const int edits = 1 + static_cast<int>(prng.Uniform(3));
    for (int e = 0; e < edits; ++e) {
      bad[prng.Uniform(bad.size())] = static_cast<char>(prng.Uniform(256));
    }
    absl::StatusOr<CheckpointOffsets> r = DecodeCheckpoint(bad);
    if (r.ok() && *r != Sample()) ++accepted_changed;
  }
  EXPECT_EQ(accepted_changed, 0);
}

TEST(CheckpointFileTest, WriteAndReadThroughTheFileSystem) {
  char pattern[] = "/tmp/restoresim_ckpt_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  FileSystem& fs = *PosixFileSystem::Default();
  const std::string path = dir + "/.checkpoint";
  EXPECT_EQ(ReadCheckpoint(fs, path).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(WriteCheckpoint(fs, path, Sample()).ok());
  EXPECT_EQ(*ReadCheckpoint(fs, path), Sample());
  EXPECT_EQ(WriteCheckpoint(fs, path, {{{"bad topic", 0}, 1}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteCheckpoint(fs, path, {{{"t", 0}, -1}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*ReadCheckpoint(fs, path), Sample()) << "a refused write leaves the old file";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace restoresim
