// The bulk path of restoration (RocksDbStore on SstBulkLoader) ends with exactly the contents
// the WriteBatch path ends with: random changelogs over many key distributions (few keys and
// many repeats, unique binary keys, long shared prefixes, keys that are prefixes of each other,
// the empty key, NUL and 0xff bytes, ascending and descending runs), tombstone shares from none
// to most, restored into empty stores and on top of existing data (flushed files and an
// unflushed memtable), in chunks small enough that every restoration spans many files, with
// reads and flushes in the middle. Both stores, and a plain fold of the changelog, must agree.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "core/state/rocksdb_store.h"
#include "core/util/prng.h"

namespace restoresim {
namespace {

enum class Keys { kFew, kUniqueBinary, kSharedPrefix, kPrefixesOfEachOther, kAscending,
                  kDescending, kNastyBytes };
constexpr Keys kAllKeys[] = {Keys::kFew, Keys::kUniqueBinary, Keys::kSharedPrefix,
                             Keys::kPrefixesOfEachOther, Keys::kAscending, Keys::kDescending,
                             Keys::kNastyBytes};

std::string BinaryKey(uint64_t x, size_t bytes) {
  std::string key(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) {
    uint64_t state = x + i;
    key[i] = static_cast<char>(SplitMix64(state) & 0xff);
  }
  return key;
}

std::string MakeKey(Keys kind, int64_t i, int64_t n, Prng& prng) {
  switch (kind) {
    case Keys::kFew:
      return "k" + std::to_string(prng.Uniform(7));
    case Keys::kUniqueBinary:
      return BinaryKey(static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull, 16);
    case Keys::kSharedPrefix:  // as "user-00000123": the first 9+ bytes are the same
      return fmt::format("tenant-a/user-{:010d}", prng.Uniform(static_cast<uint64_t>(n)));
    case Keys::kPrefixesOfEachOther:  // "", "a", "aa", ... and "ab", "aab"
      return std::string(prng.Uniform(12), 'a') + (prng.OneIn(2) ? "" : "b");
    case Keys::kAscending:
      return fmt::format("{:08d}", i / 2);  // each key twice in a row
    case Keys::kDescending:
      return fmt::format("{:08d}", n - i / 3);
    case Keys::kNastyBytes: {
      std::string key = BinaryKey(prng.Uniform(50), prng.Uniform(10));
      for (char& c : key) c = prng.OneIn(2) ? '\0' : '\xff';
      return key;
    }
  }
  return {};
}

struct Changelog {
  std::vector<KeyValueWrite> writes;
};

Changelog MakeChangelog(Keys kind, int64_t n, uint32_t tombstone_per_mille, Prng& prng) {
  Changelog log;
  for (int64_t i = 0; i < n; ++i) {
    KeyValueWrite w{MakeKey(kind, i, n, prng), std::nullopt};
    if (!prng.PerMille(tombstone_per_mille)) {
      w.value = "v" + std::to_string(i) + std::string(prng.Uniform(40), 'x');
      if (prng.OneIn(50)) w.value = "";  // an empty value is a value, not a tombstone
    }
    log.writes.push_back(std::move(w));
  }
  return log;
}

void Fold(const std::vector<KeyValueWrite>& writes, std::map<std::string, std::string>& model) {
  for (const KeyValueWrite& w : writes) {
    if (w.value) {
      model[w.key] = *w.value;
    } else {
      model.erase(w.key);
    }
  }
}

class BulkRestoreEquivalenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/restoresim_bulk_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<RocksDbStore> Open(const std::string& name, RocksDbStoreOptions options) {
    auto store = RocksDbStore::Open(dir_ + "/" + name, name, options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  std::string dir_;
};

// Restores `log` into `store` as the changelog reader does: batches of random sizes, with
// reads and flushes between some of them.
void Restore(RocksDbStore& store, const Changelog& log, Prng& prng) {
  store.BeginRestore(static_cast<int64_t>(log.writes.size()));
  size_t at = 0;
  while (at < log.writes.size()) {
    const size_t size = std::min<size_t>(1 + prng.Uniform(300), log.writes.size() - at);
    std::vector<KeyValueWrite> batch(log.writes.begin() + at, log.writes.begin() + at + size);
    ASSERT_TRUE(store.RestoreBatch(std::move(batch)).ok());
    at += size;
    if (prng.OneIn(40)) {
      ASSERT_TRUE(store.Flush().ok());  // a periodic checkpoint in the middle
    }
    if (prng.OneIn(40)) {
      ASSERT_TRUE(store.Get(log.writes[at - 1].key).ok());  // a read drains the buffer
    }
  }
  ASSERT_TRUE(store.EndRestore().ok());
}

TEST_F(BulkRestoreEquivalenceTest, SameContentsAsWriteBatchesForRandomChangelogs) {
  constexpr uint32_t kTombstones[] = {0, 100, 500, 900};
  int64_t files_total = 0;
  int64_t background_total = 0;
  for (uint64_t seed = 0; seed < 56; ++seed) {
    Prng prng(seed);
    const Keys kind = kAllKeys[seed % std::size(kAllKeys)];
    const uint32_t tombstones = kTombstones[(seed / std::size(kAllKeys)) % 4];
    const bool existing = seed % 2 == 1;
    SCOPED_TRACE(fmt::format("seed {} keys {} tombstones {}‰ existing {}", seed,
                             static_cast<int>(kind), tombstones, existing));
    RocksDbStoreOptions bulk{.bulk_restore = RocksDbStoreOptions::BulkRestore::kAlways,
                             .bulk_chunk_bytes_max = 200 + prng.Uniform(8000),
                             .bulk_chunk_bytes_min = seed % 3 == 0 ? 0 : 100 * (seed % 7 + 1),
                             .bulk_pipelined = seed % 4 < 3};  // the writer thread, mostly
    RocksDbStoreOptions batches{.bulk_restore = RocksDbStoreOptions::BulkRestore::kOff};
    auto a = Open(fmt::format("bulk-{}", seed), bulk);
    auto b = Open(fmt::format("batch-{}", seed), batches);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    std::map<std::string, std::string> model;
    if (existing) {  // data from before a checkpoint: flushed files, then an unflushed memtable
      const Changelog before = MakeChangelog(kind, 1 + prng.Uniform(400), 200, prng);
      const size_t half = before.writes.size() / 2;
      const std::vector<KeyValueWrite> first(before.writes.begin(), before.writes.begin() + half);
      const std::vector<KeyValueWrite> rest(before.writes.begin() + half, before.writes.end());
      for (RocksDbStore* s : {a.get(), b.get()}) {
        ASSERT_TRUE(s->ApplyBatch(first).ok());
        ASSERT_TRUE(s->Flush().ok());
        ASSERT_TRUE(s->ApplyBatch(rest).ok());
      }
      Fold(before.writes, model);
    }
    const Changelog log = MakeChangelog(kind, 1 + prng.Uniform(3000), tombstones, prng);
    Prng batching = prng.Fork("batching");
    Prng same = batching;  // both stores see the same batches, reads and flushes
    Restore(*a, log, batching);
    Restore(*b, log, same);
    Fold(log.writes, model);
    EXPECT_EQ(*a->ReadAll(), model);
    EXPECT_EQ(*b->ReadAll(), model);
    EXPECT_EQ(a->stats().restores_bulk, 1);
    EXPECT_EQ(b->stats().restores_bulk, 0);
    EXPECT_EQ(a->stats().bulk.records_in, static_cast<int64_t>(log.writes.size()));
    files_total += a->stats().bulk.files;
    background_total += a->stats().bulk.background;
    ASSERT_TRUE(a->Close().ok());
    a = Open(fmt::format("bulk-{}", seed), bulk);  // what was ingested survives a reopen
    EXPECT_EQ(*a->ReadAll(), model);
  }
  EXPECT_GT(files_total, 56 * 3) << "the chunks were meant to span many files";
  EXPECT_GT(background_total, 42) << "most chunks were meant for the writer thread";
}

// Chunks ramp up from the smallest (the writer thread starts early) and halve towards the
// expected end (the last chunk, written alone after the last fetch, is small); the contents
// are the same whatever the cuts.
TEST_F(BulkRestoreEquivalenceTest, ChunksRampUpAndHalveTowardsTheExpectedEnd) {
  constexpr size_t kMin = 1 << 10, kMax = 16 << 10, kBatch = 10;  // 10 records of 100 bytes
  constexpr int64_t kRecords = 3000;
  std::map<std::string, std::string> model;
  std::vector<KeyValueWrite> all;
  for (int64_t i = 0; i < kRecords; ++i) {
    all.push_back({fmt::format("k{:08}-", i * 7919 % kRecords), std::string(90, 'a' + i % 26)});
    model[all.back().key] = *all.back().value;
  }
  for (const size_t min : {kMin, kMax}) {
    SCOPED_TRACE(fmt::format("min {}", min));
    auto store = Open(fmt::format("ramp-{}", min),
                      RocksDbStoreOptions{.bulk_restore = RocksDbStoreOptions::BulkRestore::kAlways,
                                          .bulk_chunk_bytes_max = kMax,
                                          .bulk_chunk_bytes_min = min});
    ASSERT_NE(store, nullptr);
    store->BeginRestore(kRecords);
    for (size_t at = 0; at < all.size(); at += kBatch) {
      ASSERT_TRUE(store->RestoreBatch({all.begin() + at, all.begin() + at + kBatch}).ok());
    }
    ASSERT_TRUE(store->EndRestore().ok());
    EXPECT_EQ(*store->ReadAll(), model);
    const std::vector<int64_t> chunks = store->stats().last_chunks_bytes;
    ASSERT_GE(chunks.size(), 3u);
    EXPECT_EQ(std::accumulate(chunks.begin(), chunks.end(), int64_t{0}), kRecords * 100);
    const int64_t batch_bytes = kBatch * 100;
    EXPECT_LE(*std::max_element(chunks.begin(), chunks.end()), kMax + batch_bytes);
    if (min == kMax) {  // no ramp: every chunk but the last full
      for (size_t i = 0; i + 1 < chunks.size(); ++i) EXPECT_GE(chunks[i], kMax) << i;
      continue;
    }
    EXPECT_LE(chunks.front(), kMin + batch_bytes);
    EXPECT_LT(chunks[0], chunks[1]);
    EXPECT_LT(chunks[1], chunks[2]);
    EXPECT_GE(*std::max_element(chunks.begin(), chunks.end()), kMax);
    EXPECT_LE(chunks.back(), 2 * kMin + batch_bytes) << "the last chunk is small";
    EXPECT_GT(chunks[chunks.size() - 2], chunks.back());
  }
}

// A chunk the writer thread could not write is written again, before any later chunk, by the
// next one's hand-over; while that fails too, the batch that would start the next chunk is
// refused whole; nothing restored is lost or reordered.
TEST_F(BulkRestoreEquivalenceTest, AChunkTheWriterThreadFailedIsWrittenAgainInOrder) {
  RocksDbStoreOptions bulk{.bulk_restore = RocksDbStoreOptions::BulkRestore::kAlways,
                           .bulk_chunk_bytes_max = 1};  // every batch is a chunk of its own
  auto store = Open("s", bulk);
  ASSERT_NE(store, nullptr);
  const std::string scratch = dir_ + "/s/bulk-restore";
  std::ofstream(scratch) << "a file where the chunk files' directory goes";
  store->BeginRestore(100);
  ASSERT_TRUE(store->RestoreBatch({{"a", "1"}, {"z", "1"}}).ok());
  ASSERT_TRUE(store->RestoreBatch({{"a", "2"}, {"b", "1"}}).ok());  // {a, z} to the thread: fails
  const absl::Status refused = store->RestoreBatch({{"c", "1"}});
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnavailable) << refused;
  EXPECT_EQ(store->stats().bulk.files, 0);
  std::filesystem::remove(scratch);
  ASSERT_TRUE(store->RestoreBatch({{"c", "1"}}).ok());  // {a, z} again, then {a:2, b:1} handed
  ASSERT_TRUE(store->EndRestore().ok());
  EXPECT_EQ(*store->ReadAll(),
            (std::map<std::string, std::string>{
                {"a", "2"}, {"b", "1"}, {"c", "1"}, {"z", "1"}}));
  EXPECT_EQ(store->stats().bulk.files, 3);
  EXPECT_EQ(store->stats().bulk.background, 1) << "{a:2, b:1}; {a, z} was written again here";
}

// The newest OPTIONS file RocksDB wrote into `dir` (it writes one at open and at each
// SetOptions): the default family's disable_auto_compactions there.
std::string AutoCompactionsOff(const std::string& dir) {
  std::string newest;
  uint64_t newest_number = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("OPTIONS-", 0) != 0 || name.size() <= 8 ||
        name.find('.') != std::string::npos) {
      continue;
    }
    const uint64_t number = std::stoull(name.substr(8));
    if (newest.empty() || number > newest_number) {
      newest = entry.path().string();
      newest_number = number;
    }
  }
  std::ifstream in(newest);
  std::string line;
  bool in_default = false;
  while (std::getline(in, line)) {
    if (line.rfind("[CFOptions ", 0) == 0) {
      in_default = line.find("\"default\"") != std::string::npos;
    }
    const size_t at = line.find("disable_auto_compactions=");
    if (in_default && at != std::string::npos) return line.substr(at + 25);
  }
  return "not found in " + newest;
}

