// Tests for MemFileSystem: the FileSystem contract, the crash model (including a crash at every
// mutation point of WriteFileAtomically), fault injection, parity with PosixFileSystem on one
// scripted sequence of operations, and use under the simulator.
#include "fakes/mem_file_system.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "core/port/file_system.h"
#include "core/port/posix_file_system.h"
#include "core/port/random.h"
#include "core/sync/thread.h"
#include "sim/sim_test_util.h"

namespace restoresim::fakes {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Writes `contents` to a new file at `path`; syncs it when `sync`.
absl::Status Write(FileSystem& fs, const std::string& path, std::string_view contents, bool sync) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.NewWritableFile(path);
  if (!file.ok()) return file.status();
  absl::Status status = (*file)->Append(contents);
  if (status.ok() && sync) status = (*file)->Sync();
  absl::Status closed = (*file)->Close();
  return status.ok() ? closed : status;
}

// The contents of `path`, or "<CODE>" when it cannot be read.
std::string ReadOrCode(FileSystem& fs, const std::string& path) {
  absl::StatusOr<std::string> contents = fs.ReadFile(path);
  if (!contents.ok()) return "<" + absl::StatusCodeToString(contents.status().code()) + ">";
  return *contents;
}

std::string DurableOrCode(MemFileSystem& fs, const std::string& path) {
  absl::StatusOr<std::string> contents = fs.DurableContents(path);
  if (!contents.ok()) return "<" + absl::StatusCodeToString(contents.status().code()) + ">";
  return *contents;
}

std::vector<std::string> Names(FileSystem& fs, const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> names = fs.ListDir(dir);
  EXPECT_TRUE(names.ok()) << names.status();
  return names.ok() ? *names : std::vector<std::string>{};
}

TEST(MemFileSystemTest, WriteReadRoundTrip) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing("/state").ok());
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.NewWritableFile("/state/data");
  ASSERT_TRUE(file.ok()) << file.status();
  std::string expected;
  for (size_t size : {0, 1, 100, 64 * 1024, 3}) {
    std::string chunk(size, static_cast<char>('a' + size % 26));
    expected += chunk;
    ASSERT_TRUE((*file)->Append(chunk).ok());
  }
  EXPECT_EQ(ReadOrCode(fs, "/state/data"), expected) << "appends are visible before Sync";
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ(ReadOrCode(fs, "/state/data"), expected);

  ASSERT_TRUE(Write(fs, "/state/empty", "", /*sync=*/false).ok());
  EXPECT_EQ(ReadOrCode(fs, "/state/empty"), "");
  EXPECT_TRUE(fs.FileExists("/state/empty").ok());
  EXPECT_TRUE(fs.Exists("/state"));
  EXPECT_FALSE(fs.Exists("/state/nope"));
}

TEST(MemFileSystemTest, NewWritableFileTruncatesCurrentContentsOnly) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
  ASSERT_TRUE(Write(fs, "/d/f", "a long first version", /*sync=*/true).ok());
  ASSERT_TRUE(fs.SyncDir("/d").ok());
  ASSERT_TRUE(Write(fs, "/d/f", "short", /*sync=*/false).ok());
  EXPECT_EQ(ReadOrCode(fs, "/d/f"), "short");
  EXPECT_EQ(DurableOrCode(fs, "/d/f"), "a long first version");
  fs.Crash();
  EXPECT_EQ(ReadOrCode(fs, "/d/f"), "a long first version");
}

TEST(MemFileSystemTest, PathsAreNormalisedAndParentsMustExist) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing("//state///0_1/").ok());
  ASSERT_TRUE(Write(fs, "/state/0_1//.checkpoint", "x", /*sync=*/false).ok());
  EXPECT_EQ(ReadOrCode(fs, "/state/./0_1/.checkpoint"), "x");
  EXPECT_EQ(ReadOrCode(fs, "state/0_1/.checkpoint"), "x") << "relative paths start at /";
  EXPECT_THAT(Names(fs, "/"), ElementsAre("state"));
  EXPECT_THAT(Names(fs, "."), ElementsAre("state"));

  EXPECT_EQ(fs.NewWritableFile("/state/missing/f").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fs.NewWritableFile("/state/0_1/.checkpoint/f").status().code(),
            absl::StatusCode::kInternal)
      << "a file as a parent is ENOTDIR";
  EXPECT_EQ(fs.ReadFile("/state/../state").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fs.ReadFile("").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fs.CreateDirIfMissing("").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs.CreateDirIfMissing("/").ok());

  std::vector<std::string> hooked;
  fs.SetBeforeMutationHook([&](std::string_view op, const std::string& path) {
    hooked.push_back(std::string(op) + " " + path);
  });
  ASSERT_TRUE(fs.RenameFile("state//0_1/.checkpoint", "/state/0_1/x/").ok());
  ASSERT_TRUE(fs.SyncDir("/state/0_1/").ok());
  ASSERT_TRUE(fs.CreateDirIfMissing("state//y").ok());  // as long as its normal form
  ASSERT_TRUE(fs.SyncDir("/").ok());
  EXPECT_THAT(hooked, ElementsAre("rename /state/0_1/x", "syncdir /state/0_1", "mkdir /state/y",
                                  "syncdir /"))
      << "the hook sees normalised paths (a rename its destination)";
}

