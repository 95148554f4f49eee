// Where the restore benchmark's changelogs live and how they are read: a Backend creates and
// fills topics, answers end offsets, hands the runtime its Transport, and runs the
// raw-consumption limit — reading partitions as fast as the client library allows, with no
// runtime in between.
//   fake   the in-memory FakeBroker on the system clock (no broker process; the limit polls the
//          fake's restore consumer);
//   kafka  a Kafka cluster through librdkafka (the runtime's RdKafkaTransport; the limit calls
//          librdkafka's batch API directly, with the restore consumer's settings).
//
// Thread-safety: Produce, ProduceTransactions, CreateTopic and EndOffset from one thread at a
// time; RawConsume may run on another thread (it uses clients of its own).
#ifndef RESTORESIM_BENCH_BACKEND_H_
#define RESTORESIM_BENCH_BACKEND_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/changelog_data.h"
#include "core/state/key_value_store.h"
#include "core/transport/transport.h"

namespace restoresim::bench {

// A record as the client library holds it (valid during the sink call only).
struct RawRecord {
  std::string_view key;
  std::optional<std::string_view> value;  // nullopt: a tombstone
};
// Called with consecutive records of one partition, in offset order.
using RawSink = std::function<void(int32_t partition, const std::vector<RawRecord>& records)>;

struct RawConsumeResult {
  int64_t records = 0;
  int64_t bytes = 0;  // keys and values
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string Describe() const = 0;
  virtual Transport& transport() = 0;
  // The cluster's address for other clients (Kafka Streams); empty for the fake.
  virtual std::string bootstrap_servers() const { return {}; }

  virtual absl::Status CreateTopic(const std::string& topic, int32_t partitions) = 0;
  // Appends `records` to one partition in order and waits until every one is acknowledged.
  virtual absl::Status Produce(const TopicPartition& partition,
                               const std::vector<KeyValueWrite>& records) = 0;
  // Appends `transactions` to one partition in order with a transactional producer of its own
  // (a fresh transactional.id), each committed or aborted after its records are in the log:
  // the log then holds every record, aborted ones included, and a marker after each.
  virtual absl::Status ProduceTransactions(
      const TopicPartition& partition, const std::vector<ChangelogTransaction>& transactions) = 0;
  virtual absl::StatusOr<int64_t> EndOffset(const TopicPartition& partition) = 0;
  // Reads partitions 0..partitions-1 of `topic` from offset 0 to their end offsets.
  virtual absl::StatusOr<RawConsumeResult> RawConsume(const std::string& topic,
                                                      int32_t partitions,
                                                      const RawSink& sink) = 0;
};

std::unique_ptr<Backend> NewFakeBackend();
// REQUIRES: built with librdkafka (HaveKafkaBackend()).
absl::StatusOr<std::unique_ptr<Backend>> NewKafkaBackend(const std::string& bootstrap_servers);
bool HaveKafkaBackend();

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_BACKEND_H_
