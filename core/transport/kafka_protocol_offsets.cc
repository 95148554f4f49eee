// OffsetCommit (key 8) v9: a streams-group member's commit, carrying its member id and epoch
// (issue 26). Paraphrased from Kafka 4.4's OffsetCommitRequest.json and OffsetCommitResponse.json
// (flexible from v8; v9 names topics, v10 gives topic ids instead). Declared in
// kafka_protocol_messages.h.
#include "core/transport/kafka_protocol_messages.h"
#include "core/transport/kafka_protocol_structs.h"
#include "core/util/check.h"

namespace restoresim::kafka_protocol {

using namespace internal;  // NOLINT(build/namespaces): the codec's own helpers

std::string Encode(const OffsetCommitRequest& m, int16_t version) {
  RS_CHECK(Speaks(kOffsetCommitVersions, version), "OffsetCommit v9");
  Writer w;
  w.CompactString(m.group_id);
  w.Int32(m.generation_id_or_member_epoch);
  w.CompactString(m.member_id);
  w.CompactNullableString(m.group_instance_id);
  WriteArray(w, m.topics, [](Writer& x, const OffsetCommitTopic& t) {
    x.CompactString(t.name);
    WriteArray(x, t.partitions, [](Writer& y, const OffsetCommitPartition& p) {
      y.Int32(p.partition_index);
      y.Int64(p.committed_offset);
      y.Int32(p.committed_leader_epoch);
      y.CompactNullableString(p.committed_metadata);
      y.NoTaggedFields();
    });
    x.NoTaggedFields();
  });
  w.TaggedFields(m.tagged_fields);
  return w.Take();
}

absl::StatusOr<OffsetCommitRequest> DecodeOffsetCommitRequest(std::string_view b, int16_t v) {
  if (!Speaks(kOffsetCommitVersions, v)) return Unspoken("OffsetCommitRequest", v);
  Reader r(b);
  OffsetCommitRequest m;
  m.group_id = r.CompactString();
  m.generation_id_or_member_epoch = r.Int32();
  m.member_id = r.CompactString();
  m.group_instance_id = r.CompactNullableString();
  // A topic takes at least its name's length, an empty array and its tags: 3 bytes; a
  // partition 4 + 8 + 4 + 1 + 1.
  m.topics = ReadArray<OffsetCommitTopic>(r, 3, [](Reader& x) {
    OffsetCommitTopic t;
    t.name = x.CompactString();
    t.partitions = ReadArray<OffsetCommitPartition>(x, 18, [](Reader& y) {
      OffsetCommitPartition p;
      p.partition_index = y.Int32();
      p.committed_offset = y.Int64();
      p.committed_leader_epoch = y.Int32();
      p.committed_metadata = y.CompactNullableString();
      y.TaggedFields();
      return p;
    });
    x.TaggedFields();
    return t;
  });
  m.tagged_fields = r.TaggedFields();
  return Finish(r, std::move(m));
}

std::string Encode(const OffsetCommitResponse& m, int16_t version) {
  RS_CHECK(Speaks(kOffsetCommitVersions, version), "OffsetCommit v9");
  Writer w;
  w.Int32(m.throttle_time_ms);
  WriteArray(w, m.topics, [](Writer& x, const OffsetCommitTopicResult& t) {
    x.CompactString(t.name);
    WriteArray(x, t.partitions, [](Writer& y, const OffsetCommitPartitionResult& p) {
      y.Int32(p.partition_index);
      y.Int16(p.error_code);
      y.NoTaggedFields();
    });
    x.NoTaggedFields();
  });
  w.TaggedFields(m.tagged_fields);
  return w.Take();
}

absl::StatusOr<OffsetCommitResponse> DecodeOffsetCommitResponse(std::string_view b, int16_t v) {
  if (!Speaks(kOffsetCommitVersions, v)) return Unspoken("OffsetCommitResponse", v);
  Reader r(b);
  OffsetCommitResponse m;
  m.throttle_time_ms = r.Int32();
  m.topics = ReadArray<OffsetCommitTopicResult>(r, 3, [](Reader& x) {
    OffsetCommitTopicResult t;
    t.name = x.CompactString();
    t.partitions = ReadArray<OffsetCommitPartitionResult>(x, 7, [](Reader& y) {
      OffsetCommitPartitionResult p;
      p.partition_index = y.Int32();
      p.error_code = y.Int16();
      y.TaggedFields();
      return p;
    });
    x.TaggedFields();
    return t;
  });
  m.tagged_fields = r.TaggedFields();
  return Finish(r, std::move(m));
}

}  // namespace restoresim::kafka_protocol
