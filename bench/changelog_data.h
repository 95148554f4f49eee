// The restore benchmark's changelogs, generated from a seed so that every system under test
// (our runtime, the raw limits, Kafka Streams) restores byte-identical records, and the
// contents every store must end with: the fold of the changelog (the last write of each key
// wins; a tombstone removes the key).
//
// Records of partition p, record i (0-based within the partition):
//   key    the key id is i while i < key space (every key once, first), then uniform in the
//          key space (repeats); the key bytes are a 64-bit mix of (seed, p, id), big-endian,
//          repeated to key_bytes: random-looking, as hashed ids are, and distinct for distinct
//          ids when key_bytes >= 8;
//   value  value_bytes bytes derived from (seed, p, i); a tombstone instead with probability
//          tombstone_per_mille / 1000.
//
// Thread-safety: pure functions and values.
#ifndef RESTORESIM_BENCH_CHANGELOG_DATA_H_
#define RESTORESIM_BENCH_CHANGELOG_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/state/key_value_store.h"

namespace restoresim::bench {

struct ChangelogSpec {
  int64_t records = 1'000'000;  // over all partitions
  int32_t partitions = 1;
  uint32_t key_bytes = 16;
  uint32_t value_bytes = 100;
  int64_t key_space = 0;  // distinct keys over all partitions; 0: as many as records
  uint32_t tombstone_per_mille = 0;
  uint64_t seed = 1;

  int64_t RecordsOf(int32_t partition) const;
  int64_t KeySpaceOf(int32_t partition) const;
  std::string Describe() const;
};

// The records of one partition, in offset order.
std::vector<KeyValueWrite> GenerateChangelog(const ChangelogSpec& spec, int32_t partition);

// A store's contents summarised: entries and a 64-bit FNV-1a hash over every entry in key
// order (u32 key length, key, u32 value length, value; little-endian lengths). The Kafka
// Streams peer (tools/kafka/streams-peer) computes the same hash over its store.
struct StoreDigest {
  int64_t entries = 0;
  uint64_t hash = 0xcbf29ce484222325ull;

  void Add(std::string_view key, std::string_view value);
  bool operator==(const StoreDigest&) const = default;
  std::string ToString() const;  // "<entries> entries, fnv1a <16 hex digits>"
};

// The digest of the fold of `records` (the contents a store restored from them must hold).
StoreDigest DigestOfFold(const std::vector<KeyValueWrite>& records);

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_CHANGELOG_DATA_H_
