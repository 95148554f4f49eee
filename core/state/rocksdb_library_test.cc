// The process's RocksDB: the linked library unless RESTORESIM_ROCKSDB_LIBRARY names another,
// and a clear error (never a crash) for a path that is not a RocksDB library.
#include "core/state/rocksdb_library.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace restoresim {
namespace {

TEST(RocksDbLibraryTest, TheProcessUsesTheLibraryTheEnvironmentNames) {
  absl::StatusOr<const RocksDbLibrary*> lib = RocksDb();
  ASSERT_TRUE(lib.ok()) << lib.status();
  const char* named = std::getenv(kRocksDbLibraryEnv);
  if (named == nullptr || *named == '\0') {
    EXPECT_FALSE((*lib)->loaded);
    EXPECT_EQ(*lib, &LinkedRocksDb());
    EXPECT_EQ((*lib)->source.rfind("linked (RocksDB ", 0), 0u) << (*lib)->source;
  } else {
    EXPECT_TRUE((*lib)->loaded);
    EXPECT_EQ((*lib)->source, named);
    EXPECT_NE((*lib)->rocksdb_open, LinkedRocksDb().rocksdb_open) << "the linked one, not it";
  }
  EXPECT_EQ(*RocksDb(), *lib) << "chosen once";
}

TEST(RocksDbLibraryTest, APathThatIsNotRocksDbIsAClearError) {
  absl::StatusOr<RocksDbLibrary> missing = LoadRocksDbLibrary("/nonexistent/librocksdb.so");
  ASSERT_FALSE(missing.ok());
  if (missing.status().code() == absl::StatusCode::kFailedPrecondition) {
    EXPECT_NE(missing.status().message().find("sanitizer"), std::string::npos);
    GTEST_SKIP() << "a sanitizer build loads no other RocksDB: " << missing.status();
  }
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("/nonexistent/librocksdb.so"), std::string::npos);

  absl::StatusOr<RocksDbLibrary> libc = LoadRocksDbLibrary("libm.so.6");
  ASSERT_FALSE(libc.ok());
  EXPECT_NE(libc.status().message().find("has no rocksdb_"), std::string::npos)
      << libc.status();
  EXPECT_FALSE(LoadRocksDbLibrary("").ok());
}

TEST(RocksDbLibraryTest, ErrorsMapToThePortsCodesByTheirLeadingWords) {
  const RocksDbLibrary& lib = LinkedRocksDb();
  const auto code = [&lib](const char* text) {
    return lib.Check(strdup(text), "op").code();  // Check frees the message
  };
  EXPECT_TRUE(lib.Check(nullptr, "op").ok());
  EXPECT_EQ(code("NotFound: x"), absl::StatusCode::kNotFound);
  EXPECT_EQ(code("Corruption: bad block"), absl::StatusCode::kDataLoss);
  EXPECT_EQ(code("IO error: No space left on device"), absl::StatusCode::kUnavailable);
  EXPECT_EQ(code("Resource busy: "), absl::StatusCode::kUnavailable);
  EXPECT_EQ(code("Operation timed out: "), absl::StatusCode::kUnavailable);
  EXPECT_EQ(code("Operation failed. Try again.: "), absl::StatusCode::kUnavailable);
  EXPECT_EQ(code("Invalid argument: Column family not found"),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code("Not implemented: "), absl::StatusCode::kInternal);
  const absl::Status s = lib.Check(strdup("Corruption: block checksum mismatch"), "get");
  EXPECT_EQ(s.message(), "rocksdb get: Corruption: block checksum mismatch");
}

}  // namespace
}  // namespace restoresim
