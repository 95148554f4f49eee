// The librdkafka clients behind the transport port: what RdKafkaTransport (rdkafka_transport.h)
// creates. Each owns one librdkafka handle. Semantics are the port's (transport.h); where
// librdkafka or Kafka would do otherwise, the adapter makes them the port's, and says so here:
//   - a call after Close is kFailedPrecondition (Close itself is idempotent);
//   - a poll with nothing assigned waits out its timeout and returns nothing (Kafka's Java
//     consumer throws IllegalStateException instead);
//   - MainConsumer::CommitSync of a partition the member does not own fails kFailedPrecondition
//     before anything is sent (a real broker accepts a commit of any partition from a member
//     of the current generation; the runtime relies on the refusal, as on Java's
//     CommitFailedException after a rebalance);
//   - MainConsumer::MemberId is the member id the coordinator gave, or before the first join
//     completes the client's own unique name (Kafka assigns member ids at JoinGroup);
//   - MainConsumer::Close leaves the group without rebalance callbacks;
//   - Assignment::user_data is always empty: librdkafka's assignors carry no Kafka Streams
//     assignment info, so a runtime over this transport creates no standby tasks.
//
// Thread-safety: as the port says, one thread at a time per client object.
#ifndef RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_CLIENTS_H_
#define RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_CLIENTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/sync/clock.h"
#include "core/transport/rdkafka/kafka_protocol_connection.h"
#include "core/transport/rdkafka/rdkafka_consumer.h"
#include "core/transport/rdkafka/rdkafka_handle.h"
#include "core/transport/rdkafka/rdkafka_settings.h"
#include "core/transport/streams_group_driver.h"
#include "core/transport/streams_group_member.h"
#include "core/transport/transport.h"

namespace restoresim::rdkafka {

absl::Status ClosedError(std::string_view call);
// A consumer or admin handle built from `settings` (RD_KAFKA_CONSUMER: admin requests work on
// any handle, and a consumer's carries isolation.level to ListOffsets).
absl::StatusOr<HandlePtr> NewConsumerHandle(const std::vector<Setting>& settings);

class RdKafkaRestoreConsumer final : public RestoreConsumer {
 public:
  // A failure to build the client is reported by every call.
  RdKafkaRestoreConsumer(const std::vector<Setting>& settings, const ConsumerConfig& config,
                         const RdKafkaOptions& options, Clock& clock);
  ~RdKafkaRestoreConsumer() override;

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
  absl::Status Enter(std::string_view call) const;

  absl::Status init_status_;
  HandlePtr handle_;
  const RdKafkaOptions options_;
  std::unique_ptr<ConsumerCore> core_;
  bool closed_ = false;
};

class RdKafkaMainConsumer final : public MainConsumer {
 public:
  // Builds its own handle (it installs the rebalance callback); a failure is reported by every
  // call.
  RdKafkaMainConsumer(const std::vector<Setting>& settings, const ConsumerConfig& config,
                      const RdKafkaOptions& options, Clock& clock);
  ~RdKafkaMainConsumer() override;

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
  // librdkafka has no custom (client-side) assignors: a consumer built with an assignor
  // fails Subscribe with kUnimplemented, and these two are kUnimplemented too (on a real
  // broker the group's own assignor places no standbys: docs/DESIGN.md, "Kafka fidelity").
  absl::Status SetSubscriptionUserData(std::string user_data) override;
  absl::Status EnforceRebalance() override;
  // group_id and member_id, generation_id -1 (librdkafka 2.0.2 has no getter for it), and
  // librdkafka's own metadata serialized in `opaque` (generation included), which
  // RdKafkaTransactionalProducer reads back.
  ConsumerGroupMetadata GroupMetadata() const override;
  void Close() override;

 private:
  static void RebalanceCallback(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                                rd_kafka_topic_partition_list_t* partitions, void* opaque);
  void OnRebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions);
  void Assigned(rd_kafka_topic_partition_list_t* partitions);
  void Revoked(rd_kafka_topic_partition_list_t* partitions);
  absl::Status Enter(std::string_view call) const;
  void CloseNow();