TEST(MemFileSystemTest, ListDirIsSorted) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing("/d/c").ok());
  for (const char* name : {"b", "a", "10", "9", "A", "\xff"}) {
    ASSERT_TRUE(Write(fs, std::string("/d/") + name, name, /*sync=*/false).ok());
  }
  EXPECT_THAT(Names(fs, "/d"), ElementsAre("10", "9", "A", "a", "b", "c", "\xff"));
  EXPECT_THAT(Names(fs, "/d/c"), IsEmpty());
  EXPECT_EQ(fs.ListDir("/d/a").status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(fs.ListDir("/nope").status().code(), absl::StatusCode::kNotFound);
}

TEST(MemFileSystemTest, DeleteDirRecursively) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing("/s/tree/a/b/c").ok());
  ASSERT_TRUE(fs.CreateDirIfMissing("/s/keep").ok());
  ASSERT_TRUE(Write(fs, "/s/tree/top", "1", /*sync=*/false).ok());
  ASSERT_TRUE(Write(fs, "/s/tree/a/b/c/leaf", "2", /*sync=*/false).ok());
  ASSERT_TRUE(Write(fs, "/s/keep/f", "3", /*sync=*/false).ok());
  const size_t inodes_before = fs.inode_count();

  ASSERT_TRUE(fs.DeleteDirRecursively("/s/tree").ok());
  EXPECT_FALSE(fs.Exists("/s/tree"));
  EXPECT_FALSE(fs.Exists("/s/tree/a/b/c/leaf"));
  EXPECT_THAT(Names(fs, "/s"), ElementsAre("keep"));
  EXPECT_EQ(ReadOrCode(fs, "/s/keep/f"), "3");
  // The directories were durable at once, so they stay until /s is synced; the files, never
  // synced into their directories, are freed now.
  EXPECT_EQ(fs.inode_count(), inodes_before - 2);
  ASSERT_TRUE(fs.SyncDir("/s").ok());
  EXPECT_EQ(fs.inode_count(), inodes_before - 6);

  EXPECT_TRUE(fs.DeleteDirRecursively("/s/tree").ok()) << "missing is OK";
  EXPECT_TRUE(fs.DeleteDirRecursively("/nope/deeper").ok());
  EXPECT_EQ(fs.DeleteDirRecursively("/s/keep/f").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(fs.DeleteDirRecursively("/s/keep/f/x").code(), absl::StatusCode::kInternal);
}

// Directories resolved once (and remembered) are resolved again after whatever moves them.
TEST(MemFileSystemTest, ResolvedDirectoriesFollowRenamesDeletionsAndCrashes) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing("/s/a/b").ok());
  ASSERT_TRUE(Write(fs, "/s/a/b/f", "1", /*sync=*/false).ok());
  ASSERT_TRUE(fs.RenameFile("/s/a", "/s/c").ok());
  EXPECT_EQ(fs.NewWritableFile("/s/a/b/g").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadOrCode(fs, "/s/c/b/f"), "1");
  ASSERT_TRUE(fs.CreateDirIfMissing("/s/a/b").ok());  // a new /s/a/b, empty
  EXPECT_THAT(Names(fs, "/s/a/b"), IsEmpty());

  ASSERT_TRUE(fs.CreateDirIfMissing("/s/e").ok());
  ASSERT_TRUE(fs.RenameFile("/s/c/b", "/s/e").ok()) << "replaces the empty /s/e";
  EXPECT_THAT(Names(fs, "/s/e"), ElementsAre("f"));
  EXPECT_EQ(fs.ListDir("/s/c/b").status().code(), absl::StatusCode::kNotFound);

  ASSERT_TRUE(fs.DeleteDirRecursively("/s/e").ok());
  EXPECT_EQ(fs.SyncDir("/s/e").code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(fs.CreateDirIfMissing("/s/e").ok());
  EXPECT_THAT(Names(fs, "/s/e"), IsEmpty());

  // No rename was synced: the crash brings back the durable /s/a/b, holding nothing synced,
  // and /s/c/b is gone again.
  ASSERT_TRUE(Write(fs, "/s/a/b/h", "2", /*sync=*/true).ok());
  fs.Crash();
  EXPECT_EQ(ReadOrCode(fs, "/s/a/b/h"), "<NOT_FOUND>");
  EXPECT_EQ(fs.ListDir("/s/c/b").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Write(fs, "/s/a/b/h", "3", /*sync=*/false).ok());
  EXPECT_EQ(ReadOrCode(fs, "/s/a/b/h"), "3");
}

