// The Kafka messages a streams-group member needs and librdkafka lacks (issue 26, KIP-1071),
// paraphrased from Kafka 4.4's message schemas (clients/src/main/resources/common/message/):
// RequestHeader v2 and ResponseHeader v0/v1, ApiVersions (key 18) v3–v4, FindCoordinator (key
// 10) v4–v6, StreamsGroupHeartbeat (key 88) v0–v1, StreamsGroupDescribe (key 89) v0–v1, and
// OffsetCommit (key 8) v9, a member's commit with its epoch, and OffsetFetch (key 9) v8–v9, a
// group's committed offsets (an admin's, or a member's with its epoch).
// Kafka counterparts: the generated org.apache.kafka.common.message.*Data classes. Each message
// encodes and decodes (both, so the byte-for-byte conformance test in kafka/ can check either
// direction against Kafka's classes).
//
// Differences from Kafka's classes, kept deliberately small:
// - Unknown tagged fields are kept (and written back) on the messages and headers themselves;
//   inside nested structs they are read and dropped.
// - A decoder refuses what Kafka's would refuse and also trailing bytes after the message.
//
// Thread-safety: stateless functions over values.
#ifndef RESTORESIM_CORE_TRANSPORT_KAFKA_PROTOCOL_MESSAGES_H_
#define RESTORESIM_CORE_TRANSPORT_KAFKA_PROTOCOL_MESSAGES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/transport/kafka_protocol.h"

namespace restoresim::kafka_protocol {

inline constexpr int16_t kOffsetCommitKey = 8;
inline constexpr int16_t kOffsetFetchKey = 9;
inline constexpr int16_t kFindCoordinatorKey = 10;
inline constexpr int16_t kApiVersionsKey = 18;
inline constexpr int16_t kStreamsGroupHeartbeatKey = 88;
inline constexpr int16_t kStreamsGroupDescribeKey = 89;

// The versions this codec speaks, which are the ones Kafka 4.4 serves for the streams keys.
struct VersionRange {
  int16_t min = 0;
  int16_t max = 0;
};
inline constexpr VersionRange kApiVersionsVersions{3, 4};
inline constexpr VersionRange kFindCoordinatorVersions{4, 6};  // the same layout
inline constexpr VersionRange kStreamsGroupHeartbeatVersions{0, 1};
inline constexpr VersionRange kStreamsGroupDescribeVersions{0, 1};
// v9 is the first whose member epoch a streams group checks (below it a member's commit is
// UNSUPPORTED_VERSION); v10 names topics by id, which librdkafka 2.0.2's metadata does not give.
inline constexpr VersionRange kOffsetCommitVersions{9, 9};
// v8 is the first with a list of groups (the layout of both); v9 adds the member id and epoch;
// v10 names topics by id (as OffsetCommit v10).
inline constexpr VersionRange kOffsetFetchVersions{8, 9};

struct RequestHeader {  // v2
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const RequestHeader&) const = default;
};
struct ResponseHeader {  // v1 (v0 has no tagged fields: ApiVersions' responses use it)
  int32_t correlation_id = 0;
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const ResponseHeader&) const = default;
};

struct ApiVersionsRequest {
  std::string client_software_name;
  std::string client_software_version;
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const ApiVersionsRequest&) const = default;
};
struct ApiVersion {
  int16_t api_key = 0;
  int16_t min_version = 0;
  int16_t max_version = 0;
  bool operator==(const ApiVersion&) const = default;
};
struct ApiVersionsResponse {
  int16_t error_code = 0;
  std::vector<ApiVersion> api_keys;
  int32_t throttle_time_ms = 0;
  // Supported and finalized features travel here (tags 0–3), kept raw.
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const ApiVersionsResponse&) const = default;
  // The range the broker serves for `api_key`, if it serves it.
  std::optional<VersionRange> Find(int16_t api_key) const;
};

struct FindCoordinatorRequest {
  int8_t key_type = 0;  // 0: a group
  std::vector<std::string> coordinator_keys;
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const FindCoordinatorRequest&) const = default;
};
struct Coordinator {
  std::string key;
  int32_t node_id = 0;
  std::string host;
  int32_t port = 0;
  int16_t error_code = 0;
  // Nullable, but "" by default in Kafka's class (the conformance test found it).
  std::optional<std::string> error_message = std::string();
  bool operator==(const Coordinator&) const = default;
};
struct FindCoordinatorResponse {
  int32_t throttle_time_ms = 0;
  std::vector<Coordinator> coordinators;
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const FindCoordinatorResponse&) const = default;
};

