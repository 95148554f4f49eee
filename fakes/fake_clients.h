// The fake broker's clients: the four client kinds of the transport port, each a thin object
// over FakeBroker. They implement the port's semantics (transport.h) and add nothing a real
// client would not do; where Kafka leaves a choice the fake makes the strict one:
//   - a call after Close is kFailedPrecondition (Close itself is idempotent);
//   - a consumer built with max_poll_records < 1 answers every call kInvalidArgument;
//   - MainConsumer::CommitSync of a partition the member does not own, or by a member that was
//     lost or left, is kFailedPrecondition ("not owner", like CommitFailedException);
//   - MainConsumer::Close leaves the group without rebalance callbacks;
//   - MainConsumer::SetSubscriptionUserData takes effect at once (the next assignor run of
//     the group reads it), EnforceRebalance starts a generation at once (fake_group.h);
//   - Producer::Close delivers what is still queued (as Kafka's close() does), unless fenced;
//   - the transactional producer is FakeTransactionalProducer (fake_transactional_producer.h);
//   - a main consumer with GroupProtocol::kStreams is FakeStreamsGroupConsumer, a streams-group
//     member of the broker's StreamsGroupCoordinator (fake_streams_group.h).
//
// Thread-safety: as the port says, one thread at a time per client object.
#ifndef RESTORESIM_FAKES_FAKE_CLIENTS_H_
#define RESTORESIM_FAKES_FAKE_CLIENTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/transport/streams_group_driver.h"
#include "core/transport/transport.h"
#include "fakes/fake_broker.h"
#include "fakes/fake_fetcher.h"
#include "fakes/fake_group.h"

namespace restoresim::fakes {

class FakeRestoreConsumer final : public RestoreConsumer {
 public:
  FakeRestoreConsumer(FakeBroker& broker, const ConsumerConfig& config);
  ~FakeRestoreConsumer() override;

  absl::Status Assign(const std::vector<TopicPartition>& partitions) override;
  absl::Status Unassign() override;
  std::vector<TopicPartition> Assignment() const override;
  absl::Status Seek(const TopicPartition& partition, int64_t offset) override;
  absl::Status SeekToBeginning(const std::vector<TopicPartition>& partitions) override;
  absl::Status SeekToEnd(const std::vector<TopicPartition>& partitions) override;
  absl::StatusOr<int64_t> Position(const TopicPartition& partition) override;
  absl::Status Pause(const std::vector<TopicPartition>& partitions) override;
  absl::Status Resume(const std::vector<TopicPartition>& partitions) override;
  std::vector<TopicPartition> Paused() const override;
  absl::StatusOr<PollResult> Poll(TimeNs timeout_ns) override;
  void Close() override;

 private:
  // The transport point of `call`, then kFailedPrecondition after Close.
  absl::Status Enter(std::string_view call) const;

  FakeBroker& broker_;
  const std::string client_id_;
  const absl::Status config_status_;
  Fetcher fetcher_;
  bool closed_ = false;
};

class FakeMainConsumer final : public MainConsumer {
 public:
  // Rebalance deliveries one poll makes (a lost member rejoins in between) before it fetches;
  // more are left for the next poll.
  static constexpr int kDeliveryRoundsMax = 8;

  FakeMainConsumer(FakeBroker& broker, std::string group, const ConsumerConfig& config);
  ~FakeMainConsumer() override;

  absl::Status Subscribe(const std::vector<std::string>& topics,
                         RebalanceListener* listener) override;
  absl::StatusOr<PollResult> Poll(TimeNs timeout_ns) override;
  std::vector<TopicPartition> Assignment() const override;
  absl::Status Seek(const TopicPartition& partition, int64_t offset) override;
  absl::StatusOr<int64_t> Position(const TopicPartition& partition) override;
  absl::Status Pause(const std::vector<TopicPartition>& partitions) override;
  absl::Status Resume(const std::vector<TopicPartition>& partitions) override;
  absl::Status CommitSync(const std::map<TopicPartition, int64_t>& offsets) override;
  absl::StatusOr<std::map<TopicPartition, int64_t>> Committed(
      const std::vector<TopicPartition>& partitions) override;
  std::string MemberId() const override { return member_id_; }
  absl::Status SetSubscriptionUserData(std::string user_data) override;
  absl::Status EnforceRebalance() override;
  ConsumerGroupMetadata GroupMetadata() const override;
  void Close() override;

