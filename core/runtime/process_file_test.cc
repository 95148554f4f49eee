// The process file (Kafka's kafka-streams-process-metadata) on the POSIX file system: written
// once, read back across restarts, Kafka's own JSON read, a damaged file replaced, and a file
// that cannot be read at all an error.
#include "core/runtime/process_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/port/posix_file_system.h"

namespace restoresim {
namespace {

class ProcessFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/restoresim-process-file-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& contents) {
    std::ofstream(dir_ + "/" + std::string(kProcessFileName)) << contents;
  }
  absl::StatusOr<std::string> Load(const std::string& fresh = "fresh-id") {
    return LoadOrCreateProcessId(fs_, dir_, [&]() { return fresh; });
  }

  std::string dir_;
  PosixFileSystem& fs_ = *PosixFileSystem::Default();
};

TEST_F(ProcessFileTest, AFreshIdIsWrittenOnceAndReadBackAfterThat) {
  absl::StatusOr<std::string> first = Load("11111111-2222-4333-8444-555555555555");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, "11111111-2222-4333-8444-555555555555");
  absl::StatusOr<std::string> again = Load("another");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *first) << "a restart over the same state directory is the same process";
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/" + std::string(kProcessFileName) + ".tmp"));
}

TEST_F(ProcessFileTest, KafkaStreamsOwnFileIsRead) {
  // As Jackson writes StateDirectoryProcessFile (whitespace allowed).
  Write("{ \"processId\" : \"8d5c0f0e-1a7b-4c1e-9f3a-0b6c2d4e8f10\" }");
  absl::StatusOr<std::string> id = Load();
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, "8d5c0f0e-1a7b-4c1e-9f3a-0b6c2d4e8f10");
}

TEST_F(ProcessFileTest, ADamagedFileIsReplacedAsKafkaDoes) {
  const std::vector<std::string> damaged = {
      "", "{", "[]", "{\"processId\": null}", "{\"processId\": 7}", "{\"processId\": \"\"}",
      "{\"processId\": \"a b\"}", std::string("\0\xff\x01", 3), "{\"other\": \"x\"}"};
  for (const std::string& bad : damaged) {
    Write(bad);
    absl::StatusOr<std::string> id = Load("fresh-id");
    ASSERT_TRUE(id.ok()) << id.status();
    EXPECT_EQ(*id, "fresh-id") << "for " << bad.size() << " bytes";
    absl::StatusOr<std::string> kept = Load("not-this");
    ASSERT_TRUE(kept.ok());
    EXPECT_EQ(*kept, "fresh-id") << "the replacement is kept";
  }
}

TEST_F(ProcessFileTest, AFileThatCannotBeReadIsAnError) {
  std::filesystem::create_directory(dir_ + "/" + std::string(kProcessFileName));
  absl::StatusOr<std::string> id = Load();
  EXPECT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find("process file"), std::string::npos) << id.status();
}

TEST(ProcessUuidTest, UuidsAreVersion4AndDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const std::string id = NewProcessUuid();
    ASSERT_EQ(id.size(), 36u) << id;
    EXPECT_EQ(id[14], '4') << id;
    EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << id;
    EXPECT_EQ(ParseProcessFile(FormatProcessFile(id)), id);
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 100u);
}

}  // namespace
}  // namespace restoresim
