// One blocking TCP connection to one Kafka broker speaking the requests librdkafka lacks, through
// the codec of core/transport/kafka_protocol_messages.h (issue 26). It lives beside the
// librdkafka adapter because it does socket I/O on real threads; waits go through the Clock.
// Kafka counterpart: a NetworkClient's KafkaChannel, without its selector: one request in
// flight, answered in order.
//
// What exists: connect, ApiVersions (v3, its response read with header v0 as Kafka sends it),
// FindCoordinator (a connection to a group's coordinator), and StreamsGroupHeartbeat /
// StreamsGroupDescribe at the highest version both sides speak (refused with kUnimplemented when
// the broker offers neither), a member's OffsetCommit (v9), and OffsetFetch (v8-v9, an admin's or
// a member's). What does not, yet: TLS and
// SASL, reconnecting, and following a coordinator that moves (NOT_COORDINATOR is kUnavailable:
// the caller opens anew).
//
// Thread-safety: none; one caller at a time.
#ifndef RESTORESIM_CORE_TRANSPORT_RDKAFKA_KAFKA_PROTOCOL_CONNECTION_H_
#define RESTORESIM_CORE_TRANSPORT_RDKAFKA_KAFKA_PROTOCOL_CONNECTION_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "core/sync/clock.h"
#include "core/transport/kafka_protocol_messages.h"

namespace restoresim::rdkafka {

// The coordinator errors Kafka's clients retry (FindCoordinator, and a member's heartbeat after
// finding the coordinator again): a new cluster has no __consumer_offsets yet
// (COORDINATOR_NOT_AVAILABLE until the broker creates and loads it), a partition is loading
// (COORDINATOR_LOAD_IN_PROGRESS), or its leader moved (NOT_COORDINATOR).
bool RetriableCoordinatorError(int16_t code);

class KafkaProtocolConnection {
 public:
  // Connects to `address` (HOST:PORT, the first of a bootstrap list) and asks ApiVersions.
  static absl::StatusOr<KafkaProtocolConnection> Open(const std::string& address,
                                                      const std::string& client_id, Clock& clock);
  // Asks the first broker of `bootstrap` that answers for `group`'s coordinator and connects to
  // that. `retry`: the coordinator errors are retried as FindCoordinator does (up to 60 s);
  // false: one attempt, a retriable error kUnavailable.
  static absl::StatusOr<KafkaProtocolConnection> OpenToCoordinator(const std::string& bootstrap,
                                                                   const std::string& group,
                                                                   const std::string& client_id,
                                                                   Clock& clock,
                                                                   bool retry = true);
  KafkaProtocolConnection(KafkaProtocolConnection&& other) noexcept = default;
  KafkaProtocolConnection& operator=(KafkaProtocolConnection&&) = delete;

  const kafka_protocol::ApiVersionsResponse& api_versions() const { return api_versions_; }
  int16_t heartbeat_version() const { return heartbeat_version_; }

  // HOST:PORT of `group`'s coordinator (FindCoordinator v4+, key type 0). Retries the errors
  // Kafka's client retries (COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
  // NOT_COORDINATOR) for up to 60 s, backing off from 100 ms to 1 s.
  absl::StatusOr<std::string> FindCoordinator(const std::string& group);
  // The same, the whole entry (node id, host, port).
  absl::StatusOr<kafka_protocol::Coordinator> FindCoordinatorEntry(const std::string& group);
  absl::StatusOr<kafka_protocol::StreamsGroupHeartbeatResponse> Heartbeat(
      const kafka_protocol::StreamsGroupHeartbeatRequest& request);
  absl::StatusOr<kafka_protocol::StreamsGroupDescribeResponse> Describe(
      const kafka_protocol::StreamsGroupDescribeRequest& request);
  // OffsetCommit v9 (kUnimplemented when the broker does not offer it): the errors are the
  // response's, per partition, for the caller to judge.
  absl::StatusOr<kafka_protocol::OffsetCommitResponse> OffsetCommit(
      const kafka_protocol::OffsetCommitRequest& request);
  // OffsetFetch at the highest of v8-v9 both sides speak (kUnimplemented when none, or when a
  // group carries a member id and the broker lacks v9): the errors are the response's, per group
  // and partition, for the caller to judge.
  absl::StatusOr<kafka_protocol::OffsetFetchResponse> OffsetFetch(
      const kafka_protocol::OffsetFetchRequest& request);

 private:
  // The connection's socket, closed with it; a moved-from one holds -1 (so a defaulted move
  // carries every negotiated version along: a hand-written one forgot a new one once).
  struct Socket {
    explicit Socket(int f) : fd(f) {}
    Socket(Socket&& other) noexcept : fd(std::exchange(other.fd, -1)) {}
    Socket& operator=(Socket&&) = delete;
    ~Socket();
    int fd = -1;
  };

  KafkaProtocolConnection(int fd, std::string client_id, Clock& clock)
      : fd_(fd), client_id_(std::move(client_id)), clock_(&clock) {}
  // One FindCoordinator round trip: the group's entry, its error code not yet judged.
  absl::StatusOr<kafka_protocol::Coordinator> FindCoordinatorOnce(const std::string& group);
  // Sends header + body, returns the response body after its header (v0 or v1).
  absl::StatusOr<std::string> RoundTrip(int16_t api_key, int16_t version,
                                        const std::string& body, int response_header_version);
  absl::Status Negotiate();

  Socket fd_;
  std::string client_id_;
  Clock* clock_;
  int32_t next_correlation_id_ = 1;
  kafka_protocol::ApiVersionsResponse api_versions_;
  int16_t heartbeat_version_ = -1;
  int16_t describe_version_ = -1;
  int16_t find_coordinator_version_ = -1;
  int16_t offset_commit_version_ = -1;
  int16_t offset_fetch_version_ = -1;
};

}  // namespace restoresim::rdkafka

#endif  // RESTORESIM_CORE_TRANSPORT_RDKAFKA_KAFKA_PROTOCOL_CONNECTION_H_