// ----------------------------------------------------------------------------- crash model

TEST(MemFileSystemCrashTest, UnsyncedAppendIsLostOnCrash) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.NewWritableFile("/d/log");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("synced").ok());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE(fs.SyncDir("/d").ok());
  ASSERT_TRUE((*file)->Append("+unsynced").ok());
  EXPECT_EQ(ReadOrCode(fs, "/d/log"), "synced+unsynced");
  EXPECT_EQ(DurableOrCode(fs, "/d/log"), "synced");
  fs.Crash();
  EXPECT_EQ(ReadOrCode(fs, "/d/log"), "synced");
}

TEST(MemFileSystemCrashTest, SyncedFileWithoutDirSyncDisappearsOnCrash) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
  ASSERT_TRUE(Write(fs, "/d/f", "contents", /*sync=*/true).ok());
  EXPECT_EQ(fs.DurableContents("/d/f").status().code(), absl::StatusCode::kNotFound);
  fs.Crash();
  EXPECT_FALSE(fs.Exists("/d/f"));
  EXPECT_TRUE(fs.Exists("/d")) << "CreateDirIfMissing is durable at once";
  EXPECT_THAT(Names(fs, "/d"), IsEmpty());
}

TEST(MemFileSystemCrashTest, RenameSurvivesCrashOnlyAfterSyncDir) {
  for (bool sync_dir : {false, true}) {
    SCOPED_TRACE(sync_dir ? "with SyncDir" : "without SyncDir");
    const std::vector<std::string> names_after_crash =
        sync_dir ? std::vector<std::string>{"target"} : std::vector<std::string>{"target", "tmp"};
    MemFileSystem fs;
    ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
    ASSERT_TRUE(Write(fs, "/d/tmp", "new", /*sync=*/true).ok());
    ASSERT_TRUE(Write(fs, "/d/target", "old", /*sync=*/true).ok());
    ASSERT_TRUE(fs.SyncDir("/d").ok());
    ASSERT_TRUE(fs.RenameFile("/d/tmp", "/d/target").ok());
    EXPECT_EQ(ReadOrCode(fs, "/d/target"), "new") << "atomic in the current namespace";
    if (sync_dir) {
      ASSERT_TRUE(fs.SyncDir("/d").ok());
    }
    fs.Crash();
    EXPECT_EQ(ReadOrCode(fs, "/d/target"), sync_dir ? "new" : "old");
    EXPECT_EQ(Names(fs, "/d"), names_after_crash);
  }
}

TEST(MemFileSystemCrashTest, RenameAcrossDirsNeedsBothDirsSynced) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing("/a").ok());
  ASSERT_TRUE(fs.CreateDirIfMissing("/b").ok());
  ASSERT_TRUE(Write(fs, "/a/f", "x", /*sync=*/true).ok());
  ASSERT_TRUE(fs.SyncDir("/a").ok());
  ASSERT_TRUE(fs.RenameFile("/a/f", "/b/f").ok());
  ASSERT_TRUE(fs.SyncDir("/b").ok());
  fs.Crash();
  EXPECT_EQ(ReadOrCode(fs, "/a/f"), "x") << "the removal from /a was not synced";
  EXPECT_EQ(ReadOrCode(fs, "/b/f"), "x");
  // Two names for one file now, like a hard link: renaming one onto the other does nothing.
  ASSERT_TRUE(fs.RenameFile("/a/f", "/b/f").ok());
  EXPECT_TRUE(fs.Exists("/a/f"));
  ASSERT_TRUE(fs.DeleteFile("/a/f").ok());
  ASSERT_TRUE(fs.SyncDir("/a").ok());
  fs.Crash();
  EXPECT_FALSE(fs.Exists("/a/f"));
  EXPECT_EQ(ReadOrCode(fs, "/b/f"), "x");
}

TEST(MemFileSystemCrashTest, UnsyncedDeletionsAreUndoneByCrash) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing("/s/task").ok());
  ASSERT_TRUE(Write(fs, "/s/task/f", "x", /*sync=*/true).ok());
  ASSERT_TRUE(fs.SyncDir("/s/task").ok());
  ASSERT_TRUE(fs.DeleteFile("/s/task/f").ok());
  fs.Crash();
  EXPECT_EQ(ReadOrCode(fs, "/s/task/f"), "x");
  ASSERT_TRUE(fs.DeleteDirRecursively("/s/task").ok());
  fs.Crash();
  EXPECT_EQ(ReadOrCode(fs, "/s/task/f"), "x");
  ASSERT_TRUE(fs.DeleteDirRecursively("/s/task").ok());
  ASSERT_TRUE(fs.SyncDir("/s").ok());
  fs.Crash();
  EXPECT_FALSE(fs.Exists("/s/task"));
}

