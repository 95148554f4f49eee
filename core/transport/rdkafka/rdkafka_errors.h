// The one place where librdkafka errors become the transport port's statuses
// (core/transport/transport.h). Every adapter file calls these; none maps a code itself.
//
//   librdkafka error (RD_KAFKA_RESP_ERR_...)                        port status        retry?
//   __TIMED_OUT, __TIMED_OUT_QUEUE, REQUEST_TIMED_OUT, __MSG_TIMED_OUT  kDeadlineExceeded  yes
//   __TRANSPORT, __ALL_BROKERS_DOWN, __RESOLVE, NETWORK_EXCEPTION,
//     LEADER_NOT_AVAILABLE, NOT_LEADER_FOR_PARTITION, BROKER_NOT_AVAILABLE,
//     REPLICA_NOT_AVAILABLE, NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
//     COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
//     __WAIT_COORD, __QUEUE_FULL, KAFKA_STORAGE_ERROR, FENCED_LEADER_EPOCH,
//     UNKNOWN_LEADER_EPOCH, OFFSET_NOT_AVAILABLE, __IN_PROGRESS,
//     __PREV_IN_PROGRESS, __RETRY, __WAIT_CACHE, __OUTDATED,
//     CONCURRENT_TRANSACTIONS, UNSTABLE_OFFSET_COMMIT,
//     a retriable rd_kafka_error_t (rd_kafka_error_is_retriable)  kUnavailable       yes
//   OFFSET_OUT_OF_RANGE, __AUTO_OFFSET_RESET                    kOutOfRange        no: corruption
//   UNKNOWN_TOPIC_OR_PART, __UNKNOWN_TOPIC, __UNKNOWN_PARTITION   kNotFound          no
//   TOPIC_ALREADY_EXISTS                                        kAlreadyExists     no
//   PRODUCER_FENCED, INVALID_PRODUCER_EPOCH, __FENCED,
//     INVALID_PRODUCER_ID_MAPPING, OUT_OF_ORDER_SEQUENCE_NUMBER,
//     TRANSACTION_COORDINATOR_FENCED,
//     any fatal error (rd_kafka_fatal_error, rd_kafka_error_is_fatal;
//     a transaction the coordinator timed out ends here)        kAborted           no (producer)
//   a transactional error that requires an abort
//     (rd_kafka_error_txn_requires_abort)                       kCancelled         abort, go on
//   ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS,
//     FENCED_INSTANCE_ID, __ASSIGNMENT_LOST, __STATE, __DESTROY,
//     __UNKNOWN_GROUP, INVALID_TXN_STATE                        kFailedPrecondition no: rejoin
//   __INVALID_ARG, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR,
//     TOPIC_EXCEPTION, POLICY_VIOLATION, INVALID_REQUEST,
//     MSG_SIZE_TOO_LARGE, __BAD_MSG,
//     INVALID_TRANSACTION_TIMEOUT                               kInvalidArgument   no
//   Streams groups (issue 26; the wire codes of core/transport/kafka_protocol_messages.h):
//   FENCED_MEMBER_EPOCH (110), STREAMS_TOPOLOGY_FENCED (132)    kFailedPrecondition no: rejoin
//   UNRELEASED_INSTANCE_ID (111)                                kAborted           no (member)
//   STREAMS_INVALID_TOPOLOGY (130), _EPOCH (131), INVALID_GROUP_ID  kInvalidArgument no
//   GROUP_ID_NOT_FOUND                                          kNotFound          no
//   GROUP_MAX_SIZE_REACHED                                      kResourceExhausted no
//   TOPIC_, GROUP_, CLUSTER_AUTHORIZATION_FAILED                kPermissionDenied  no
//   UNSUPPORTED_VERSION (a broker without the API asked)        kUnimplemented     no
//   anything else                                               kInternal          no
//
// Why the splits: a retryable status is one the same call may succeed on later without the
// caller changing anything (leadership moves, coordinators load, brokers come back: a broker
// restart or a killed leader shows up as kUnavailable until metadata catches up).
// REBALANCE_IN_PROGRESS and the generation errors are Kafka's CommitFailedException: the
// member must poll (rejoin) first, which the runtime treats as "the partitions moved".
//
// Thread-safety: stateless.
#ifndef RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_ERRORS_H_
#define RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_ERRORS_H_

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace restoresim::rdkafka {

// The port's code for a librdkafka error (kOk for RD_KAFKA_RESP_ERR_NO_ERROR).
absl::StatusCode StatusCodeOf(rd_kafka_resp_err_t err);

// "<context>: <librdkafka name>: <librdkafka description>" with StatusCodeOf(err).
absl::Status ToStatus(rd_kafka_resp_err_t err, std::string_view context);

// A Kafka error code from a response this project decodes itself (kafka_protocol_messages.h):
// "<context>: <name> (<code>): <the broker's message, else librdkafka's description>", with
// StatusCodeOf(code). OK for 0.
absl::Status KafkaErrorToStatus(int16_t error_code, const std::optional<std::string>& message,
                                std::string_view context);

// An rd_kafka_error_t (admin and transactional calls): its code, its own message; fatal is
// kAborted, txn_requires_abort kCancelled, retriable kUnavailable (or kDeadlineExceeded),
// whatever the code. Takes ownership and destroys it. OK for null.
absl::Status ToStatus(rd_kafka_error_t* error, std::string_view context);

// The client's fatal error (an idempotent producer fenced or out of sequence), if it has one:
// kAborted whatever its code, since the client can do nothing more. OK otherwise.
absl::Status FatalError(rd_kafka_t* rk, std::string_view context);

}  // namespace restoresim::rdkafka

#endif  // RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_ERRORS_H_
