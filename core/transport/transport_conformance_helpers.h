// Helpers of the transport conformance suite (transport_conformance.h): creating topics,
// producing, polling until data arrives while checking every poll, recording rebalances.
// Like the suite, they use only the port.
//
// Thread-safety: each helper is used by one thread at a time.
#ifndef RESTORESIM_CORE_TRANSPORT_TRANSPORT_CONFORMANCE_HELPERS_H_
#define RESTORESIM_CORE_TRANSPORT_TRANSPORT_CONFORMANCE_HELPERS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/transport/transport.h"
#include "core/transport/transport_conformance.h"

namespace restoresim {

// How gtest prints a partition in failure messages ("topic-3").
void PrintTo(const TopicPartition& partition, std::ostream* os);

namespace conformance {

struct TestRecord {
  std::string key;
  std::optional<std::string> value;  // nullopt: a tombstone
  int64_t timestamp_ms = 0;
};

// n records "<prefix>-key-<i>" -> "<prefix>-value-<i>"; every tombstone_every-th (i % k ==
// k - 1) is a tombstone when tombstone_every > 0. Timestamps 1000 + i.
std::vector<TestRecord> MakeRecords(const std::string& prefix, int n, int tombstone_every = 0);

// Creates the topic (a retried create that finds it existing is a success) and waits until
// the backend reports its partition count. Returns false (after a test failure) if it cannot.
bool CreateTopic(TransportTestEnv& env, Admin& admin, const std::string& topic, int32_t partitions);

// Sends `records` to `partition` and flushes; returns the flushed last offsets (empty after a
// test failure).
std::map<TopicPartition, int64_t> Produce(TransportTestEnv& env, Producer& producer,
                                          const TopicPartition& partition,
                                          const std::vector<TestRecord>& records);

// What a poll loop saw.
struct Polled {
  std::map<TopicPartition, std::vector<ConsumerRecord>> records;
  std::vector<TopicPartition> out_of_range;  // sorted, each once
  int polls = 0;
  int retryable_errors = 0;
  bool failed = false;  // a non-retryable error (already reported as a test failure)
  size_t total() const;
};

using PollFn = std::function<absl::StatusOr<PollResult>(TimeNs timeout_ns)>;

// Polls until done(polled) holds or poll_attempts_max polls were made. Checks every poll: at
// most max_poll_records records, partitions in order, each partition's records consecutive and
// continuing where its previous batch ended. Retryable errors are counted and polled through.
Polled PollUntil(TransportTestEnv& env, const PollFn& poll, int32_t max_poll_records,
                 const std::function<bool(const Polled&)>& done);

// Polls until `want` records in all have arrived.
Polled PollRecords(TransportTestEnv& env, const PollFn& poll, int32_t max_poll_records,
                   size_t want);

PollFn PollOf(RestoreConsumer& consumer);
PollFn PollOf(MainConsumer& consumer);

// Records the rebalance callbacks of one consumer. Written by the polling thread only; read it
// after that thread is done.
class RecordingListener final : public RebalanceListener {
 public:
  struct Event {
    enum class Kind { kRevoked, kAssigned, kLost };
    Kind kind;
    std::vector<TopicPartition> partitions;
  };

  void OnPartitionsRevoked(const std::vector<TopicPartition>& partitions) override;
  void OnPartitionsAssigned(const Assignment& assignment) override;
  void OnPartitionsLost(const std::vector<TopicPartition>& partitions) override;

  const std::vector<Event>& events() const { return events_; }
  // "assigned[t-0,t-1] revoked[t-1] ..." for failure messages.
  std::string ToString() const;

 private:
  std::vector<Event> events_;
};

// *result, or `fallback` after a test failure that shows the error.
int64_t ValueOr(const absl::StatusOr<int64_t>& result, int64_t fallback = -1);

std::vector<TopicPartition> PartitionsOf(const std::string& topic, int32_t count);
std::string ToString(const std::vector<TopicPartition>& partitions);

}  // namespace conformance
}  // namespace restoresim

#endif  // RESTORESIM_CORE_TRANSPORT_TRANSPORT_CONFORMANCE_HELPERS_H_