TEST(MemFileSystemCrashTest, HandlesFromBeforeACrashFailCleanly) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.NewWritableFile("/d/f");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("before").ok());
  fs.Crash();
  const uint64_t write_ops = fs.write_ops();
  for (absl::Status status : {(*file)->Append("after"), (*file)->Sync(), (*file)->Close()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("file handle from before a crash"));
    EXPECT_FALSE(IsInjected(status));
  }
  EXPECT_EQ(fs.write_ops(), write_ops) << "a dead handle passes no mutation point";
  EXPECT_EQ((*file)->Close().code(), absl::StatusCode::kFailedPrecondition) << "closed now";
  EXPECT_FALSE(fs.Exists("/d/f"));
  ASSERT_TRUE(Write(fs, "/d/f", "restarted", /*sync=*/true).ok()) << "new handles work";
  EXPECT_EQ(ReadOrCode(fs, "/d/f"), "restarted");
}

TEST(MemFileSystemCrashTest, CrashFromTheHookStopsTheInterruptedOperation) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
  ASSERT_TRUE(Write(fs, "/d/f", "x", /*sync=*/true).ok());
  ASSERT_TRUE(fs.SyncDir("/d").ok());
  std::string seen_in_hook;
  fs.SetBeforeMutationHook([&](std::string_view op, const std::string& path) {
    if (op != "rename") return;
    fs.Crash();  // the hook runs unlocked: no deadlock
    seen_in_hook = path + " " + ReadOrCode(fs, "/d/f");
  });
  absl::Status status = fs.RenameFile("/d/f", "/d/g");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("crashed before this operation"));
  EXPECT_EQ(seen_in_hook, "/d/g x");
  EXPECT_THAT(Names(fs, "/d"), ElementsAre("f")) << "the rename did not happen";
  fs.SetBeforeMutationHook(nullptr);
  EXPECT_TRUE(fs.RenameFile("/d/f", "/d/g").ok());
}

TEST(MemFileSystemCrashTest, ProcessViewDiesWithACrash) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
  std::unique_ptr<FileSystem> old_instance = fs.NewProcessView();
  ASSERT_TRUE(WriteFileAtomically(*old_instance, "/d/f", "v1").ok());
  EXPECT_EQ(ReadOrCode(*old_instance, "/d/f"), "v1");
  fs.Crash();
  const uint64_t write_ops = fs.write_ops();
  for (absl::Status status :
       {old_instance->FileExists("/d/f"), old_instance->ReadFile("/d/f").status(),
        old_instance->NewWritableFile("/d/g").status(), old_instance->RenameFile("/d/f", "/d/h"),
        old_instance->DeleteFile("/d/f"), old_instance->CreateDirIfMissing("/e"),
        old_instance->DeleteDirRecursively("/d"), old_instance->ListDir("/d").status(),
        old_instance->SyncDir("/d")}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("process view from before a crash"));
  }
  EXPECT_THAT(Names(fs, "/"), ElementsAre("d")) << "the dead instance changed nothing";
  EXPECT_EQ(fs.write_ops(), write_ops) << "and passed no mutation point";
  std::unique_ptr<FileSystem> successor = fs.NewProcessView();
  EXPECT_EQ(ReadOrCode(*successor, "/d/f"), "v1");
  EXPECT_TRUE(WriteFileAtomically(*successor, "/d/f", "v2").ok());
}

constexpr char kDir[] = "/state/0_1";
constexpr char kPath[] = "/state/0_1/.checkpoint";
constexpr char kOld[] = "offsets v1: 0_1=100";
constexpr char kNew[] = "offsets v2: 0_1=250, 0_2=7";

using Writer = std::function<absl::Status(FileSystem&, const std::string&, std::string_view)>;

struct CrashOutcome {
  absl::Status status;             // what the writer returned
  std::string in_hook;             // kPath right after a crash inside the writer ("" if none)
  std::string after;               // kPath after the crash (and whatever the writer did after it)
  std::vector<std::string> names;  // kDir after the crash
  std::string restarted;           // kPath after a successor rewrote it and crashed again
};

// Replaces kOld by kNew at kPath with `write`, crashing at its `crash_at`-th mutation point
// (1-based), or after it returns when it has fewer.
CrashOutcome CrashAt(const Writer& write, uint64_t crash_at) {
  MemFileSystem fs;
  EXPECT_TRUE(fs.CreateDirIfMissing(kDir).ok());
  EXPECT_TRUE(WriteFileAtomically(fs, kPath, kOld).ok());
  CrashOutcome outcome;
  uint64_t points = 0;
  fs.SetBeforeMutationHook([&](std::string_view, const std::string&) {
    if (++points != crash_at) return;
    fs.Crash();
    outcome.in_hook = ReadOrCode(fs, kPath);
  });
  outcome.status = write(fs, kPath, kNew);
  fs.SetBeforeMutationHook(nullptr);
  if (points < crash_at) fs.Crash();
  outcome.after = ReadOrCode(fs, kPath);
  outcome.names = Names(fs, kDir);
  EXPECT_TRUE(WriteFileAtomically(fs, kPath, "restarted").ok());
  fs.Crash();
  outcome.restarted = ReadOrCode(fs, kPath);
  return outcome;
}