struct KeyValue {
  std::string key;
  std::string value;
  bool operator==(const KeyValue&) const = default;
};
struct TopicInfo {
  std::string name;
  int32_t partitions = 0;
  int16_t replication_factor = 0;
  std::vector<KeyValue> topic_configs;
  bool operator==(const TopicInfo&) const = default;
};
struct CopartitionGroup {
  std::vector<int16_t> source_topics;
  std::vector<int16_t> source_topic_regex;
  std::vector<int16_t> repartition_source_topics;
  bool operator==(const CopartitionGroup&) const = default;
};
struct Subtopology {
  std::string subtopology_id;
  std::vector<std::string> source_topics;
  std::vector<std::string> source_topic_regex;
  std::vector<TopicInfo> state_changelog_topics;
  std::vector<std::string> repartition_sink_topics;
  std::vector<TopicInfo> repartition_source_topics;
  std::vector<CopartitionGroup> copartition_groups;  // the heartbeat's only
  bool operator==(const Subtopology&) const = default;
};
struct Topology {
  int32_t epoch = 0;
  std::vector<Subtopology> subtopologies;
  bool operator==(const Topology&) const = default;
};
struct TaskIds {
  std::string subtopology_id;
  std::vector<int32_t> partitions;
  bool operator==(const TaskIds&) const = default;
};
struct TaskOffset {
  std::string subtopology_id;
  int32_t partition = 0;
  int64_t offset = 0;
  bool operator==(const TaskOffset&) const = default;
};
struct Endpoint {
  std::string host;
  uint16_t port = 0;
  bool operator==(const Endpoint&) const = default;
};

struct StreamsGroupHeartbeatRequest {
  std::string group_id;
  std::string member_id;
  int32_t member_epoch = 0;  // 0 joins, -1 leaves, -2 a static member that will rejoin
  int32_t endpoint_information_epoch = 0;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  int32_t rebalance_timeout_ms = -1;
  std::optional<Topology> topology;  // on joining only
  std::optional<std::vector<TaskIds>> active_tasks;  // null: unchanged since the last heartbeat
  std::optional<std::vector<TaskIds>> standby_tasks;
  std::optional<std::vector<TaskIds>> warmup_tasks;
  std::optional<std::string> process_id;
  std::optional<Endpoint> user_endpoint;
  std::optional<std::vector<KeyValue>> client_tags;
  std::optional<std::vector<TaskOffset>> task_offsets;
  std::optional<std::vector<TaskOffset>> task_end_offsets;
  bool shutdown_application = false;
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const StreamsGroupHeartbeatRequest&) const = default;
};

// The group statuses of a heartbeat response (StreamsGroupHeartbeatResponse.Status).
enum class StreamsGroupStatusCode : int8_t {
  kStaleTopology = 0,
  kMissingSourceTopics = 1,
  kIncorrectlyPartitionedTopics = 2,
  kMissingInternalTopics = 3,
  kShutdownApplication = 4,
};
struct StreamsGroupStatus {
  int8_t status_code = 0;
  std::string status_detail;
  bool operator==(const StreamsGroupStatus&) const = default;
};
struct TopicPartitions {
  std::string topic;
  std::vector<int32_t> partitions;
  bool operator==(const TopicPartitions&) const = default;
};
struct EndpointToPartitions {
  Endpoint user_endpoint;
  std::vector<TopicPartitions> active_partitions;
  std::vector<TopicPartitions> standby_partitions;
  bool operator==(const EndpointToPartitions&) const = default;
};
struct StreamsGroupHeartbeatResponse {
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  std::string member_id;
  int32_t member_epoch = 0;
  int32_t heartbeat_interval_ms = 0;
  int64_t acceptable_recovery_lag = 0;  // int32 in v0
  int32_t task_offset_interval_ms = 0;
  // Nullable, but empty by default in Kafka 4.4's class (the conformance test found it).
  std::optional<std::vector<StreamsGroupStatus>> status = std::vector<StreamsGroupStatus>{};
  std::optional<std::vector<TaskIds>> active_tasks;  // null: unchanged
  std::optional<std::vector<TaskIds>> standby_tasks;
  std::optional<std::vector<TaskIds>> warmup_tasks;
  bool topology_description_required = false;  // v1+
  int32_t endpoint_information_epoch = 0;
  std::optional<std::vector<EndpointToPartitions>> partitions_by_user_endpoint;
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const StreamsGroupHeartbeatResponse&) const = default;
};