  absl::Status init_status_;
  HandlePtr handle_;
  const RdKafkaOptions options_;
  std::unique_ptr<ConsumerCore> core_;
  RebalanceListener* listener_ = nullptr;
  const std::string assignor_name_;  // of ConsumerConfig::assignor; empty: none
  std::string group_;                 // group.id, from the settings
  bool subscribed_ = false;
  bool closed_ = false;
  bool closing_ = false;      // inside rd_kafka_consumer_close: no listener calls
  bool in_callback_ = false;  // a Close from a callback is finished when the callback returns
  bool close_requested_ = false;
};

// The main consumer of a streams group (ConsumerConfig::group_protocol kStreams, KIP-1071):
// a StreamsGroupMember (streams_group_member.h) heartbeating over the project's own connection
// to the group's coordinator, and a librdkafka consumer whose partitions are assigned by hand
// (ConsumerCore kManualGroup). Heartbeats and reconciliations run inside Poll, on the polling
// thread, through the StreamsGroupDriver the fake broker's streams consumer shares
// (streams_group_driver.h: which callbacks, in which order). Where it differs from the classic
// consumer:
//   - CommitSync is an OffsetCommit with the member's id and epoch over the member's own
//     connection (a streams group refuses librdkafka's commit while it has members:
//     kafka_streams_group_test); Committed and the start positions use librdkafka's offset fetch,
//     which the group answers;
//   - SetSubscriptionUserData and EnforceRebalance are kUnimplemented (no user data, and the
//     broker decides when tasks move);
//   - GroupMetadata carries the member id and epoch (as the generation), no opaque bytes;
//   - Subscribe fails kUnimplemented when the broker offers no StreamsGroupHeartbeat, and a fatal
//     heartbeat error fails the Poll that got it (the member is FATAL from then on);
//   - Close leaves the group (epoch -1) without rebalance callbacks.
// What it does not do yet: the poll timer (a member that stops polling for
// max.poll.interval.ms leaves as STALE), static membership, client tags, task offsets.
class RdKafkaStreamsGroupConsumer final : public MainConsumer, private StreamsGroupDriver::Host {
 public:
  RdKafkaStreamsGroupConsumer(const std::vector<Setting>& settings, const ConsumerConfig& config,
                              const RdKafkaOptions& options, Clock& clock);
  ~RdKafkaStreamsGroupConsumer() override;

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
  absl::Status Connect();
  void CloseNow();
  // StreamsGroupDriver::Host.
  int64_t NowMs() const override;
  absl::StatusOr<kafka_protocol::StreamsGroupHeartbeatResponse> SendHeartbeat(
      const kafka_protocol::StreamsGroupHeartbeatRequest& request) override;
  void CoordinatorMoved() override { connection_.reset(); }
  absl::Status ErrorStatus(int16_t code, const std::optional<std::string>& message,
                           std::string_view what) const override;
  void Say(std::string_view line) override;
  std::vector<TopicPartition> Fetching() const override { return core_->Assignment(); }
  bool IsFetching(const TopicPartition& partition) const override {
    return core_->IsAssigned(partition);
  }
  void AddFetching(const std::vector<TopicPartition>& partitions) override {
    core_->Add(partitions);
  }
  void RemoveFetching(const std::vector<TopicPartition>& partitions) override {
    core_->Remove(partitions);
  }

  absl::Status init_status_;
  HandlePtr handle_;
  const RdKafkaOptions options_;
  const ConsumerConfig config_;
  Clock& clock_;
  std::unique_ptr<ConsumerCore> core_;
  std::string group_;  // group.id, from the settings
  StreamsGroupDriver driver_{*this};
  std::optional<KafkaProtocolConnection> connection_;  // none: (re)connect before sending
  bool closed_ = false;
};