uint64_t MutationPoints(const Writer& write) {
  MemFileSystem fs;
  EXPECT_TRUE(fs.CreateDirIfMissing(kDir).ok());
  const uint64_t before = fs.write_ops();
  EXPECT_TRUE(write(fs, kPath, kNew).ok());
  return fs.write_ops() - before;
}

TEST(MemFileSystemCrashTest, WriteFileAtomicallyIsAllOrNothingAtEveryMutationPoint) {
  const Writer atomic = [](FileSystem& fs, const std::string& path, std::string_view data) {
    return WriteFileAtomically(fs, path, data);
  };
  const uint64_t points = MutationPoints(atomic);
  EXPECT_EQ(points, 5u) << "create, append, sync, rename, syncdir";
  for (uint64_t k = 1; k <= points + 1; ++k) {
    SCOPED_TRACE("crash at mutation point " + std::to_string(k));
    CrashOutcome outcome = CrashAt(atomic, k);
    // Only the directory sync makes the rename durable: every earlier crash keeps kOld.
    const std::string expected = k <= points ? kOld : kNew;
    EXPECT_EQ(outcome.after, expected);
    EXPECT_THAT(outcome.names, ElementsAre(".checkpoint")) << "no temp file survives";
    EXPECT_EQ(outcome.restarted, "restarted") << "whatever the crash left, a rewrite works";
    if (k <= points) {
      EXPECT_EQ(outcome.in_hook, kOld);
      EXPECT_EQ(outcome.status.code(), absl::StatusCode::kFailedPrecondition) << outcome.status;
    } else {
      EXPECT_TRUE(outcome.status.ok()) << outcome.status;
    }
  }
}

TEST(MemFileSystemCrashTest, CrashSweepCatchesAWriterThatSkipsSync) {
  // The same protocol without the file Sync: the rename can become durable before the data.
  const Writer unsynced = [](FileSystem& fs, const std::string& path, std::string_view data) {
    const std::string tmp = path + ".tmp";
    absl::Status status = Write(fs, tmp, data, /*sync=*/false);
    if (status.ok()) status = fs.RenameFile(tmp, path);
    if (status.ok()) status = fs.SyncDir(kDir);
    return status;
  };
  const uint64_t points = MutationPoints(unsynced);
  std::set<std::string> seen;
  for (uint64_t k = 1; k <= points + 1; ++k) seen.insert(CrashAt(unsynced, k).after);
  EXPECT_THAT(seen, ElementsAre("", kOld)) << "a crash after it returns leaves an empty file";
}

TEST(MemFileSystemCrashTest, ReplacedAndDeletedFilesAreFreed) {
  MemFileSystem fs;
  ASSERT_TRUE(fs.CreateDirIfMissing(kDir).ok());
  ASSERT_TRUE(WriteFileAtomically(fs, kPath, "0").ok());
  const size_t inodes = fs.inode_count();
  for (int i = 1; i <= 100; ++i) {
    ASSERT_TRUE(WriteFileAtomically(fs, kPath, std::to_string(i)).ok());
  }
  EXPECT_EQ(fs.inode_count(), inodes);
  ASSERT_TRUE(fs.DeleteFile(kPath).ok());
  EXPECT_EQ(fs.inode_count(), inodes) << "still durable: a crash brings it back";
  ASSERT_TRUE(fs.SyncDir(kDir).ok());
  EXPECT_EQ(fs.inode_count(), inodes - 1);
}

// ----------------------------------------------------------------------------- faults

