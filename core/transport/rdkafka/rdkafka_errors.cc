#include "core/transport/rdkafka/rdkafka_errors.h"

#include <fmt/format.h>

#include <optional>

namespace restoresim::rdkafka {

namespace {

// The transactional rows of the table (issue 21).
std::optional<absl::StatusCode> TransactionalCodeOf(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS:
    case RD_KAFKA_RESP_ERR_UNSTABLE_OFFSET_COMMIT:
      return absl::StatusCode::kUnavailable;
    case RD_KAFKA_RESP_ERR_TRANSACTION_COORDINATOR_FENCED:
      return absl::StatusCode::kAborted;
    case RD_KAFKA_RESP_ERR_INVALID_TXN_STATE:
      return absl::StatusCode::kFailedPrecondition;
    case RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT:
      return absl::StatusCode::kInvalidArgument;
    default:
      return std::nullopt;
  }
}

// Kafka's codes past librdkafka 2.0.2's enum (it stops at 97), carried by the streams-group
// messages (issue 26).
constexpr int kFencedMemberEpoch = 110;
constexpr int kUnreleasedInstanceId = 111;
constexpr int kStaleMemberEpoch = 113;
constexpr int kUnknownTopicId = 100;
constexpr int kStreamsInvalidTopology = 130;
constexpr int kStreamsInvalidTopologyEpoch = 131;
constexpr int kStreamsTopologyFenced = 132;

// The rows of the streams-group messages' errors (StreamsGroupHeartbeat, StreamsGroupDescribe,
// ApiVersions) that no other row has; the coordinator errors, INVALID_REQUEST and
// UNKNOWN_MEMBER_ID are older rows.
std::optional<absl::StatusCode> StreamsGroupCodeOf(rd_kafka_resp_err_t err) {
  switch (static_cast<int>(err)) {
    case kFencedMemberEpoch:
    case kStreamsTopologyFenced:
    case kStaleMemberEpoch:  // OffsetCommit v9+: the member's epoch moved on (CommitFailed)
      return absl::StatusCode::kFailedPrecondition;
    case kUnknownTopicId:
      return absl::StatusCode::kNotFound;
    case kUnreleasedInstanceId:
      return absl::StatusCode::kAborted;
    case kStreamsInvalidTopology:
    case kStreamsInvalidTopologyEpoch:
    case RD_KAFKA_RESP_ERR_INVALID_GROUP_ID:
      return absl::StatusCode::kInvalidArgument;
    case RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND:
      return absl::StatusCode::kNotFound;
    case RD_KAFKA_RESP_ERR_GROUP_MAX_SIZE_REACHED:
      return absl::StatusCode::kResourceExhausted;
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
      return absl::StatusCode::kPermissionDenied;
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION:
      return absl::StatusCode::kUnimplemented;
    default:
      return std::nullopt;
  }
}

// The name of a Kafka code librdkafka 2.0.2 cannot name.
const char* NameOfNewCode(int code) {
  switch (code) {
    case kFencedMemberEpoch: return "FENCED_MEMBER_EPOCH";
    case kUnreleasedInstanceId: return "UNRELEASED_INSTANCE_ID";
    case kStaleMemberEpoch: return "STALE_MEMBER_EPOCH";
    case kUnknownTopicId: return "UNKNOWN_TOPIC_ID";
    case kStreamsInvalidTopology: return "STREAMS_INVALID_TOPOLOGY";
    case kStreamsInvalidTopologyEpoch: return "STREAMS_INVALID_TOPOLOGY_EPOCH";
    case kStreamsTopologyFenced: return "STREAMS_TOPOLOGY_FENCED";
    default: return nullptr;
  }
}

// The transient errors: a broker, leader or coordinator away, a full queue, a retry.
bool IsTransient(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_REPLICA_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
    case RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR:
    case RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR__IN_PROGRESS:
    case RD_KAFKA_RESP_ERR__PREV_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR__RETRY:
    case RD_KAFKA_RESP_ERR__WAIT_CACHE:
    case RD_KAFKA_RESP_ERR__OUTDATED:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusCode StatusCodeOf(rd_kafka_resp_err_t err) {
  using C = absl::StatusCode;
  if (std::optional<C> code = TransactionalCodeOf(err)) return *code;
  if (std::optional<C> code = StreamsGroupCodeOf(err)) return *code;
  if (IsTransient(err)) return C::kUnavailable;
  switch (err) {
    case RD_KAFKA_RESP_ERR_NO_ERROR:
      return C::kOk;
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
      return C::kDeadlineExceeded;
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
      return C::kOutOfRange;
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      return C::kNotFound;
    case RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS:
      return C::kAlreadyExists;
    case RD_KAFKA_RESP_ERR_PRODUCER_FENCED:
    case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH:
    case RD_KAFKA_RESP_ERR__FENCED:
    case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_ID_MAPPING:
    case RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER:
      return C::kAborted;
    case RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION:
    case RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID:
    case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID:
    case RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST:
    case RD_KAFKA_RESP_ERR__STATE:
    case RD_KAFKA_RESP_ERR__DESTROY:
    case RD_KAFKA_RESP_ERR__UNKNOWN_GROUP:
      return C::kFailedPrecondition;
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
    case RD_KAFKA_RESP_ERR_INVALID_PARTITIONS:
    case RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR:
    case RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION:
    case RD_KAFKA_RESP_ERR_POLICY_VIOLATION:
    case RD_KAFKA_RESP_ERR_INVALID_REQUEST:
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR__BAD_MSG:
      return C::kInvalidArgument;
    default:
      return C::kInternal;
  }
}

absl::Status ToStatus(rd_kafka_resp_err_t err, std::string_view context) {
  const absl::StatusCode code = StatusCodeOf(err);
  if (code == absl::StatusCode::kOk) return absl::OkStatus();
  return absl::Status(code, fmt::format("{}: {}: {}", context, rd_kafka_err2name(err),
                                        rd_kafka_err2str(err)));
}

absl::Status KafkaErrorToStatus(int16_t error_code, const std::optional<std::string>& message,
                                std::string_view context) {
  const auto err = static_cast<rd_kafka_resp_err_t>(error_code);
  const absl::StatusCode code = StatusCodeOf(err);
  if (code == absl::StatusCode::kOk) return absl::OkStatus();
  const char* name = NameOfNewCode(error_code);
  return absl::Status(code, fmt::format("{}: {} ({}): {}", context,
                                        name != nullptr ? name : rd_kafka_err2name(err),
                                        error_code, message ? *message : rd_kafka_err2str(err)));
}

absl::Status ToStatus(rd_kafka_error_t* error, std::string_view context) {
  if (error == nullptr) return absl::OkStatus();
  const rd_kafka_resp_err_t err = rd_kafka_error_code(error);
  absl::StatusCode code = StatusCodeOf(err);
  // A fatal error (an idempotent producer that lost its sequence, a fenced transactional one)
  // is final whatever its code; an abortable one says what the transaction must do; a
  // retriable one may be retried whatever its code.
  if (rd_kafka_error_is_fatal(error)) {
    code = absl::StatusCode::kAborted;
  } else if (rd_kafka_error_txn_requires_abort(error)) {
    code = absl::StatusCode::kCancelled;
  } else if (rd_kafka_error_is_retriable(error) && code != absl::StatusCode::kDeadlineExceeded) {
    code = absl::StatusCode::kUnavailable;
  }
  const std::string message =
      fmt::format("{}: {}: {}", context, rd_kafka_error_name(error), rd_kafka_error_string(error));
  rd_kafka_error_destroy(error);
  if (code == absl::StatusCode::kOk) return absl::OkStatus();
  return absl::Status(code, message);
}

absl::Status FatalError(rd_kafka_t* rk, std::string_view context) {
  char reason[512];
  const rd_kafka_resp_err_t err = rd_kafka_fatal_error(rk, reason, sizeof(reason));
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
  return absl::AbortedError(
      fmt::format("{}: fatal client error {}: {}", context, rd_kafka_err2name(err), reason));
}

}  // namespace restoresim::rdkafka
