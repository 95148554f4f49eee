// StreamsGroupDescribe (key 89) v0–v1: the request, and the response with its members,
// assignments and (v1, KIP-1331) topology description. Declared in kafka_protocol_messages.h.
#include <fmt/format.h>

#include "core/transport/kafka_protocol_messages.h"
#include "core/transport/kafka_protocol_structs.h"
#include "core/util/check.h"

namespace restoresim::kafka_protocol {

using namespace internal;  // NOLINT(build/namespaces): the codec's own helpers

namespace {

// The describe response's subtopology: no regex, no copartition groups, another field order.
void WriteDescribedSubtopology(Writer& w, const Subtopology& s) {
  w.CompactString(s.subtopology_id);
  WriteStrings(w, s.source_topics);
  WriteStrings(w, s.repartition_sink_topics);
  WriteArray(w, s.state_changelog_topics, WriteTopicInfo);
  WriteArray(w, s.repartition_source_topics, WriteTopicInfo);
  w.NoTaggedFields();
}
Subtopology ReadDescribedSubtopology(Reader& r) {
  Subtopology s;
  s.subtopology_id = r.CompactString();
  s.source_topics = ReadStrings(r);
  s.repartition_sink_topics = ReadStrings(r);
  s.state_changelog_topics = ReadArray<TopicInfo>(r, 8, ReadTopicInfo);
  s.repartition_source_topics = ReadArray<TopicInfo>(r, 8, ReadTopicInfo);
  r.TaggedFields();
  return s;
}

void WriteAssignment(Writer& w, const StreamsGroupAssignment& a) {
  WriteArray(w, a.active_tasks, WriteTaskIds);
  WriteArray(w, a.standby_tasks, WriteTaskIds);
  WriteArray(w, a.warmup_tasks, WriteTaskIds);
  w.NoTaggedFields();
}
StreamsGroupAssignment ReadAssignment(Reader& r) {
  StreamsGroupAssignment a;
  a.active_tasks = ReadArray<TaskIds>(r, 3, ReadTaskIds);
  a.standby_tasks = ReadArray<TaskIds>(r, 3, ReadTaskIds);
  a.warmup_tasks = ReadArray<TaskIds>(r, 3, ReadTaskIds);
  r.TaggedFields();
  return a;
}

void WriteMember(Writer& w, const DescribedMember& m) {
  w.CompactString(m.member_id);
  w.Int32(m.member_epoch);
  w.CompactNullableString(m.instance_id);
  w.CompactNullableString(m.rack_id);
  w.CompactString(m.client_id);
  w.CompactString(m.client_host);
  w.Int32(m.topology_epoch);
  w.CompactString(m.process_id);
  w.Int8(m.user_endpoint ? 1 : -1);
  if (m.user_endpoint) WriteEndpoint(w, *m.user_endpoint);
  WriteArray(w, m.client_tags, WriteKeyValue);
  WriteArray(w, m.task_offsets, WriteTaskOffset);
  WriteArray(w, m.task_end_offsets, WriteTaskOffset);
  WriteAssignment(w, m.assignment);
  WriteAssignment(w, m.target_assignment);
  w.Bool(m.is_classic);
  w.NoTaggedFields();
}
DescribedMember ReadMember(Reader& r) {
  DescribedMember m;
  m.member_id = r.CompactString();
  m.member_epoch = r.Int32();
  m.instance_id = r.CompactNullableString();
  m.rack_id = r.CompactNullableString();
  m.client_id = r.CompactString();
  m.client_host = r.CompactString();
  m.topology_epoch = r.Int32();
  m.process_id = r.CompactString();
  if (r.NullableStructPresent()) m.user_endpoint = ReadEndpoint(r);
  m.client_tags = ReadArray<KeyValue>(r, 3, ReadKeyValue);
  m.task_offsets = ReadArray<TaskOffset>(r, 14, ReadTaskOffset);
  m.task_end_offsets = ReadArray<TaskOffset>(r, 14, ReadTaskOffset);
  m.assignment = ReadAssignment(r);
  m.target_assignment = ReadAssignment(r);
  m.is_classic = r.Bool();
  r.TaggedFields();
  return m;
}

void WriteNode(Writer& w, const DescribedNode& n) {
  w.CompactString(n.name);
  w.Int8(n.node_type);
  WriteStrings(w, n.source_topics);
  w.CompactNullableString(n.sink_topic);
  WriteStrings(w, n.stores);
  WriteStrings(w, n.successors);
  w.NoTaggedFields();
}
DescribedNode ReadNode(Reader& r) {
  DescribedNode n;
  n.name = r.CompactString();
  n.node_type = r.Int8();
  n.source_topics = ReadStrings(r);
  n.sink_topic = r.CompactNullableString();
  n.stores = ReadStrings(r);
  n.successors = ReadStrings(r);
  r.TaggedFields();
  return n;
}

void WriteTopologyDescription(Writer& w, const TopologyDescription& d) {
  WriteArray(w, d.subtopologies, [](Writer& x, const DescribedSubtopologyNodes& s) {
    x.CompactString(s.subtopology_id);
    WriteArray(x, s.nodes, WriteNode);
    x.NoTaggedFields();
  });
  WriteArray(w, d.global_stores, [](Writer& x, const DescribedGlobalStore& g) {
    WriteNode(x, g.source);
    WriteNode(x, g.processor);
    x.NoTaggedFields();
  });
  w.NoTaggedFields();
}
TopologyDescription ReadTopologyDescription(Reader& r) {
  TopologyDescription d;
  d.subtopologies = ReadArray<DescribedSubtopologyNodes>(r, 3, [](Reader& x) {
    DescribedSubtopologyNodes s;
    s.subtopology_id = x.CompactString();
    s.nodes = ReadArray<DescribedNode>(x, 7, ReadNode);
    x.TaggedFields();
    return s;
  });
  d.global_stores = ReadArray<DescribedGlobalStore>(r, 15, [](Reader& x) {
    DescribedGlobalStore g;
    g.source = ReadNode(x);
    g.processor = ReadNode(x);
    x.TaggedFields();
    return g;
  });
  r.TaggedFields();
  return d;
}

void WriteGroup(Writer& w, const DescribedGroup& g, int16_t version) {
  w.Int16(g.error_code);
  w.CompactNullableString(g.error_message);
  w.CompactString(g.group_id);
  w.CompactString(g.group_state);
  w.Int32(g.group_epoch);
  w.Int32(g.assignment_epoch);
  w.Int8(g.topology ? 1 : -1);
  if (g.topology) {
    w.Int32(g.topology->epoch);
    WriteNullableArray(w, g.topology->subtopologies, WriteDescribedSubtopology);
    w.NoTaggedFields();
  }
  WriteArray(w, g.members, WriteMember);
  w.Int32(g.authorized_operations);
  if (version >= 1) {
    w.Int8(g.topology_description ? 1 : -1);
    if (g.topology_description) WriteTopologyDescription(w, *g.topology_description);
    w.Int8(g.topology_description_status);
    w.CompactNullableString(g.assignor_name);
  }
  w.NoTaggedFields();
}
DescribedGroup ReadGroup(Reader& r, int16_t version) {
  DescribedGroup g;
  g.error_code = r.Int16();
  g.error_message = r.CompactNullableString();
  g.group_id = r.CompactString();
  g.group_state = r.CompactString();
  g.group_epoch = r.Int32();
  g.assignment_epoch = r.Int32();
  if (r.NullableStructPresent()) {
    DescribedTopology t;
    t.epoch = r.Int32();
    t.subtopologies = ReadNullableArray<Subtopology>(r, 6, ReadDescribedSubtopology);
    r.TaggedFields();
    g.topology = std::move(t);
  }
  g.members = ReadArray<DescribedMember>(r, 28, ReadMember);
  g.authorized_operations = r.Int32();
  if (version >= 1) {
    if (r.NullableStructPresent()) g.topology_description = ReadTopologyDescription(r);
    g.topology_description_status = r.Int8();
    g.assignor_name = r.CompactNullableString();
  }
  r.TaggedFields();
  return g;
}

}  // namespace

std::string Encode(const StreamsGroupDescribeRequest& m, int16_t version) {
  RS_CHECK(Speaks(kStreamsGroupDescribeVersions, version), "StreamsGroupDescribe v0 or v1");
  Writer w;
  WriteStrings(w, m.group_ids);
  w.Bool(m.include_authorized_operations);
  if (version >= 1) w.Bool(m.include_topology_description);
  w.TaggedFields(m.tagged_fields);
  return w.Take();
}

absl::StatusOr<StreamsGroupDescribeRequest> DecodeStreamsGroupDescribeRequest(
    std::string_view b, int16_t v) {
  if (!Speaks(kStreamsGroupDescribeVersions, v)) return Unspoken("StreamsGroupDescribeRequest", v);
  Reader r(b);
  StreamsGroupDescribeRequest m;
  m.group_ids = ReadStrings(r);
  m.include_authorized_operations = r.Bool();
  if (v >= 1) m.include_topology_description = r.Bool();
  m.tagged_fields = r.TaggedFields();
  return Finish(r, std::move(m));
}

std::string Encode(const StreamsGroupDescribeResponse& m, int16_t version) {
  RS_CHECK(Speaks(kStreamsGroupDescribeVersions, version), "StreamsGroupDescribe v0 or v1");
  Writer w;
  w.Int32(m.throttle_time_ms);
  WriteArray(w, m.groups, [version](Writer& x, const DescribedGroup& g) {
    WriteGroup(x, g, version);
  });
  w.TaggedFields(m.tagged_fields);
  return w.Take();
}

absl::StatusOr<StreamsGroupDescribeResponse> DecodeStreamsGroupDescribeResponse(
    std::string_view b, int16_t v) {
  if (!Speaks(kStreamsGroupDescribeVersions, v)) return Unspoken("StreamsGroupDescribeResponse", v);
  Reader r(b);
  StreamsGroupDescribeResponse m;
  m.throttle_time_ms = r.Int32();
  m.groups = ReadArray<DescribedGroup>(r, 20, [v](Reader& x) { return ReadGroup(x, v); });
  m.tagged_fields = r.TaggedFields();
  return Finish(r, std::move(m));
}

}  // namespace restoresim::kafka_protocol