TEST(MemFileSystemFaultTest, InjectedErrorsAreTaggedAndNearTheConfiguredRate) {
  SeededRandom random(20240611);
  MemFileSystem fs(&random);
  ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.NewWritableFile("/d/f");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(Write(fs, "/d/a", "moved", /*sync=*/true).ok());
  ASSERT_TRUE(fs.SyncDir("/d").ok());
  fs.SetFaults({.append_error_per_mille = 100,
                .sync_error_per_mille = 100,
                .rename_error_per_mille = 100,
                .read_error_per_mille = 100});

  constexpr int kOps = 2000;
  int append_errors = 0, sync_errors = 0, dir_sync_errors = 0, rename_errors = 0, read_errors = 0;
  auto check_injected = [](const absl::Status& status, absl::StatusCode code) {
    EXPECT_EQ(status.code(), code) << status;
    EXPECT_TRUE(IsInjected(status)) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("injected"));
  };
  std::string current, durable;
  std::string name = "/d/a", other = "/d/b";
  for (int i = 0; i < kOps; ++i) {
    const std::string chunk = std::to_string(i) + ",";
    if (absl::Status s = (*file)->Append(chunk); s.ok()) {
      current += chunk;
    } else {
      check_injected(s, absl::StatusCode::kUnavailable);
      ++append_errors;
    }
    if (absl::Status s = (*file)->Sync(); s.ok()) {
      durable = current;
    } else {
      check_injected(s, absl::StatusCode::kInternal);
      ++sync_errors;
    }
    ASSERT_EQ(DurableOrCode(fs, "/d/f"), durable) << "an injected Sync changes nothing";
    if (absl::Status s = fs.RenameFile(name, other); s.ok()) {
      std::swap(name, other);
    } else {
      check_injected(s, absl::StatusCode::kInternal);
      ++rename_errors;
    }
    ASSERT_TRUE(fs.Exists(name) && !fs.Exists(other)) << "an injected rename changes nothing";
    if (absl::Status s = fs.SyncDir("/d"); !s.ok()) {
      check_injected(s, absl::StatusCode::kInternal);
      ++dir_sync_errors;
    }
    if (absl::StatusOr<std::string> read = fs.ReadFile(name); read.ok()) {
      EXPECT_EQ(*read, "moved");
    } else {
      check_injected(read.status(), absl::StatusCode::kUnavailable);
      ++read_errors;
    }
  }
  fs.SetFaults({});
  EXPECT_EQ(ReadOrCode(fs, "/d/f"), current) << "an injected Append appends nothing";
  // 10% of 2000: mean 200, standard deviation about 13.
  for (int errors : {append_errors, sync_errors, dir_sync_errors, rename_errors, read_errors}) {
    EXPECT_GT(errors, 150);
    EXPECT_LT(errors, 250);
  }
  EXPECT_FALSE(IsInjected(fs.ReadFile("/d/missing").status())) << "real errors stay untagged";
}

TEST(MemFileSystemFaultTest, NoFaultsWithoutARandomSource) {
  MemFileSystem fs(nullptr, {1000, 1000, 1000, 1000});
  ASSERT_TRUE(fs.CreateDirIfMissing(kDir).ok());
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(WriteFileAtomically(fs, kPath, std::to_string(i)).ok());
    ASSERT_EQ(ReadOrCode(fs, kPath), std::to_string(i));
  }
}

// Counts the words drawn from it.
class CountingRandom final : public RandomSource {
 public:
  uint64_t Next64() override {
    ++draws_;
    return prng_.Next64();
  }
  int draws() const { return draws_; }

 private:
  Prng prng_{1};
  int draws_ = 0;
};

// Answers 0 to every draw: the quiet answer the shrinker lowers data choices toward.
class ZeroRandom final : public RandomSource {
 public:
  uint64_t Next64() override { return 0; }
  uint64_t Uniform(uint64_t) override {
    ++draws;
    return 0;
  }
  int draws = 0;
};

TEST(MemFileSystemFaultTest, TheAnswerZeroNeverInjects) {
  ZeroRandom random;
  MemFileSystem fs(&random, {999, 999, 999, 999});
  ASSERT_TRUE(fs.CreateDirIfMissing(kDir).ok());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(WriteFileAtomically(fs, kPath, std::to_string(i)).ok());
    ASSERT_EQ(ReadOrCode(fs, kPath), std::to_string(i));
  }
  EXPECT_GT(random.draws, 60) << "appends, syncs, renames and reads could all fail";
  fs.SetFaults({1000, 1000, 1000, 1000});
  EXPECT_TRUE(IsInjected(WriteFileAtomically(fs, kPath, "y"))) << "at 1000 per mille, always";
}

TEST(MemFileSystemFaultTest, DrawsOnlyWhenAFaultIsPossible) {
  CountingRandom random;
  MemFileSystem fs(&random);
  ASSERT_TRUE(fs.CreateDirIfMissing(kDir).ok());
  ASSERT_TRUE(WriteFileAtomically(fs, kPath, "x").ok());
  ASSERT_EQ(ReadOrCode(fs, kPath), "x");
  EXPECT_EQ(random.draws(), 0) << "zero rates must not consume the stream";

  fs.SetFaults({.append_error_per_mille = 1000});
  absl::Status status = WriteFileAtomically(fs, kPath, "y");
  EXPECT_TRUE(IsInjected(status)) << status;
  EXPECT_EQ(random.draws(), 1);
  EXPECT_EQ(ReadOrCode(fs, kPath), "x");
}

// ----------------------------------------------------------------------------- POSIX parity