// A bulk restoration compacts its overlapping chunk files once, after it: compactions are off
// from BeginRestore until the restoration ends, and on again afterwards.
TEST_F(BulkRestoreEquivalenceTest, CompactionsWaitForTheEndOfABulkRestoration) {
  RocksDbStoreOptions bulk{.bulk_restore = RocksDbStoreOptions::BulkRestore::kAlways,
                           .bulk_chunk_bytes_max = 1};
  auto store = Open("s", bulk);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(AutoCompactionsOff(dir_ + "/s"), "false");
  store->BeginRestore(100);
  EXPECT_EQ(AutoCompactionsOff(dir_ + "/s"), "true");
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(store->RestoreBatch({{fmt::format("k{}", i % 3), "v"}}).ok());
  }
  ASSERT_TRUE(store->Flush().ok());  // a checkpoint in the middle: still restoring
  EXPECT_EQ(AutoCompactionsOff(dir_ + "/s"), "true");
  ASSERT_TRUE(store->EndRestore().ok());
  EXPECT_EQ(AutoCompactionsOff(dir_ + "/s"), "false");
  EXPECT_EQ(store->ReadAll()->size(), 3u);
}

TEST_F(BulkRestoreEquivalenceTest, LaterOffsetWinsAndTombstonesDeleteAcrossFiles) {
  RocksDbStoreOptions bulk{.bulk_restore = RocksDbStoreOptions::BulkRestore::kAlways,
                           .bulk_chunk_bytes_max = 1};  // every batch is a chunk of its own
  auto store = Open("s", bulk);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put("old", "from before").ok());  // in the memtable, not flushed
  store->BeginRestore(100);
  auto batch = [&](std::vector<KeyValueWrite> writes) {
    ASSERT_TRUE(store->RestoreBatch(std::move(writes)).ok());
  };
  batch({{"a", "1"}, {"b", "1"}, {"a", "2"}});
  batch({{"b", std::nullopt}, {"old", std::nullopt}, {"c", "1"}});
  batch({{"c", "2"}, {"c", std::nullopt}, {"c", "3"}, {"b", "back"}});
  batch({{"a", std::nullopt}});
  ASSERT_TRUE(store->EndRestore().ok());
  EXPECT_EQ(*store->ReadAll(),
            (std::map<std::string, std::string>{{"b", "back"}, {"c", "3"}}));
  EXPECT_EQ(store->stats().bulk.files, 4);
  EXPECT_FALSE(store->bulk_restoring());
}