 private:
  absl::Status Enter(std::string_view call) const;
  absl::Status CheckSubscribed(std::string_view call) const;
  // Delivers the member's pending rebalance events (callbacks run without the broker lock, so
  // a listener may call this consumer), rejoining after a loss.
  void DeliverRebalances();
  void Apply(const RebalanceEvent& event);
  // group_'s coordinator, found at Subscribe (groups are never removed and std::map nodes do
  // not move): every poll took events from it, by name. REQUIRES: subscribed, broker_.mu_ held.
  GroupCoordinator& Group();

  FakeBroker& broker_;
  const std::string group_;
  GroupCoordinator* group_coordinator_ = nullptr;  // set by Subscribe
  const std::string client_id_;
  const absl::Status config_status_;
  Fetcher fetcher_;
  RebalanceListener* listener_ = nullptr;
  GroupAssignor* const assignor_;  // offered to the group at Subscribe (null: none)
  // kStreams is refused at Subscribe: FakeBroker::NewMainConsumer makes a
  // FakeStreamsGroupConsumer for it.
  const GroupProtocol group_protocol_;
  std::string user_data_;          // the subscription's, as last set
  std::string member_id_;  // empty until Subscribe
  int32_t generation_ = -1;  // of the last rebalance event applied
  bool closed_ = false;
  bool in_callback_ = false;
};

// The main consumer of a streams group (GroupProtocol::kStreams, KIP-1071) on the fake broker:
// the same StreamsGroupMember and StreamsGroupDriver as RdKafkaStreamsGroupConsumer (so the same
// callbacks in the same order: streams_group_driver.h), its heartbeats sent to the broker's
// StreamsGroupCoordinator from Poll (each a network call: latency, request faults, the streams
// faults of broker_faults.h), its fetches by the broker's Fetcher from the group's committed
// offsets. A poll waits for records no longer than the next heartbeat, then heartbeats again,
// until its timeout. As the rdkafka consumer: CommitSync is checked against the member's epoch
// (kFailedPrecondition: STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID), SetSubscriptionUserData and
// EnforceRebalance are kUnimplemented, GroupMetadata carries the member id and epoch, Close
// leaves (epoch -1) without callbacks, and Subscribe needs one topic and a process id and takes
// no client-side assignor (kInvalidArgument).
class FakeStreamsGroupConsumer final : public MainConsumer, private StreamsGroupDriver::Host {
 public:
  FakeStreamsGroupConsumer(FakeBroker& broker, std::string group, const ConsumerConfig& config);
  ~FakeStreamsGroupConsumer() override;

  absl::Status Subscribe(const std::vector<std::string>& topics,
                         RebalanceListener* listener) override;
  absl::StatusOr<PollResult> Poll(TimeNs timeout_ns) override;
  std::vector<TopicPartition> Assignment() const override;
  absl::Status Seek(const TopicPartition& partition, int64_t offset) override;
  absl::StatusOr<int64_t> Position(const TopicPartition& partition) override;
  absl::Status Pause(const std::vector<TopicPartition>& partitions) override;
  absl::Status Resume(const std::vector<TopicPartition>& partitions) override;
  absl::Status CommitSync(const std::map<TopicPartition, int64_t>& offsets) override;
  absl::StatusOr<std::map<TopicPartition, int64_t>> Committed(
      const std::vector<TopicPartition>& partitions) override;
  std::string MemberId() const override;
  absl::Status SetSubscriptionUserData(std::string user_data) override;
  absl::Status EnforceRebalance() override;
  ConsumerGroupMetadata GroupMetadata() const override;
  void Close() override;

  // For tests: the member's state machine (null before Subscribe).
  const StreamsGroupMember* member() const {
    return driver_.started() ? &driver_.member() : nullptr;
  }

