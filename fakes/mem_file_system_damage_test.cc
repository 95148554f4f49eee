// Tests for MemFileSystem's damage at a crash (MemFileSystemDamage): each kind does what the
// fault model in mem_file_system.h states, to durable data only, and rate 0 draws nothing.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "core/port/random.h"
#include "fakes/mem_file_system.h"

namespace restoresim::fakes {
namespace {

// Writes `contents` to a new file at `path` and syncs it and its directory.
void WriteSynced(MemFileSystem& fs, const std::string& path, const std::string& contents) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.NewWritableFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->Append(contents).ok());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Close().ok());
  ASSERT_TRUE(fs.SyncDir(path.substr(0, path.rfind('/'))).ok());
}

// Creates `path` with `first`, syncs it and its directory, then appends `second` and syncs the
// file again: the Sync a damage may undo or misdirect. The file stays open in `file` until the
// caller's crash, as a process's would.
void SyncTwice(MemFileSystem& fs, const std::string& path, std::string_view first,
               std::string_view second, std::unique_ptr<WritableFile>& file) {
  absl::StatusOr<std::unique_ptr<WritableFile>> opened = fs.NewWritableFile(path);
  ASSERT_TRUE(opened.ok()) << opened.status();
  file = std::move(*opened);
  ASSERT_TRUE(file->Append(first).ok());
  ASSERT_TRUE(file->Sync().ok());
  ASSERT_TRUE(fs.SyncDir(path.substr(0, path.rfind('/'))).ok());
  ASSERT_TRUE(file->Append(second).ok());
  ASSERT_TRUE(file->Sync().ok());
}

std::string Read(MemFileSystem& fs, const std::string& path) {
  absl::StatusOr<std::string> contents = fs.ReadFile(path);
  return contents.ok() ? *contents : "<" + absl::StatusCodeToString(contents.status().code()) + ">";
}

// Counts the words drawn from it.
class CountingRandom final : public RandomSource {
 public:
  uint64_t Next64() override {
    ++draws;
    return prng_.Next64();
  }
  int draws = 0;

 private:
  Prng prng_{7};
};

TEST(MemFileSystemDamageTest, NoDamageAndNoDrawsAtRateZero) {
  CountingRandom random;
  MemFileSystem fs(&random);
  ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
  WriteSynced(fs, "/d/a", "0123456789");
  fs.SetDamage({});
  fs.Crash();
  EXPECT_EQ(Read(fs, "/d/a"), "0123456789");
  EXPECT_EQ(fs.last_damage().total(), 0u);
  EXPECT_EQ(random.draws, 0) << "0 is the quiet answer: no damage draws nothing";
}

TEST(MemFileSystemDamageTest, TornWriteKeepsAPrefixOfTheUnsyncedAppends) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    SeededRandom random(seed);
    MemFileSystem fs(&random);
    ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
    absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.NewWritableFile("/d/a");
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append("synced|").ok());
    ASSERT_TRUE((*file)->Sync().ok());
    ASSERT_TRUE(fs.SyncDir("/d").ok());
    ASSERT_TRUE((*file)->Append("unsynced tail").ok());
    fs.SetDamage({.torn_write_per_mille = 1000});
    fs.Crash();
    const std::string after = Read(fs, "/d/a");
    EXPECT_EQ(fs.last_damage().torn_writes, 1u);
    EXPECT_TRUE(std::string("synced|unsynced tail").starts_with(after)) << after;
    EXPECT_TRUE(after.starts_with("synced|")) << "synced data is never torn: " << after;
  }
}

TEST(MemFileSystemDamageTest, LostWriteUndoesTheLastSync) {
  SeededRandom random(1);
  MemFileSystem fs(&random);
  ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
  fs.SetDamage({.lost_write_per_mille = 1000});
  std::unique_ptr<WritableFile> file;
  ASSERT_NO_FATAL_FAILURE(SyncTwice(fs, "/d/a", "first|", "second", file));
  fs.Crash();
  EXPECT_EQ(Read(fs, "/d/a"), "first|");
  EXPECT_EQ(fs.last_damage().lost_writes, 1u);
}

TEST(MemFileSystemDamageTest, MisdirectedWriteLandsInAnotherFileAtTheSameOffset) {
  SeededRandom random(3);
  MemFileSystem fs(&random);
  ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
  WriteSynced(fs, "/d/victim", "vvvvvvvvvvvvvvvvvvvv");  // 20 bytes, written before the damage
  fs.SetDamage({.misdirected_write_per_mille = 1000});
  std::unique_ptr<WritableFile> file;  // "ABCDEF", bytes 4..9, is the write that goes astray
  ASSERT_NO_FATAL_FAILURE(SyncTwice(fs, "/d/a", "0123", "ABCDEF", file));
  fs.Crash();
  // The victim's own last Sync may have been misdirected too (it is drawn first, in inode
  // order, with "a" as the only other file); what the test pins is the write to "a".
  EXPECT_EQ(Read(fs, "/d/a"), "0123") << "the file keeps what it had before the stray Sync";
  const std::string victim = Read(fs, "/d/victim");
  EXPECT_EQ(victim.size(), 20u) << "a stray write never grows its target";
  EXPECT_EQ(victim.substr(4, 6), "ABCDEF") << victim;
  EXPECT_GE(fs.last_damage().misdirected_writes, 1u);
}