struct StreamsGroupDescribeRequest {
  std::vector<std::string> group_ids;
  bool include_authorized_operations = false;
  bool include_topology_description = false;  // v1+
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const StreamsGroupDescribeRequest&) const = default;
};
struct StreamsGroupAssignment {
  std::vector<TaskIds> active_tasks;
  std::vector<TaskIds> standby_tasks;
  std::vector<TaskIds> warmup_tasks;
  bool operator==(const StreamsGroupAssignment&) const = default;
};
struct DescribedMember {
  std::string member_id;
  int32_t member_epoch = 0;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::string client_id;
  std::string client_host;
  int32_t topology_epoch = 0;
  std::string process_id;
  std::optional<Endpoint> user_endpoint;
  std::vector<KeyValue> client_tags;
  std::vector<TaskOffset> task_offsets;
  std::vector<TaskOffset> task_end_offsets;
  StreamsGroupAssignment assignment;
  StreamsGroupAssignment target_assignment;
  bool is_classic = false;
  bool operator==(const DescribedMember&) const = default;
};
struct DescribedTopology {
  int32_t epoch = 0;
  std::optional<std::vector<Subtopology>> subtopologies;
  bool operator==(const DescribedTopology&) const = default;
};
// A processor node of the topology description (v1, KIP-1331).
struct DescribedNode {
  std::string name;
  int8_t node_type = 0;
  std::vector<std::string> source_topics;
  std::optional<std::string> sink_topic;
  std::vector<std::string> stores;
  std::vector<std::string> successors;
  bool operator==(const DescribedNode&) const = default;
};
struct DescribedSubtopologyNodes {
  std::string subtopology_id;
  std::vector<DescribedNode> nodes;
  bool operator==(const DescribedSubtopologyNodes&) const = default;
};
struct DescribedGlobalStore {
  DescribedNode source;
  DescribedNode processor;
  bool operator==(const DescribedGlobalStore&) const = default;
};
struct TopologyDescription {
  std::vector<DescribedSubtopologyNodes> subtopologies;
  std::vector<DescribedGlobalStore> global_stores;
  bool operator==(const TopologyDescription&) const = default;
};
struct DescribedGroup {
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  std::string group_id;
  std::string group_state;
  int32_t group_epoch = 0;
  int32_t assignment_epoch = 0;
  std::optional<DescribedTopology> topology;
  std::vector<DescribedMember> members;
  int32_t authorized_operations = INT32_MIN;
  std::optional<TopologyDescription> topology_description;  // v1+
  int8_t topology_description_status = 0;                   // v1+
  std::optional<std::string> assignor_name;                  // v1+
  bool operator==(const DescribedGroup&) const = default;
};
struct StreamsGroupDescribeResponse {
  int32_t throttle_time_ms = 0;
  std::vector<DescribedGroup> groups;
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const StreamsGroupDescribeResponse&) const = default;
};

struct OffsetCommitPartition {
  int32_t partition_index = 0;
  int64_t committed_offset = 0;
  int32_t committed_leader_epoch = -1;
  std::optional<std::string> committed_metadata = std::string();  // nullable, "" by default
  bool operator==(const OffsetCommitPartition&) const = default;
};
struct OffsetCommitTopic {
  std::string name;
  std::vector<OffsetCommitPartition> partitions;
  bool operator==(const OffsetCommitTopic&) const = default;
};
struct OffsetCommitRequest {
  std::string group_id;
  int32_t generation_id_or_member_epoch = -1;  // a streams member: its epoch
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::vector<OffsetCommitTopic> topics;
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const OffsetCommitRequest&) const = default;
};
struct OffsetCommitPartitionResult {
  int32_t partition_index = 0;
  int16_t error_code = 0;
  bool operator==(const OffsetCommitPartitionResult&) const = default;
};
struct OffsetCommitTopicResult {
  std::string name;
  std::vector<OffsetCommitPartitionResult> partitions;
  bool operator==(const OffsetCommitTopicResult&) const = default;
};
struct OffsetCommitResponse {
  int32_t throttle_time_ms = 0;
  std::vector<OffsetCommitTopicResult> topics;
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const OffsetCommitResponse&) const = default;
};

