// StreamsGroupDriver: a streams-group member (KIP-1071) attached to a main consumer, whatever
// carries its heartbeats: it owns the pure StreamsGroupMember, sends the heartbeats that are due
// through its Host, and turns the member's reconciliations into the port's rebalance callbacks,
// run on the polling thread. Kafka counterpart: the part of Kafka Streams' StreamThread and
// AsyncKafkaConsumer that runs StreamsRebalanceListener callbacks for the membership manager.
// Shared by RdKafkaStreamsGroupConsumer (a real broker, over the project's protocol connection)
// and the fake broker's streams consumer (fakes/), so that both run the same callbacks:
//   - a reconciliation is OnPartitionsRevoked with the input partitions of the revoked active
//     tasks the consumer still fetches (still owned during the callback, so they are committed),
//     then the consumer's partitions become the target's actives, then OnPartitionsAssigned with
//     those and the standby and warm-up tasks as Assignment::standby_partitions (Kafka Streams
//     runs warm-ups as standbys);
//   - a fencing is OnPartitionsLost with every partition, then a rejoin at epoch 0;
//   - a join (or rejoin) given nothing still gets an OnPartitionsAssigned (empty);
//   - a fatal heartbeat fails the Drive that got it and every later one, never retryable;
//   - a Close from a callback (RequestClose) stops further callbacks; the host finishes it;
//   - the group's statuses are acted on as Kafka 4.4's StreamThread does
//     (handleStreamsRebalanceData), at every Drive: INCORRECTLY_PARTITIONED_TOPICS fails it
//     (kInvalidArgument, Kafka's TopologyException), MISSING_SOURCE_TOPICS reported for two
//     heartbeat intervals fails it (kNotFound, Kafka's MissingSourceTopicException), and
//     SHUTDOWN_APPLICATION fails it and every later one (kAborted; Kafka's shutdown hook ends the
//     client in ERROR, as the runtime's default handler does). Each ends the polling stream
//     thread, whose handler decides what follows. A group that is not ready (missing internal
//     topics, an assignment delayed) is not acted on: it gives no tasks meanwhile.
// The member describes one subtopology, "0", reading one source topic (the count topology).
//
// Thread-safety: none; the one thread that polls the consumer.
#ifndef RESTORESIM_CORE_TRANSPORT_STREAMS_GROUP_DRIVER_H_
#define RESTORESIM_CORE_TRANSPORT_STREAMS_GROUP_DRIVER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/transport/kafka_protocol_messages.h"
#include "core/transport/streams_group_member.h"
#include "core/transport/transport.h"

namespace restoresim {

class StreamsGroupDriver {
 public:
  // What the driver needs of its consumer: the heartbeat's transport, the one error table, and
  // the partitions the consumer fetches.
  class Host {
   public:
    virtual ~Host() = default;
    virtual int64_t NowMs() const = 0;
    // Sends one heartbeat and returns its response; an error when there is none (the host
    // reconnects before the next request).
    virtual absl::StatusOr<kafka_protocol::StreamsGroupHeartbeatResponse> SendHeartbeat(
        const kafka_protocol::StreamsGroupHeartbeatRequest& request) = 0;
    // NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE: find the coordinator before the next one.
    virtual void CoordinatorMoved() = 0;
    // A response's error code as a port status (the one error table).
    virtual absl::Status ErrorStatus(int16_t code, const std::optional<std::string>& message,
                                     std::string_view what) const = 0;
    // A line for the user (a heartbeat that failed, a reported error).
    virtual void Say(std::string_view line) = 0;
    virtual std::vector<TopicPartition> Fetching() const = 0;
    virtual bool IsFetching(const TopicPartition& partition) const = 0;
    // New partitions start at the group's committed offset.
    virtual void AddFetching(const std::vector<TopicPartition>& partitions) = 0;
    virtual void RemoveFetching(const std::vector<TopicPartition>& partitions) = 0;
  };