TEST(MemFileSystemDamageTest, MisdirectedWriteBeyondTheOtherFilesEndIsJustLost) {
  SeededRandom random(5);
  MemFileSystem fs(&random);
  ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
  WriteSynced(fs, "/d/short", "xy");
  WriteSynced(fs, "/d/long", "0123456789");
  fs.SetDamage({.misdirected_write_per_mille = 1000});
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.NewWritableFile("/d/long");
  ASSERT_TRUE(file.ok());  // truncates: the next Sync rewrites the whole file from offset 0
  ASSERT_TRUE((*file)->Append("rewritten!").ok());
  ASSERT_TRUE((*file)->Sync().ok());
  fs.Crash();
  EXPECT_EQ(Read(fs, "/d/long"), "0123456789") << "the rewrite never reached this file";
  EXPECT_EQ(Read(fs, "/d/short"), "re") << "it landed from offset 0 in the only other file";
}

// Freeing is lazy (mem_file_system.h, "Determinism"), but a crash collects before it draws:
// a deleted file is never a stray write's target, whatever the draws.
TEST(MemFileSystemDamageTest, MisdirectedWriteNeverLandsInADeletedFile) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    SeededRandom random(seed);
    MemFileSystem fs(&random);
    // Many live inodes, so that the changes below alone would not make a collection due.
    ASSERT_TRUE(fs.CreateDirIfMissing("/e/a/b/c/d/e/f/g/h/i/j/k").ok());
    ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
    WriteSynced(fs, "/d/victim", std::string(20, 'v'));
    WriteSynced(fs, "/d/gone", std::string(20, 'g'));
    ASSERT_TRUE(fs.DeleteFile("/d/gone").ok());
    ASSERT_TRUE(fs.SyncDir("/d").ok());  // "gone" has no name in either version now
    fs.SetDamage({.misdirected_write_per_mille = 1000});
    std::unique_ptr<WritableFile> file;
    ASSERT_NO_FATAL_FAILURE(SyncTwice(fs, "/d/a", "0123", "ABCDEF", file));
    fs.Crash();
    EXPECT_EQ(fs.last_damage().misdirected_writes, 1u) << "seed " << seed;
    EXPECT_EQ(Read(fs, "/d/victim").substr(4, 6), "ABCDEF") << "seed " << seed;
  }
}

TEST(MemFileSystemDamageTest, BitFlipChangesExactlyOneBitOfDurableData) {
  SeededRandom random(11);
  MemFileSystem fs(&random);
  ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
  const std::string data(300, 'a');
  WriteSynced(fs, "/d/a", data);
  fs.SetDamage({.bit_flip_per_mille = 1000});
  fs.Crash();
  const std::string after = Read(fs, "/d/a");
  ASSERT_EQ(after.size(), data.size());
  int bits = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    bits += __builtin_popcount(static_cast<unsigned char>(after[i] ^ data[i]));
  }
  EXPECT_EQ(bits, 1);
  EXPECT_EQ(fs.last_damage().bit_flips, 1u);
}

TEST(MemFileSystemDamageTest, ZeroedSectorZeroesOneAlignedSector) {
  SeededRandom random(13);
  MemFileSystem fs(&random);
  ASSERT_TRUE(fs.CreateDirIfMissing("/d").ok());
  const std::string data(1300, 'z');  // sectors [0,512) [512,1024) [1024,1300)
  WriteSynced(fs, "/d/a", data);
  fs.SetDamage({.zeroed_sector_per_mille = 1000});
  fs.Crash();
  const std::string after = Read(fs, "/d/a");
  ASSERT_EQ(after.size(), data.size());
  size_t first = after.find('\0');
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(first % 512, 0u) << "sectors are 512-byte aligned";
  const size_t end = std::min<size_t>(first + 512, data.size());
  EXPECT_EQ(after.substr(first, end - first), std::string(end - first, '\0'));
  EXPECT_EQ(after.substr(0, first) + after.substr(end),
            std::string(data.size() - (end - first), 'z'));
}

TEST(MemFileSystemDamageTest, VanishedEntryRemovesFilesAndDirectoriesFromTheDisk) {
  SeededRandom random(17);
  MemFileSystem fs(&random);
  ASSERT_TRUE(fs.CreateDirIfMissing("/d/sub").ok());
  ASSERT_TRUE(fs.SyncDir("/d").ok());
  ASSERT_TRUE(fs.SyncDir("/").ok());
  WriteSynced(fs, "/d/sub/a", "a");
  fs.SetDamage({.vanished_entry_per_mille = 1000});
  fs.Crash();
  EXPECT_FALSE(fs.Exists("/d")) << "every durable entry vanished, the root's included";
  EXPECT_GE(fs.last_damage().vanished_entries, 1u);
}

TEST(MemFileSystemDamageTest, DamageIsAPureFunctionOfTheDraws) {
  auto run = [](uint64_t seed) {
    SeededRandom random(seed);
    MemFileSystem fs(&random);
    EXPECT_TRUE(fs.CreateDirIfMissing("/d").ok());
    for (int i = 0; i < 8; ++i) {
      WriteSynced(fs, "/d/f" + std::to_string(i), std::string(700, 'a' + i));
    }
    fs.SetDamage({.lost_write_per_mille = 200,
                  .misdirected_write_per_mille = 200,
                  .bit_flip_per_mille = 200,
                  .zeroed_sector_per_mille = 200});
    fs.Crash();
    std::string all;
    for (int i = 0; i < 8; ++i) all += Read(fs, "/d/f" + std::to_string(i)) + "|";
    return all;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43)) << "different draws, different damage (at these rates)";
}

}  // namespace
}  // namespace restoresim::fakes
