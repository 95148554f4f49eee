#include "core/transport/kafka_protocol_messages.h"

#include <fmt/format.h>

#include "core/transport/kafka_protocol_structs.h"
#include "core/util/check.h"

namespace restoresim::kafka_protocol {

using namespace internal;  // NOLINT(build/namespaces): the codec's own helpers

namespace {

void WriteSubtopology(Writer& w, const Subtopology& s) {
  w.CompactString(s.subtopology_id);
  WriteStrings(w, s.source_topics);
  WriteStrings(w, s.source_topic_regex);
  WriteArray(w, s.state_changelog_topics, WriteTopicInfo);
  WriteStrings(w, s.repartition_sink_topics);
  WriteArray(w, s.repartition_source_topics, WriteTopicInfo);
  WriteArray(w, s.copartition_groups, [](Writer& x, const CopartitionGroup& g) {
    WriteInt16s(x, g.source_topics);
    WriteInt16s(x, g.source_topic_regex);
    WriteInt16s(x, g.repartition_source_topics);
    x.NoTaggedFields();
  });
  w.NoTaggedFields();
}

Subtopology ReadSubtopology(Reader& r) {
  Subtopology s;
  s.subtopology_id = r.CompactString();
  s.source_topics = ReadStrings(r);
  s.source_topic_regex = ReadStrings(r);
  s.state_changelog_topics = ReadArray<TopicInfo>(r, 8, ReadTopicInfo);
  s.repartition_sink_topics = ReadStrings(r);
  s.repartition_source_topics = ReadArray<TopicInfo>(r, 8, ReadTopicInfo);
  s.copartition_groups = ReadArray<CopartitionGroup>(r, 4, [](Reader& x) {
    CopartitionGroup g;
    g.source_topics = ReadInt16s(x);
    g.source_topic_regex = ReadInt16s(x);
    g.repartition_source_topics = ReadInt16s(x);
    x.TaggedFields();
    return g;
  });
  r.TaggedFields();
  return s;
}

void WriteTopicPartitions(Writer& w, const TopicPartitions& t) {
  w.CompactString(t.topic);
  WriteInt32s(w, t.partitions);
  w.NoTaggedFields();
}

TopicPartitions ReadTopicPartitions(Reader& r) {
  TopicPartitions t;
  t.topic = r.CompactString();
  t.partitions = ReadInt32s(r);
  r.TaggedFields();
  return t;
}

}  // namespace

std::optional<VersionRange> ApiVersionsResponse::Find(int16_t api_key) const {
  for (const ApiVersion& v : api_keys) {
    if (v.api_key == api_key) return VersionRange{v.min_version, v.max_version};
  }
  return std::nullopt;
}

std::string EncodeRequestHeader(const RequestHeader& h) {
  Writer w;
  w.Int16(h.api_key);
  w.Int16(h.api_version);
  w.Int32(h.correlation_id);
  w.NullableString(h.client_id);
  w.TaggedFields(h.tagged_fields);
  return w.Take();
}

absl::StatusOr<RequestHeader> DecodeRequestHeader(Reader& r) {
  RequestHeader h;
  h.api_key = r.Int16();
  h.api_version = r.Int16();
  h.correlation_id = r.Int32();
  h.client_id = r.NullableString();
  h.tagged_fields = r.TaggedFields();
  if (!r.ok()) return r.status();
  return h;
}

std::string EncodeResponseHeader(const ResponseHeader& h, int header_version) {
  RS_CHECK(header_version == 0 || header_version == 1, "response header v0 or v1");
  RS_CHECK(header_version == 1 || h.tagged_fields.empty(), "v0 has no tagged fields");
  Writer w;
  w.Int32(h.correlation_id);
  if (header_version == 1) w.TaggedFields(h.tagged_fields);
  return w.Take();
}

absl::StatusOr<ResponseHeader> DecodeResponseHeader(Reader& r, int header_version) {
  ResponseHeader h;
  h.correlation_id = r.Int32();
  if (header_version >= 1) h.tagged_fields = r.TaggedFields();
  if (!r.ok()) return r.status();
  return h;
}

std::string Encode(const ApiVersionsRequest& m, int16_t version) {
  RS_CHECK(Speaks(kApiVersionsVersions, version), "ApiVersions v3 or v4");
  Writer w;
  w.CompactString(m.client_software_name);
  w.CompactString(m.client_software_version);
  w.TaggedFields(m.tagged_fields);
  return w.Take();
}

absl::StatusOr<ApiVersionsRequest> DecodeApiVersionsRequest(std::string_view b, int16_t v) {
  if (!Speaks(kApiVersionsVersions, v)) return Unspoken("ApiVersionsRequest", v);
  Reader r(b);
  ApiVersionsRequest m;
  m.client_software_name = r.CompactString();
  m.client_software_version = r.CompactString();
  m.tagged_fields = r.TaggedFields();
  return Finish(r, std::move(m));
}

std::string Encode(const ApiVersionsResponse& m, int16_t version) {
  RS_CHECK(Speaks(kApiVersionsVersions, version), "ApiVersions v3 or v4");
  Writer w;
  w.Int16(m.error_code);
  WriteArray(w, m.api_keys, [](Writer& x, const ApiVersion& a) {
    x.Int16(a.api_key);
    x.Int16(a.min_version);
    x.Int16(a.max_version);
    x.NoTaggedFields();
  });
  w.Int32(m.throttle_time_ms);
  w.TaggedFields(m.tagged_fields);
  return w.Take();
}

absl::StatusOr<ApiVersionsResponse> DecodeApiVersionsResponse(std::string_view b, int16_t v) {
  if (!Speaks(kApiVersionsVersions, v)) return Unspoken("ApiVersionsResponse", v);
  Reader r(b);
  ApiVersionsResponse m;
  m.error_code = r.Int16();
  m.api_keys = ReadArray<ApiVersion>(r, 7, [](Reader& x) {
    ApiVersion a;
    a.api_key = x.Int16();
    a.min_version = x.Int16();
    a.max_version = x.Int16();
    x.TaggedFields();
    return a;
  });
  m.throttle_time_ms = r.Int32();
  m.tagged_fields = r.TaggedFields();
  return Finish(r, std::move(m));
}

std::string Encode(const StreamsGroupHeartbeatRequest& m, int16_t version) {
  RS_CHECK(Speaks(kStreamsGroupHeartbeatVersions, version), "StreamsGroupHeartbeat v0 or v1");
  Writer w;
  w.CompactString(m.group_id);
  w.CompactString(m.member_id);
  w.Int32(m.member_epoch);
  w.Int32(m.endpoint_information_epoch);
  w.CompactNullableString(m.instance_id);
  w.CompactNullableString(m.rack_id);
  w.Int32(m.rebalance_timeout_ms);
  w.Int8(m.topology ? 1 : -1);
  if (m.topology) {
    w.Int32(m.topology->epoch);
    WriteArray(w, m.topology->subtopologies, WriteSubtopology);
    w.NoTaggedFields();
  }
  WriteNullableArray(w, m.active_tasks, WriteTaskIds);
  WriteNullableArray(w, m.standby_tasks, WriteTaskIds);
  WriteNullableArray(w, m.warmup_tasks, WriteTaskIds);
  w.CompactNullableString(m.process_id);
  w.Int8(m.user_endpoint ? 1 : -1);
  if (m.user_endpoint) WriteEndpoint(w, *m.user_endpoint);
  WriteNullableArray(w, m.client_tags, WriteKeyValue);
  WriteNullableArray(w, m.task_offsets, WriteTaskOffset);
  WriteNullableArray(w, m.task_end_offsets, WriteTaskOffset);
  w.Bool(m.shutdown_application);
  w.TaggedFields(m.tagged_fields);
  return w.Take();
}

absl::StatusOr<StreamsGroupHeartbeatRequest> DecodeStreamsGroupHeartbeatRequest(
    std::string_view b, int16_t v) {
  if (!Speaks(kStreamsGroupHeartbeatVersions, v)) {
    return Unspoken("StreamsGroupHeartbeatRequest", v);
  }
  Reader r(b);
  StreamsGroupHeartbeatRequest m;
  m.group_id = r.CompactString();
  m.member_id = r.CompactString();
  m.member_epoch = r.Int32();
  m.endpoint_information_epoch = r.Int32();
  m.instance_id = r.CompactNullableString();
  m.rack_id = r.CompactNullableString();
  m.rebalance_timeout_ms = r.Int32();
  if (r.NullableStructPresent()) {
    Topology t;
    t.epoch = r.Int32();
    t.subtopologies = ReadArray<Subtopology>(r, 8, ReadSubtopology);
    r.TaggedFields();
    m.topology = std::move(t);
  }
  m.active_tasks = ReadNullableArray<TaskIds>(r, 3, ReadTaskIds);
  m.standby_tasks = ReadNullableArray<TaskIds>(r, 3, ReadTaskIds);
  m.warmup_tasks = ReadNullableArray<TaskIds>(r, 3, ReadTaskIds);
  m.process_id = r.CompactNullableString();
  if (r.NullableStructPresent()) m.user_endpoint = ReadEndpoint(r);
  m.client_tags = ReadNullableArray<KeyValue>(r, 3, ReadKeyValue);
  m.task_offsets = ReadNullableArray<TaskOffset>(r, 14, ReadTaskOffset);
  m.task_end_offsets = ReadNullableArray<TaskOffset>(r, 14, ReadTaskOffset);
  m.shutdown_application = r.Bool();
  m.tagged_fields = r.TaggedFields();
  return Finish(r, std::move(m));
}

std::string Encode(const StreamsGroupHeartbeatResponse& m, int16_t version) {
  RS_CHECK(Speaks(kStreamsGroupHeartbeatVersions, version), "StreamsGroupHeartbeat v0 or v1");
  Writer w;
  w.Int32(m.throttle_time_ms);
  w.Int16(m.error_code);
  w.CompactNullableString(m.error_message);
  w.CompactString(m.member_id);
  w.Int32(m.member_epoch);
  w.Int32(m.heartbeat_interval_ms);
  if (version == 0) w.Int32(static_cast<int32_t>(m.acceptable_recovery_lag));
  w.Int32(m.task_offset_interval_ms);
  if (version >= 1) w.Int64(m.acceptable_recovery_lag);
  WriteNullableArray(w, m.status, [](Writer& x, const StreamsGroupStatus& s) {
    x.Int8(s.status_code);
    x.CompactString(s.status_detail);
    x.NoTaggedFields();
  });
  WriteNullableArray(w, m.active_tasks, WriteTaskIds);
  WriteNullableArray(w, m.standby_tasks, WriteTaskIds);
  WriteNullableArray(w, m.warmup_tasks, WriteTaskIds);
  if (version >= 1) w.Bool(m.topology_description_required);
  w.Int32(m.endpoint_information_epoch);
  WriteNullableArray(w, m.partitions_by_user_endpoint,
                     [](Writer& x, const EndpointToPartitions& e) {
                       WriteEndpoint(x, e.user_endpoint);
                       WriteArray(x, e.active_partitions, WriteTopicPartitions);
                       WriteArray(x, e.standby_partitions, WriteTopicPartitions);
                       x.NoTaggedFields();
                     });
  w.TaggedFields(m.tagged_fields);
  return w.Take();
}

absl::StatusOr<StreamsGroupHeartbeatResponse> DecodeStreamsGroupHeartbeatResponse(
    std::string_view b, int16_t v) {
  if (!Speaks(kStreamsGroupHeartbeatVersions, v)) {
    return Unspoken("StreamsGroupHeartbeatResponse", v);
  }
  Reader r(b);
  StreamsGroupHeartbeatResponse m;
  m.throttle_time_ms = r.Int32();
  m.error_code = r.Int16();
  m.error_message = r.CompactNullableString();
  m.member_id = r.CompactString();
  m.member_epoch = r.Int32();
  m.heartbeat_interval_ms = r.Int32();
  if (v == 0) m.acceptable_recovery_lag = r.Int32();
  m.task_offset_interval_ms = r.Int32();
  if (v >= 1) m.acceptable_recovery_lag = r.Int64();
  m.status = ReadNullableArray<StreamsGroupStatus>(r, 3, [](Reader& x) {
    StreamsGroupStatus s;
    s.status_code = x.Int8();
    s.status_detail = x.CompactString();
    x.TaggedFields();
    return s;
  });
  m.active_tasks = ReadNullableArray<TaskIds>(r, 3, ReadTaskIds);
  m.standby_tasks = ReadNullableArray<TaskIds>(r, 3, ReadTaskIds);
  m.warmup_tasks = ReadNullableArray<TaskIds>(r, 3, ReadTaskIds);
  if (v >= 1) m.topology_description_required = r.Bool();
  m.endpoint_information_epoch = r.Int32();
  m.partitions_by_user_endpoint = ReadNullableArray<EndpointToPartitions>(r, 7, [](Reader& x) {
    EndpointToPartitions e;
    e.user_endpoint = ReadEndpoint(x);
    e.active_partitions = ReadArray<TopicPartitions>(x, 3, ReadTopicPartitions);
    e.standby_partitions = ReadArray<TopicPartitions>(x, 3, ReadTopicPartitions);
    x.TaggedFields();
    return e;
  });
  m.tagged_fields = r.TaggedFields();
  return Finish(r, std::move(m));
}

}  // namespace restoresim::kafka_protocol