// One step of the parity script; paths are relative to the file system's root directory.
struct Step {
  enum Op {
    kMkdir,
    kWrite,
    kRead,
    kExists,
    kRename,
    kDelete,
    kRmTree,
    kList,
    kSyncDir,
    kAtomic,
    kUseAfterClose
  };
  Op op;
  std::string a;
  std::string b = "";
};

constexpr const char* kOpNames[] = {"mkdir",   "write",  "read",           "exists",
                                    "rename",  "delete", "rmtree",         "list",
                                    "syncdir", "atomic", "use-after-close"};

// Runs `script` under `root`; one line per step: its status code and what it returned.
std::vector<std::string> RunScript(FileSystem& fs, const std::string& root,
                                   const std::vector<Step>& script) {
  std::vector<std::string> lines;
  for (const Step& step : script) {
    const std::string a = root + "/" + step.a, b = root + "/" + step.b;
    absl::Status status;
    std::string result;
    switch (step.op) {
      case Step::kMkdir:
        status = fs.CreateDirIfMissing(a);
        break;
      case Step::kWrite:
        status = Write(fs, a, step.b, /*sync=*/true);
        break;
      case Step::kRead:
        result = ReadOrCode(fs, a);
        break;
      case Step::kExists:
        status = fs.FileExists(a);
        break;
      case Step::kRename:
        status = fs.RenameFile(a, b);
        break;
      case Step::kDelete:
        status = fs.DeleteFile(a);
        break;
      case Step::kRmTree:
        status = fs.DeleteDirRecursively(a);
        break;
      case Step::kSyncDir:
        status = fs.SyncDir(a);
        break;
      case Step::kAtomic:
        status = WriteFileAtomically(fs, a, step.b);
        break;
      case Step::kList: {
        absl::StatusOr<std::vector<std::string>> names = fs.ListDir(a);
        status = names.status();
        if (names.ok()) result = ::testing::PrintToString(*names);
        break;
      }
      case Step::kUseAfterClose: {
        absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.NewWritableFile(a);
        status = file.status();
        if (!file.ok()) break;
        status = (*file)->Close();
        for (absl::Status s : {(*file)->Append("x"), (*file)->Sync(), (*file)->Close()}) {
          result += absl::StatusCodeToString(s.code()) + " ";
        }
        break;
      }
    }
    lines.push_back(fmt::format("{} {} {}: {} {}", kOpNames[step.op], step.a, step.b,
                                absl::StatusCodeToString(status.code()), result));
  }
  return lines;
}

TEST(MemFileSystemParityTest, MatchesPosixFileSystemOnAScript) {
  const std::vector<Step> script = {
      {Step::kMkdir, "a/b/c"},
      {Step::kMkdir, "a//b/d/"},
      {Step::kList, "a/b"},
      {Step::kWrite, "a/f", "hello"},
      {Step::kRead, "a/f"},
      {Step::kWrite, "a/f", "hi"},
      {Step::kRead, "a/f"},
      {Step::kRead, "a/missing"},
      {Step::kRead, "a"},
      {Step::kWrite, "nodir/x", "x"},
      {Step::kWrite, "a/f/x", "x"},
      {Step::kWrite, "a/b", "x"},
      {Step::kExists, "a/b/"},
      {Step::kExists, "a/f"},
      {Step::kExists, "a/zz"},
      {Step::kExists, "a/f/x"},
      {Step::kRename, "a/f", "a/g"},
      {Step::kExists, "a/f"},
      {Step::kWrite, "a/h", "h"},
      {Step::kRename, "a/g", "a/h"},
      {Step::kRead, "a/h"},
      {Step::kRename, "a/missing", "a/x"},
      {Step::kRename, "a/h", "nodir/h"},
      {Step::kRename, "a/h", "a/b"},
      {Step::kRename, "a/b", "a/h"},
      {Step::kMkdir, "e"},
      {Step::kRename, "a/b", "e"},
      {Step::kList, "e"},
      {Step::kExists, "a/b"},
      {Step::kMkdir, "a/q"},
      {Step::kWrite, "a/q/file", "q"},
      {Step::kRename, "e", "a/q"},
      {Step::kRename, "e", "e/c/x"},
      {Step::kRename, "a/h", "a/h"},
      {Step::kRead, "a/h"},
      {Step::kDelete, "a/missing"},
      {Step::kDelete, "e"},
      {Step::kDelete, "a/h"},
      {Step::kList, "a/h"},
      {Step::kList, "a/q/file"},
      {Step::kSyncDir, "a"},
      {Step::kSyncDir, "zz"},
      {Step::kSyncDir, "a/q/file"},
      {Step::kRmTree, "zz"},
      {Step::kRmTree, "a/q/file"},
      {Step::kRmTree, "a/q/file/x"},
      {Step::kRmTree, "e"},
      {Step::kExists, "e"},
      {Step::kMkdir, "a/q/file"},
      {Step::kMkdir, "a/q/file/sub"},
      {Step::kAtomic, "a/state", "v1"},
      {Step::kAtomic, "a/state", "v2"},
      {Step::kRead, "a/state"},
      {Step::kAtomic, "nodir/state", "v"},
      {Step::kUseAfterClose, "a/closed"},
      {Step::kRead, "a/q/file/x"},
      {Step::kList, "a"},
      {Step::kRmTree, "a/q"},
      {Step::kList, "a"},
      {Step::kList, ""},
  };
  char pattern[] = "/tmp/restoresim_memfs_parity.XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr) << std::strerror(errno);
  const std::vector<std::string> posix = RunScript(*PosixFileSystem::Default(), pattern, script);
  std::error_code error;
  std::filesystem::remove_all(pattern, error);
  EXPECT_FALSE(error) << error.message();

  MemFileSystem mem;
  ASSERT_TRUE(mem.CreateDirIfMissing("/state").ok());
  const std::vector<std::string> memory = RunScript(mem, "/state", script);
  ASSERT_EQ(posix.size(), memory.size());
  for (size_t i = 0; i < posix.size(); ++i) EXPECT_EQ(memory[i], posix[i]) << "step " << i;
}

