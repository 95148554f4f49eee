#include "bench/changelog_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/util/check.h"
#include "core/util/prng.h"

namespace restoresim::bench {
namespace {

uint64_t Mix(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t state = a * 0x9E3779B97F4A7C15ull ^ b * 0xC2B2AE3D27D4EB4Full ^ c;
  return SplitMix64(state);
}

void FillFrom(uint64_t x, std::string& out, size_t bytes) {
  out.resize(bytes);
  for (size_t i = 0; i < bytes; ++i) {
    if (i % 8 == 0 && i > 0) x = SplitMix64(x);
    out[i] = static_cast<char>((x >> (56 - 8 * (i % 8))) & 0xff);  // big-endian
  }
}

}  // namespace

int64_t ChangelogSpec::RecordsOf(int32_t partition) const {
  return records / partitions + (partition < records % partitions ? 1 : 0);
}

int64_t ChangelogSpec::KeySpaceOf(int32_t partition) const {
  const int64_t space = key_space > 0 ? key_space : records;
  return std::max<int64_t>(1, space / partitions + (partition < space % partitions ? 1 : 0));
}

std::string ChangelogSpec::Describe() const {
  return fmt::format("{} records in {} partition(s), {}-byte keys, {}-byte values, key space {}, "
                     "{}‰ tombstones, seed {}",
                     records, partitions, key_bytes, value_bytes,
                     key_space > 0 ? key_space : records, tombstone_per_mille, seed);
}

std::vector<KeyValueWrite> GenerateChangelog(const ChangelogSpec& spec, int32_t partition) {
  const int64_t n = spec.RecordsOf(partition);
  const int64_t space = spec.KeySpaceOf(partition);
  Prng prng(Mix(spec.seed, static_cast<uint64_t>(partition), 0x5eed));
  std::vector<KeyValueWrite> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t id = i < space ? static_cast<uint64_t>(i) : prng.Uniform(space);
    KeyValueWrite& w = out[static_cast<size_t>(i)];
    FillFrom(Mix(spec.seed, static_cast<uint64_t>(partition) + 1, id), w.key, spec.key_bytes);
    if (!prng.PerMille(spec.tombstone_per_mille)) {
      w.value.emplace();
      FillFrom(Mix(spec.seed ^ 0xfeed, static_cast<uint64_t>(partition), static_cast<uint64_t>(i)),
               *w.value, spec.value_bytes);
    }
  }
  return out;
}

void StoreDigest::Add(std::string_view key, std::string_view value) {
  auto byte = [this](uint8_t b) {
    hash ^= b;
    hash *= 0x100000001b3ull;
  };
  auto length = [&](size_t n) {
    for (int i = 0; i < 4; ++i) byte(static_cast<uint8_t>((n >> (8 * i)) & 0xff));
  };
  length(key.size());
  for (char c : key) byte(static_cast<uint8_t>(c));
  length(value.size());
  for (char c : value) byte(static_cast<uint8_t>(c));
  ++entries;
}

std::string StoreDigest::ToString() const {
  return fmt::format("{} entries, fnv1a {:016x}", entries, hash);
}

namespace {

// The digest of the fold of the records pointed to, in offset order.
StoreDigest DigestOfFoldOf(std::vector<const KeyValueWrite*> records) {
  // By key, and for one key by offset: the last of each run of equal keys is its final write.
  std::stable_sort(records.begin(), records.end(), [](const KeyValueWrite* a,
                                                      const KeyValueWrite* b) {
    return a->key < b->key;  // std::string compares bytes as unsigned char
  });
  StoreDigest digest;
  for (size_t i = 0; i < records.size(); ++i) {
    const KeyValueWrite& w = *records[i];
    if (i + 1 < records.size() && records[i + 1]->key == w.key) continue;
    if (w.value.has_value()) digest.Add(w.key, *w.value);
  }
  return digest;
}

}  // namespace

StoreDigest DigestOfFold(const std::vector<KeyValueWrite>& records) {
  std::vector<const KeyValueWrite*> pointers;
  pointers.reserve(records.size());
  for (const KeyValueWrite& w : records) pointers.push_back(&w);
  return DigestOfFoldOf(std::move(pointers));
}

int64_t TransactionSpec::AbortedFor(int64_t committed) const {
  if (aborted_share <= 0 || committed <= 0) return 0;
  // At least one: a small changelog still has aborted data to skip (and an aborted tail).
  return std::max<int64_t>(
      1, std::llround(static_cast<double>(committed) * aborted_share / (1 - aborted_share)));
}

std::vector<ChangelogTransaction> TransactionalChangelog(std::vector<KeyValueWrite> committed,
                                                         const TransactionSpec& spec) {
  RS_CHECK(spec.records_per_transaction > 0);
  RS_CHECK(spec.aborted_share >= 0 && spec.aborted_share < 1);
  const int64_t n = static_cast<int64_t>(committed.size());
  const int64_t size = spec.records_per_transaction;
  const int64_t commits = (n + size - 1) / size;
  const int64_t aborts = spec.AbortedFor(commits);
  std::vector<ChangelogTransaction> out;
  out.reserve(static_cast<size_t>(commits + aborts));
  int64_t aborted = 0;
  for (int64_t c = 0; c < commits; ++c) {
    const size_t last_commit = out.size();
    const auto first = committed.begin() + c * size;
    out.emplace_back().records.assign(std::make_move_iterator(first),
                       std::make_move_iterator(first + std::min(size, n - c * size)));
    // After committed transaction c, as many aborted ones as bring the count to
    // floor((c + 1) * aborts / commits): spread evenly, and (floor) one after the last commit.
    const int64_t due = (c + 1) * aborts / commits;
    for (; aborted < due; ++aborted) {
      ChangelogTransaction abort{.records = out[last_commit].records, .commit = false};
      for (size_t i = 0; i < abort.records.size(); ++i) {
        std::optional<std::string>& value = abort.records[i].value;
        if (i % 16 == 15 && value) {
          value.reset();
        } else if (value && !value->empty()) {
          for (char& b : *value) b = static_cast<char>(b ^ 0x5a);
        } else {
          value = "aborted";  // an empty value, or a committed tombstone brought back to life
        }
      }
      out.push_back(std::move(abort));
    }
  }
  RS_CHECK_EQ(aborted, aborts);
  return out;
}

StoreDigest DigestOfCommitted(const std::vector<ChangelogTransaction>& transactions) {
  std::vector<const KeyValueWrite*> committed;
  for (const ChangelogTransaction& txn : transactions) {
    if (!txn.commit) continue;
    for (const KeyValueWrite& w : txn.records) committed.push_back(&w);
  }
  return DigestOfFoldOf(std::move(committed));
}

}  // namespace restoresim::bench
