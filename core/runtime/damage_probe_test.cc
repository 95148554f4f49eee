// The damage probe (issue 25): every byte of a small task directory's files — its checkpoint
// and its store's files, for a LogStore and for a RocksDB store — cut, flipped and zeroed, and
// every file removed or replaced by a directory or a FIFO, and the store's and the task's
// directories replaced by files. Each damaged directory is reopened as the runtime reopens it
// (TaskManager::InitializePending: a DataLoss wipes the task directory and opens afresh), and
// the state manager's answer is judged by restoring the changelog from where it says to start
// onto what the store holds: the result must be the changelog's fold. So every case ends in the
// exact contents (the claim kept) or a rebuild (the claim withdrawn or the store wiped) — never
// silent loss, never an error that blocks the task for ever, never a hang (the test's timeout).
//
// A RocksDB block whose checksum fails is found only when it is read (RocksDB checks blocks
// lazily); those cases are counted apart ("loss found at read"): data loss reported to the
// reader, not silent, which the runtime handles as task corruption (wipe and restore) wherever
// a store reports it, at open or at a read while processing (TaskReviver::ReviveRunning).
//
// Slow (about a minute): `meson test -C build --suite slow damage_probe_test`.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/port/posix_file_system.h"
#include "core/runtime/state_manager.h"
#include "core/state/log_store.h"
#include "core/state/rocksdb_store.h"

namespace restoresim {
namespace {

namespace fs = std::filesystem;

struct Record {
  std::string key;
  std::optional<std::string> value;  // nullopt: a tombstone
};

// The changelog of the probe's one store; a commit after record 4, a clean close after all.
const std::vector<Record>& Changelog() {
  static const auto* records = new std::vector<Record>{
      {"k0", "v0"}, {"k1", "v1"}, {"k0", "v2"}, {"k2", "v3"},
      {"k1", std::nullopt}, {"k3", "v5"}, {"k2", "v6"}, {"k4", "v7"},
  };
  return *records;
}
constexpr int64_t kFirstCommit = 4;

using Contents = std::map<std::string, std::string>;

// `base` with records [from, end) of the changelog applied.
Contents Apply(Contents base, int64_t from) {
  for (size_t i = static_cast<size_t>(from); i < Changelog().size(); ++i) {
    const Record& r = Changelog()[i];
    if (r.value.has_value()) {
      base[r.key] = *r.value;
    } else {
      base.erase(r.key);
    }
  }
  return base;
}

enum class Outcome { kExact, kRebuilt, kLossFoundAtRead, kSilentLoss, kBlocked };

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kExact: return "exact";
    case Outcome::kRebuilt: return "rebuilt";
    case Outcome::kLossFoundAtRead: return "loss found at read";
    case Outcome::kSilentLoss: return "SILENT LOSS";
    case Outcome::kBlocked: return "BLOCKED";
  }
  return "?";
}

class DamageProbe {
 public:
  DamageProbe(std::string root, bool rocksdb) : root_(std::move(root)), rocksdb_(rocksdb) {}