// ----------------------------------------------------------------------------- simulator

struct SimResult {
  sim::TestRun run;
  std::vector<std::string> mutations;  // mutation points in the order the threads passed them
  std::string durable;                 // both checkpoints after the crash
};

// One runtime instance: two simulated threads checkpoint their own task through the instance's
// process view, while a third thread crashes the machine after a seed-dependent number of
// steps. Then a successor instance starts on what survived.
SimResult RunWriters(uint64_t seed) {
  SimResult result;
  result.run = sim::RunUnderSim(
      [&result, seed]() {
        MemFileSystem fs;
        fs.SetBeforeMutationHook([&result](std::string_view op, const std::string& path) {
          result.mutations.push_back(std::string(op) + " " + path);
        });
        const std::string paths[2] = {"/state/0_0/.checkpoint", "/state/0_1/.checkpoint"};
        EXPECT_TRUE(fs.CreateDirIfMissing("/state/0_0").ok());
        EXPECT_TRUE(fs.CreateDirIfMissing("/state/0_1").ok());
        std::unique_ptr<FileSystem> instance = fs.NewProcessView();
        std::string last_ok[2] = {"<NOT_FOUND>", "<NOT_FOUND>"};
        auto writer = [&](int task) {
          for (int i = 0; i < 4; ++i) {
            const std::string value = std::to_string(task) + "@" + std::to_string(i);
            absl::Status status = WriteFileAtomically(*instance, paths[task], value);
            if (status.ok()) {
              last_ok[task] = value;
            } else {  // only the crash stops a write: the instance is dead from then on
              EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
            }
          }
        };
        Thread a("writer-0_0", [&]() { writer(0); });
        Thread b("writer-0_1", [&]() { writer(1); });
        Thread crasher("crasher", [&]() {
          for (uint64_t i = 0; i < seed * 5; ++i) Yield();
          fs.Crash();
        });
        a.Join();
        b.Join();
        crasher.Join();
        // A successful WriteFileAtomically is durable; an interrupted one left nothing behind.
        for (int task : {0, 1}) {
          EXPECT_EQ(ReadOrCode(fs, paths[task]), last_ok[task]);
          result.durable += ReadOrCode(fs, paths[task]) + ";";
        }
        EXPECT_EQ(instance->FileExists(paths[0]).code(), absl::StatusCode::kFailedPrecondition);
        std::unique_ptr<FileSystem> successor = fs.NewProcessView();
        EXPECT_TRUE(WriteFileAtomically(*successor, paths[0], "next").ok());
        EXPECT_EQ(ReadOrCode(*successor, paths[0]), "next");
      },
      seed);
  return result;
}

TEST(MemFileSystemSimTest, SimulatedWritersAndACrashAreDeterministic) {
  std::set<std::vector<std::string>> orders;
  std::set<std::string> outcomes;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    SimResult first = RunWriters(seed);
    ASSERT_TRUE(first.run.outcome.ok()) << first.run.outcome.message;
    SimResult again = RunWriters(seed);
    EXPECT_EQ(first.run.hash, again.run.hash);
    EXPECT_EQ(first.mutations, again.mutations);
    EXPECT_EQ(first.durable, again.durable);
    orders.insert(first.mutations);
    outcomes.insert(first.durable);
  }
  EXPECT_GT(orders.size(), 12u) << "the file system's lock must be a scheduling point";
  EXPECT_GT(outcomes.size(), 3u) << "crashes should land at different points";
}

}  // namespace
}  // namespace restoresim::fakes