 private:
  absl::Status Enter(std::string_view call) const;
  void CloseNow();
  // StreamsGroupDriver::Host.
  int64_t NowMs() const override;
  absl::StatusOr<kafka_protocol::StreamsGroupHeartbeatResponse> SendHeartbeat(
      const kafka_protocol::StreamsGroupHeartbeatRequest& request) override;
  void CoordinatorMoved() override;
  absl::Status ErrorStatus(int16_t code, const std::optional<std::string>& message,
                           std::string_view what) const override;
  void Say(std::string_view line) override;
  std::vector<TopicPartition> Fetching() const override { return fetcher_.Assignment(); }
  bool IsFetching(const TopicPartition& partition) const override {
    return fetcher_.IsAssigned(partition);
  }
  void AddFetching(const std::vector<TopicPartition>& partitions) override {
    fetcher_.Add(partitions);
  }
  void RemoveFetching(const std::vector<TopicPartition>& partitions) override {
    fetcher_.Remove(partitions);
  }

  FakeBroker& broker_;
  const std::string group_;
  const std::string client_id_;
  const ConsumerConfig config_;
  const absl::Status config_status_;
  Fetcher fetcher_;
  StreamsGroupDriver driver_{*this};
  bool closed_ = false;
};

// A streams-group response's error code as a port status: the rows of the one error table
// (rdkafka_errors.h) for the codes the fake's coordinator answers with.
absl::Status StreamsErrorToStatus(int16_t code, const std::optional<std::string>& message,
                                  std::string_view what);

class FakeAdmin final : public Admin {
 public:
  FakeAdmin(FakeBroker& broker, std::string client_id);

  absl::Status CreateTopic(const std::string& topic, int32_t partitions) override;
  absl::StatusOr<int32_t> PartitionCount(const std::string& topic) override;
  absl::StatusOr<std::map<TopicPartition, int64_t>> EndOffsets(
      const std::vector<TopicPartition>& partitions) override;
  absl::StatusOr<std::map<TopicPartition, int64_t>> EndOffsetsFor(
      const std::vector<TopicPartition>& partitions, IsolationLevel isolation_level) override;
  absl::StatusOr<std::map<TopicPartition, int64_t>> BeginningOffsets(
      const std::vector<TopicPartition>& partitions) override;
  absl::StatusOr<std::map<TopicPartition, int64_t>> CommittedOffsets(
      const std::string& group, const std::vector<TopicPartition>& partitions) override;
  absl::Status DeleteRecords(const std::map<TopicPartition, int64_t>& before_offsets) override;

 private:
  // Transport point, latency and request faults of one admin call.
  absl::Status Request(std::string_view call);
  // End (end = true; the LSO when stable) or log start offsets.
  absl::StatusOr<std::map<TopicPartition, int64_t>> Offsets(
      std::string_view call, const std::vector<TopicPartition>& partitions, bool end,
      bool stable = false);

  FakeBroker& broker_;
  const std::string client_id_;
};

class FakeProducer final : public Producer {
 public:
  // Records queued between flushes; past it Send fails (Kafka's buffer.memory would block).
  static constexpr size_t kQueuedRecordsMax = size_t{1} << 20;

  FakeProducer(FakeBroker& broker, std::string client_id);
  ~FakeProducer() override;

  absl::Status Send(const TopicPartition& partition, std::string key,
                    std::optional<std::string> value, int64_t timestamp_ms) override;
  absl::StatusOr<std::map<TopicPartition, int64_t>> Flush(TimeNs timeout_ns) override;
  void Close() override;

 private:
  struct Queued {
    TopicPartition partition;
    std::string key;
    std::optional<std::string> value;
    int64_t timestamp_ms = 0;
  };
  absl::Status Enter(std::string_view call) const;
  // Appends the queue; returns the last offset per partition. REQUIRES: partitions checked.
  std::map<TopicPartition, int64_t> AppendQueued() ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  absl::Status Fence();

  FakeBroker& broker_;
  const std::string client_id_;
  std::vector<Queued> queue_;
  bool fenced_ = false;
  bool closed_ = false;
};

// Shared by the client implementation files.
absl::Status ValidateConsumerConfig(const ConsumerConfig& config);
absl::Status ClosedError(std::string_view call);

}  // namespace restoresim::fakes

#endif  // RESTORESIM_FAKES_FAKE_CLIENTS_H_