  StateManagerConfig Config(const std::string& task_dir) const {
    StateManagerConfig c;
    c.application_id = "app";
    c.task_dir = task_dir;
    c.fs = PosixFileSystem::Default();
    if (rocksdb_) {
      c.open_store = [](const std::string& dir, const std::string& name)
          -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
        auto store = RocksDbStore::Open(dir, name);
        if (!store.ok()) return store.status();
        return std::unique_ptr<KeyValueStore>(std::move(*store));
      };
    } else {
      c.open_store = [](const std::string& dir, const std::string& name)
          -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
        auto store = LogStore::Open(*PosixFileSystem::Default(), dir, name);
        if (!store.ok()) return store.status();
        return std::unique_ptr<KeyValueStore>(std::move(*store));
      };
    }
    return c;
  }

  // The intact task directory: a commit at kFirstCommit, a clean close at the end.
  void Build(const std::string& task_dir) const {
    StateManager sm({0, 1}, TaskType::kActive, Config(task_dir));
    ASSERT_TRUE(sm.RegisterStores().ok());
    KeyValueStore* store = sm.StoreForChangelog(changelog_);
    for (size_t i = 0; i < Changelog().size(); ++i) {
      const Record& r = Changelog()[i];
      ASSERT_TRUE((r.value ? store->Put(r.key, *r.value) : store->Delete(r.key)).ok());
      sm.Advance(changelog_, static_cast<int64_t>(i) + 1);
      if (static_cast<int64_t>(i) + 1 == kFirstCommit) ASSERT_TRUE(sm.Flush().ok());
    }
    ASSERT_TRUE(sm.Close(/*clean=*/true).ok());
  }

  // Reopens `task_dir` as the runtime would and judges the result.
  Outcome Reopen(const std::string& task_dir, std::string& detail) const {
    StateManager sm({0, 1}, TaskType::kActive, Config(task_dir));
    absl::Status s = sm.RegisterStores();
    bool wiped = false;
    if (absl::IsDataLoss(s)) {  // as TaskManager::InitializePending
      wiped = true;
      if (absl::Status w = sm.Wipe(); !w.ok()) {
        detail = "wipe: " + w.ToString();
        return Outcome::kBlocked;
      }
      s = sm.RegisterStores();
    }
    if (!s.ok()) {
      detail = s.ToString();
      return Outcome::kBlocked;
    }
    const int64_t start = sm.StartOffset(changelog_).value_or(0);
    absl::StatusOr<Contents> held = sm.StoreForChangelog(changelog_)->ReadAll();
    (void)sm.Close(/*clean=*/false);
    if (!held.ok()) {
      detail = held.status().ToString();
      return absl::IsDataLoss(held.status()) ? Outcome::kLossFoundAtRead : Outcome::kBlocked;
    }
    if (Apply(*held, start) != Apply({}, 0)) {
      detail = fmt::format("restoring from {} does not give the changelog's fold ({} held)",
                           start, held->size());
      return Outcome::kSilentLoss;
    }
    const bool claim_kept = start == static_cast<int64_t>(Changelog().size());
    return claim_kept && !wiped ? Outcome::kExact : Outcome::kRebuilt;
  }

  // Every damage case of the intact directory `original`.
  std::map<Outcome, int> Run(const std::string& original) {
    original_ = original;
    copy_ = root_ + "/case/0_1";
    counts_.clear();
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(original)) {
      if (e.is_regular_file()) files.push_back(fs::relative(e.path(), original).string());
    }
    std::sort(files.begin(), files.end());
    EXPECT_GE(files.size(), 3u);
    for (const std::string& name : files) ProbeFile(name);
    Fresh();
    fs::remove_all(copy_ + "/counts");
    Judge("the store's directory removed");
    Fresh();
    fs::remove_all(copy_ + "/counts");
    std::ofstream(copy_ + "/counts") << "x";
    Judge("the store's directory replaced by a file");
    Fresh();
    fs::remove_all(copy_);
    std::ofstream(copy_) << "x";
    Judge("the task directory replaced by a file");
    return counts_;
  }

 private:
  // A fresh copy of the intact directory to damage.
  void Fresh() const {
    fs::remove_all(root_ + "/case");
    fs::create_directories(root_ + "/case");
    fs::copy(original_, copy_, fs::copy_options::recursive);
  }

  void Judge(const std::string& what) {
    std::string detail;
    const Outcome o = Reopen(copy_, detail);
    ++counts_[o];
    EXPECT_TRUE(o != Outcome::kSilentLoss && o != Outcome::kBlocked)
        << (rocksdb_ ? "rocksdb" : "logstore") << ", " << what << ": " << OutcomeName(o) << ": "
        << detail;
  }

  void Write(const std::string& path, const std::string& bytes) const {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }

  // Every byte of one file cut and flipped, every block zeroed, the file removed or replaced.
  void ProbeFile(const std::string& name) {
    const std::string path = copy_ + "/" + name;
    std::string bytes;
    {
      std::ifstream in(original_ + "/" + name, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    // RocksDB's OPTIONS and info LOG files are not read at open: sampled, not every byte.
    const bool sampled = name.starts_with("counts/OPTIONS") || name.starts_with("counts/LOG");
    const size_t stride = sampled ? 97 : 1;
    for (size_t at = 0; at < bytes.size(); at += stride) {
      Fresh();
      fs::resize_file(path, at);
      Judge(fmt::format("{} cut at {} of {}", name, at, bytes.size()));
      Fresh();
      std::string flipped = bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
      Write(path, flipped);
      Judge(fmt::format("{} byte {} flipped", name, at));
    }
    for (size_t block = 0; block < bytes.size(); block += 4096) {
      Fresh();
      std::string zeroed = bytes;
      std::fill(zeroed.begin() + static_cast<ptrdiff_t>(block),
                zeroed.begin() + static_cast<ptrdiff_t>(std::min(bytes.size(), block + 4096)),
                '\0');
      Write(path, zeroed);
      Judge(fmt::format("{} block {} zeroed", name, block / 4096));
    }
    Fresh();
    fs::remove(path);
    Judge(name + " removed");
    Fresh();
    fs::remove(path);
    fs::create_directory(path);
    Judge(name + " replaced by a directory");
    Fresh();
    fs::remove(path);
    EXPECT_EQ(mkfifo(path.c_str(), 0644), 0);
    Judge(name + " replaced by a FIFO");
  }

  const std::string root_;
  const bool rocksdb_;
  const TopicPartition changelog_{"app-counts-changelog", 1};
  std::string original_;  // the intact directory
  std::string copy_;      // the damaged copy
  std::map<Outcome, int> counts_;
};

class DamageProbeTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/restoresim_damage_probe_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string root_;
};

TEST_P(DamageProbeTest, EveryCaseEndsExactOrRebuiltNeverSilentLossNeverBlocked) {
  DamageProbe probe(root_, /*rocksdb=*/GetParam());
  const std::string original = root_ + "/original/0_1";
  probe.Build(original);
  {
    std::string detail;
    ASSERT_EQ(probe.Reopen(original, detail), Outcome::kExact) << "intact: " << detail;
  }
  const std::map<Outcome, int> counts = probe.Run(original);
  int total = 0;
  std::string summary;
  for (const auto& [outcome, n] : counts) {
    total += n;
    summary += fmt::format(" {} {};", OutcomeName(outcome), n);
  }
  std::printf("damage probe, %s: %d cases:%s\n", GetParam() ? "rocksdb" : "logstore", total,
              summary.c_str());
  RecordProperty("cases", total);
  EXPECT_GT(total, 100);
  EXPECT_EQ(counts.count(Outcome::kSilentLoss), 0u);
  EXPECT_EQ(counts.count(Outcome::kBlocked), 0u);
  if (!GetParam()) {
    EXPECT_EQ(counts.count(Outcome::kLossFoundAtRead), 0u) << "a LogStore reads all at open";
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, DamageProbeTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "RocksDb" : "LogStore"; });

}  // namespace
}  // namespace restoresim