struct OffsetFetchTopic {
  std::string name;
  std::vector<int32_t> partition_indexes;
  bool operator==(const OffsetFetchTopic&) const = default;
};
struct OffsetFetchGroup {
  std::string group_id;
  std::optional<std::string> member_id;  // v9+: a member's fetch (null: an admin's)
  int32_t member_epoch = -1;             // v9+
  std::optional<std::vector<OffsetFetchTopic>> topics;  // null: every topic of the group
  bool operator==(const OffsetFetchGroup&) const = default;
};
struct OffsetFetchRequest {
  std::vector<OffsetFetchGroup> groups;
  bool require_stable = false;  // pending transactional offsets: UNSTABLE_OFFSET_COMMIT
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const OffsetFetchRequest&) const = default;
};
struct OffsetFetchPartitionResult {
  int32_t partition_index = 0;
  int64_t committed_offset = -1;  // -1: nothing committed
  int32_t committed_leader_epoch = -1;
  std::optional<std::string> metadata = std::string();
  int16_t error_code = 0;
  bool operator==(const OffsetFetchPartitionResult&) const = default;
};
struct OffsetFetchTopicResult {
  std::string name;
  std::vector<OffsetFetchPartitionResult> partitions;
  bool operator==(const OffsetFetchTopicResult&) const = default;
};
struct OffsetFetchGroupResult {
  std::string group_id;
  std::vector<OffsetFetchTopicResult> topics;
  int16_t error_code = 0;
  bool operator==(const OffsetFetchGroupResult&) const = default;
};
struct OffsetFetchResponse {
  int32_t throttle_time_ms = 0;
  std::vector<OffsetFetchGroupResult> groups;
  std::vector<RawTaggedField> tagged_fields;
  bool operator==(const OffsetFetchResponse&) const = default;
};

// Encoders: the message body at `version` (RS_CHECK: a version this codec speaks).
std::string EncodeRequestHeader(const RequestHeader& header);
std::string EncodeResponseHeader(const ResponseHeader& header, int header_version);
std::string Encode(const ApiVersionsRequest& m, int16_t version);
std::string Encode(const ApiVersionsResponse& m, int16_t version);
std::string Encode(const FindCoordinatorRequest& m, int16_t version);
std::string Encode(const FindCoordinatorResponse& m, int16_t version);
std::string Encode(const StreamsGroupHeartbeatRequest& m, int16_t version);
std::string Encode(const StreamsGroupHeartbeatResponse& m, int16_t version);
std::string Encode(const StreamsGroupDescribeRequest& m, int16_t version);
std::string Encode(const StreamsGroupDescribeResponse& m, int16_t version);
std::string Encode(const OffsetCommitRequest& m, int16_t version);
std::string Encode(const OffsetCommitResponse& m, int16_t version);
// At v8 a group's member id and epoch are not written (ignorable fields, as Kafka's class).
std::string Encode(const OffsetFetchRequest& m, int16_t version);
std::string Encode(const OffsetFetchResponse& m, int16_t version);

// Decoders: the whole of `bytes` must be the message; anything else is kDataLoss, and a version
// this codec does not speak kInvalidArgument.
absl::StatusOr<RequestHeader> DecodeRequestHeader(Reader& reader);
absl::StatusOr<ResponseHeader> DecodeResponseHeader(Reader& reader, int header_version);
absl::StatusOr<ApiVersionsRequest> DecodeApiVersionsRequest(std::string_view b, int16_t v);
absl::StatusOr<ApiVersionsResponse> DecodeApiVersionsResponse(std::string_view b, int16_t v);
absl::StatusOr<FindCoordinatorRequest> DecodeFindCoordinatorRequest(std::string_view b,
                                                                    int16_t v);
absl::StatusOr<FindCoordinatorResponse> DecodeFindCoordinatorResponse(std::string_view b,
                                                                      int16_t v);
absl::StatusOr<StreamsGroupHeartbeatRequest> DecodeStreamsGroupHeartbeatRequest(
    std::string_view b, int16_t v);
absl::StatusOr<StreamsGroupHeartbeatResponse> DecodeStreamsGroupHeartbeatResponse(
    std::string_view b, int16_t v);
absl::StatusOr<StreamsGroupDescribeRequest> DecodeStreamsGroupDescribeRequest(
    std::string_view b, int16_t v);
absl::StatusOr<StreamsGroupDescribeResponse> DecodeStreamsGroupDescribeResponse(
    std::string_view b, int16_t v);
absl::StatusOr<OffsetCommitRequest> DecodeOffsetCommitRequest(std::string_view b, int16_t v);
absl::StatusOr<OffsetCommitResponse> DecodeOffsetCommitResponse(std::string_view b, int16_t v);
absl::StatusOr<OffsetFetchRequest> DecodeOffsetFetchRequest(std::string_view b, int16_t v);
absl::StatusOr<OffsetFetchResponse> DecodeOffsetFetchResponse(std::string_view b, int16_t v);

}  // namespace restoresim::kafka_protocol

#endif  // RESTORESIM_CORE_TRANSPORT_KAFKA_PROTOCOL_MESSAGES_H_