class RdKafkaAdmin final : public Admin {
 public:
  // A failure to build the client is reported by every call. `read_committed_settings` build
  // the second handle EndOffsetsFor(read_committed) needs, at its first use.
  RdKafkaAdmin(const std::vector<Setting>& settings, std::vector<Setting> read_committed_settings,
               const RdKafkaOptions& options, std::string client_id, Clock& clock);
  ~RdKafkaAdmin() override;

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
  // ListOffsets of every partition at once: `which` is RD_KAFKA_OFFSET_END or _BEGINNING, on
  // `rk` (null: the read_uncommitted handle).
  absl::StatusOr<std::map<TopicPartition, int64_t>> ListOffsets(
      const std::vector<TopicPartition>& partitions, int64_t which, std::string_view call,
      rd_kafka_t* rk = nullptr);
  rd_kafka_AdminOptions_t* Options(rd_kafka_admin_op_t op) const;
  // One OffsetFetch to the group's coordinator (found first if not known); a coordinator error
  // is kUnavailable (retried by CommittedOffsets).
  absl::StatusOr<std::map<TopicPartition, int64_t>> CommittedOffsetsOnce(
      const std::string& group, const std::vector<TopicPartition>& partitions);
  static absl::StatusOr<std::map<TopicPartition, int64_t>> OffsetsOf(
      const kafka_protocol::OffsetFetchResponse& response, const std::string& group,
      const std::vector<TopicPartition>& partitions, const std::string& call);

  absl::Status init_status_;
  HandlePtr handle_;
  const RdKafkaOptions options_;
  const std::string client_id_;
  Clock& clock_;
  // The last group's coordinator, kept between calls; dropped on any failure.
  std::optional<KafkaProtocolConnection> coordinator_;
  std::string coordinator_group_;
  QueuePtr results_;  // admin results arrive here
  const std::vector<Setting> read_committed_settings_;
  HandlePtr read_committed_handle_;  // null until the first read_committed end offsets
};

class RdKafkaProducer final : public Producer {
 public:
  // A failure to build the client is reported by every call.
  RdKafkaProducer(const std::vector<Setting>& settings, const RdKafkaOptions& options);
  ~RdKafkaProducer() override;

  absl::Status Send(const TopicPartition& partition, std::string key,
                    std::optional<std::string> value, int64_t timestamp_ms) override;
  absl::StatusOr<std::map<TopicPartition, int64_t>> Flush(TimeNs timeout_ns) override;
  void Close() override;

 private:
  static void DeliveryCallback(rd_kafka_t* rk, const rd_kafka_message_t* message, void* opaque);
  absl::Status Enter(std::string_view call) const;

  absl::Status init_status_;
  HandlePtr handle_;
  const RdKafkaOptions options_;
  bool closed_ = false;
  // Written by DeliveryCallback, which librdkafka calls on this client's thread (inside
  // rd_kafka_poll / rd_kafka_flush), so no lock.
  std::map<TopicPartition, int64_t> acked_;  // last acknowledged offset since the last Flush
  absl::Status delivery_error_;              // the first failed delivery since the last Flush

  friend class RdKafkaTransactionalProducer;  // drives the same handle's transactions
};

// The transactional producer: an RdKafkaProducer built with transactional.id (Send and Flush
// are its), plus librdkafka's transactional API. librdkafka enforces the state machine (a call
// in the wrong state is __STATE: kFailedPrecondition) and classifies every error as fatal,
// abortable or retriable (rdkafka_errors.h maps them). Differences from the port's wording:
// SendOffsetsToTransaction needs the group metadata of an RdKafkaMainConsumer (its `opaque`),
// else it builds one from the fields; a transaction the coordinator timed out may first fail
// locally as abortable (kCancelled), and the producer is fenced (kAborted) at the next call.
class RdKafkaTransactionalProducer final : public TransactionalProducer {
 public:
  RdKafkaTransactionalProducer(const std::vector<Setting>& settings,
                               const RdKafkaOptions& options);

  absl::Status Send(const TopicPartition& partition, std::string key,
                    std::optional<std::string> value, int64_t timestamp_ms) override;
  absl::StatusOr<std::map<TopicPartition, int64_t>> Flush(TimeNs timeout_ns) override;
  void Close() override;
  absl::Status InitTransactions(TimeNs timeout_ns) override;
  absl::Status BeginTransaction() override;
  absl::Status SendOffsetsToTransaction(const std::map<TopicPartition, int64_t>& offsets,
                                        const ConsumerGroupMetadata& group) override;
  absl::Status CommitTransaction(TimeNs timeout_ns) override;
  absl::Status AbortTransaction(TimeNs timeout_ns) override;

 private:
  // The handle, or why there is none (closed, failed to build).
  absl::StatusOr<rd_kafka_t*> Handle(std::string_view call) const;

  RdKafkaProducer producer_;
};

}  // namespace restoresim::rdkafka

#endif  // RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_CLIENTS_H_
