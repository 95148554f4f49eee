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

// A changelog written as exactly_once_v2 writes it: records in transactions, each ended by a
// commit or an abort marker (a marker takes an offset; aborted records stay in the log, and a
// read_committed consumer never returns them).
struct ChangelogTransaction {
  std::vector<KeyValueWrite> records;
  bool commit = true;
};

struct TransactionSpec {
  // Records per committed transaction. Kafka Streams commits every 100 ms under EOS, one
  // transaction per commit; 1,000 is what a task writing 10,000 changelog records/s puts in
  // one, and one poll's worth of input at max.poll.records = 1000.
  int64_t records_per_transaction = 1000;
  // Aborted transactions as a share of all transactions, in [0, 1): added to the committed
  // ones, so the committed records (and the fold) do not depend on it.
  double aborted_share = 0.1;

  // How many aborted transactions go with `committed` committed ones: the share's, rounded,
  // and at least one when the share is above 0.
  int64_t AbortedFor(int64_t committed) const;
};

// `committed` (consumed) cut into committed transactions of spec.records_per_transaction
// records, in order, with AbortedFor(committed transactions) aborted transactions spread
// evenly among them, the last one after the last committed transaction (a changelog whose tail
// is aborted data and a marker must still complete). An aborted transaction rewrites the keys
// of the committed transaction before it, every one to something else: a value's bytes XOR
// 0x5a (same size), every 16th a tombstone instead, a tombstone or an empty value "aborted";
// a store that applied it would differ from the fold.
std::vector<ChangelogTransaction> TransactionalChangelog(std::vector<KeyValueWrite> committed,
                                                         const TransactionSpec& spec);

// The digest of the fold of the committed transactions' records only (what a read_committed
// restoration must end with).
StoreDigest DigestOfCommitted(const std::vector<ChangelogTransaction>& transactions);

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_CHANGELOG_DATA_H_