  // The only subtopology the member describes: the count topology's (transport.h).
  static constexpr std::string_view kSubtopology = "0";
  // Heartbeats one Drive may send back to back: a join, its reconciliation's acknowledgement,
  // and a newer target that arrived meanwhile with its own.
  static constexpr int kHeartbeatsPerDriveMax = 4;

  explicit StreamsGroupDriver(Host& host) : host_(host) {}

  // The topology Kafka Streams describes for the count topology: subtopology "0" reading
  // `source_topic`, one changelog per store (no partition count, replication factor -1,
  // cleanup.policy=compact and message.timestamp.type=CreateTime, in key order).
  static kafka_protocol::Topology CountTopology(const std::string& source_topic,
                                                const std::vector<std::string>& changelogs);

  // Makes the member (its topology already in `options`) and joins. REQUIRES: not started.
  void Start(StreamsGroupMember::Options options, std::string source_topic,
             RebalanceListener* listener);
  bool started() const { return member_ != nullptr; }
  // Heartbeats that are due, each followed by what its response asks (a loss, a
  // reconciliation, the acknowledgement at once). An error only when the member is FATAL (and
  // then at every later call), or a task the topology does not have was assigned.
  absl::Status Drive();
  // The member is FATAL: every later poll and commit fails with this.
  const absl::Status& fatal() const { return fatal_; }
  // When the next heartbeat is due (INT64_MAX: none).
  int64_t NextHeartbeatAtMs() const;
  StreamsGroupMember& member() { return *member_; }
  const StreamsGroupMember& member() const { return *member_; }
  bool in_callback() const { return in_callback_; }
  // A Close from a rebalance callback: no further callback; the host closes after Drive.
  void RequestClose() { close_requested_ = true; }
  bool close_requested() const { return close_requested_; }
  // The port's GroupMetadata for `group`: as Kafka's consumer under the streams protocol, the
  // member id and epoch (a TxnOffsetCommit's generation, so the coordinator can fence a zombie's
  // offsets); unknown (-1, "") before Start or once `closed`.
  ConsumerGroupMetadata Metadata(const std::string& group, bool closed) const;
  // The port's MemberId: the member's, or `fallback` before Start.
  std::string MemberId(const std::string& fallback) const;
  // The port's SetSubscriptionUserData: a streams member sends none (the broker assigns).
  static absl::Status UserDataRefused(size_t bytes);
  // Leaves without callbacks (the port's Close): the next heartbeat is the leave (epoch -1).
  void PrepareLeave();
  // The port's EnforceRebalance for a streams member: the next Drive heartbeats at once, so a
  // member the group dropped or moved past learns it then (a loss and a rejoin, or a new
  // target) instead of after its interval. Kafka Streams answers the same situation (a
  // TaskMigratedException) by unsubscribing and subscribing again: a leave, then a join, which
  // may move its tasks to other members; this keeps them where the group still has them.
  void HeartbeatNow();

 private:
  // One heartbeat; false in *go_on: no response, or the coordinator moved (a later poll
  // sends the next).
  absl::Status SendHeartbeat(bool* go_on);
  absl::Status FatalStatus(const kafka_protocol::StreamsGroupHeartbeatResponse& response) const;
  // The statuses of the last response (see the header's list).
  absl::Status ActOnStatuses();
  void HandleLost();
  absl::Status Reconcile();
  void MaybeAssignNothing();
  // Source partitions of `tasks`, or kDataLoss naming a task of a subtopology the member never
  // described.
  absl::StatusOr<std::vector<TopicPartition>> InputsOf(const StreamsTaskSet& tasks) const;

  Host& host_;
  std::unique_ptr<StreamsGroupMember> member_;  // from Start on
  std::string source_topic_;
  RebalanceListener* listener_ = nullptr;
  bool in_callback_ = false;
  bool close_requested_ = false;
  bool heartbeat_failing_ = false;    // the last heartbeat got no response (said once)
  bool assigned_since_join_ = false;  // OnPartitionsAssigned called since the (re)join
  std::optional<int64_t> missing_topics_since_ms_;  // MISSING_SOURCE_TOPICS reported since
  absl::Status fatal_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_TRANSPORT_STREAMS_GROUP_DRIVER_H_