TEST_F(BulkRestoreEquivalenceTest, TombstonesAreDroppedOnlyInTheFirstChunkOfAnEmptyStore) {
  RocksDbStoreOptions bulk{.bulk_restore = RocksDbStoreOptions::BulkRestore::kAlways,
                           .bulk_chunk_bytes_max = 1};
  auto store = Open("s", bulk);
  ASSERT_NE(store, nullptr);
  store->BeginRestore(10);
  ASSERT_TRUE(store->RestoreBatch({{"x", std::nullopt}, {"y", "1"}}).ok());
  ASSERT_TRUE(store->RestoreBatch({{"y", std::nullopt}}).ok());
  ASSERT_TRUE(store->EndRestore().ok());
  EXPECT_TRUE(store->ReadAll()->empty());
  EXPECT_EQ(store->stats().bulk.tombstones_dropped, 1) << "x in the first chunk, not y later";
}

TEST_F(BulkRestoreEquivalenceTest, AutoTakesTheBulkPathOnlyForLargeRestorations) {
  auto store = Open("s", RocksDbStoreOptions{.bulk_min_records = 1000});
  ASSERT_NE(store, nullptr);
  store->BeginRestore(999);
  ASSERT_TRUE(store->RestoreBatch({{"a", "1"}}).ok());
  EXPECT_FALSE(store->bulk_restoring());
  ASSERT_TRUE(store->EndRestore().ok());
  store->BeginRestore(1000);
  EXPECT_TRUE(store->bulk_restoring());
  ASSERT_TRUE(store->RestoreBatch({{"b", "2"}}).ok());
  // A processing write ends the bulk path, the buffered record goes in first.
  ASSERT_TRUE(store->Put("b", "3").ok());
  EXPECT_FALSE(store->bulk_restoring());
  EXPECT_EQ(*store->Get("b"), std::optional<std::string>("3"));
  EXPECT_EQ(store->stats().restores_batch, 1);
  EXPECT_EQ(store->stats().restores_bulk, 1);
}

TEST_F(BulkRestoreEquivalenceTest, CloseKeepsBufferedRecordsAndAClosedStoreRefuses) {
  auto store = Open("s", RocksDbStoreOptions{.bulk_restore =
                                                 RocksDbStoreOptions::BulkRestore::kAlways});
  ASSERT_NE(store, nullptr);
  store->BeginRestore(10);
  ASSERT_TRUE(store->RestoreBatch({{"k", "v"}}).ok());
  ASSERT_TRUE(store->Close().ok());  // no EndRestore: a restoration that stopped early
  EXPECT_EQ(store->RestoreBatch({{"k", "w"}}).code(), absl::StatusCode::kFailedPrecondition);
  store = Open("s", {});
  EXPECT_EQ(*store->ReadAll(), (std::map<std::string, std::string>{{"k", "v"}}));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/s/bulk-restore/chunk-0.sst"))
      << "the chunk file was moved into the DB, not left behind";
}

}  // namespace
}  // namespace restoresim
