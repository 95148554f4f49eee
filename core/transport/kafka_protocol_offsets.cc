// OffsetCommit (key 8) v9: a streams-group member's commit, carrying its member id and epoch
// (issue 26). Paraphrased from Kafka 4.4's OffsetCommitRequest.json and OffsetCommitResponse.json
// (flexible from v8; v9 names topics, v10 gives topic ids instead). OffsetFetch (key 9) v8–v9,
// from OffsetFetchRequest.json and OffsetFetchResponse.json (flexible from v6; v8 batches
// groups; v9 adds a member's id and epoch; v10 gives topic ids). Declared in
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

namespace {

// A partition result takes 4 + 8 + 4 + 1 (a null metadata) + 2 + 1 bytes; a topic at least its
// name's length, an empty array and its tags; a group that and its error code.
constexpr size_t kFetchPartitionBytes = 20;
constexpr size_t kFetchTopicBytes = 3;
constexpr size_t kFetchGroupBytes = 5;
constexpr size_t kFetchRequestGroupBytes = 3;  // its id, a null topic list and its tags

void WriteFetchGroup(Writer& w, const OffsetFetchGroup& g, int16_t version) {
  w.CompactString(g.group_id);
  if (version >= 9) {
    w.CompactNullableString(g.member_id);
    w.Int32(g.member_epoch);
  }
  WriteNullableArray(w, g.topics, [](Writer& x, const OffsetFetchTopic& t) {
    x.CompactString(t.name);
    WriteArray(x, t.partition_indexes, [](Writer& y, int32_t p) { y.Int32(p); });
    x.NoTaggedFields();
  });
  w.NoTaggedFields();
}

OffsetFetchGroup ReadFetchGroup(Reader& r, int16_t version) {
  OffsetFetchGroup g;
  g.group_id = r.CompactString();
  if (version >= 9) {
    g.member_id = r.CompactNullableString();
    g.member_epoch = r.Int32();
  }
  g.topics = ReadNullableArray<OffsetFetchTopic>(r, kFetchTopicBytes, [](Reader& x) {
    OffsetFetchTopic t;
    t.name = x.CompactString();
    t.partition_indexes = ReadArray<int32_t>(x, 4, [](Reader& y) { return y.Int32(); });
    x.TaggedFields();
    return t;
  });
  r.TaggedFields();
  return g;
}

}  // namespace

std::string Encode(const OffsetFetchRequest& m, int16_t version) {
  RS_CHECK(Speaks(kOffsetFetchVersions, version), "OffsetFetch v8-v9");
  Writer w;
  WriteArray(w, m.groups,
             [version](Writer& x, const OffsetFetchGroup& g) { WriteFetchGroup(x, g, version); });
  w.Bool(m.require_stable);
  w.TaggedFields(m.tagged_fields);
  return w.Take();
}

absl::StatusOr<OffsetFetchRequest> DecodeOffsetFetchRequest(std::string_view b, int16_t v) {
  if (!Speaks(kOffsetFetchVersions, v)) return Unspoken("OffsetFetchRequest", v);
  Reader r(b);
  OffsetFetchRequest m;
  m.groups = ReadArray<OffsetFetchGroup>(r, kFetchRequestGroupBytes,
                                         [v](Reader& x) { return ReadFetchGroup(x, v); });
  m.require_stable = r.Bool();
  m.tagged_fields = r.TaggedFields();
  return Finish(r, std::move(m));
}

std::string Encode(const OffsetFetchResponse& m, int16_t version) {
  RS_CHECK(Speaks(kOffsetFetchVersions, version), "OffsetFetch v8-v9");
  Writer w;
  w.Int32(m.throttle_time_ms);
  WriteArray(w, m.groups, [](Writer& x, const OffsetFetchGroupResult& g) {
    x.CompactString(g.group_id);
    WriteArray(x, g.topics, [](Writer& y, const OffsetFetchTopicResult& t) {
      y.CompactString(t.name);
      WriteArray(y, t.partitions, [](Writer& z, const OffsetFetchPartitionResult& p) {
        z.Int32(p.partition_index);
        z.Int64(p.committed_offset);
        z.Int32(p.committed_leader_epoch);
        z.CompactNullableString(p.metadata);
        z.Int16(p.error_code);
        z.NoTaggedFields();
      });
      y.NoTaggedFields();
    });
    x.Int16(g.error_code);
    x.NoTaggedFields();
  });
  w.TaggedFields(m.tagged_fields);
  return w.Take();
}

absl::StatusOr<OffsetFetchResponse> DecodeOffsetFetchResponse(std::string_view b, int16_t v) {
  if (!Speaks(kOffsetFetchVersions, v)) return Unspoken("OffsetFetchResponse", v);
  Reader r(b);
  OffsetFetchResponse m;
  m.throttle_time_ms = r.Int32();
  m.groups = ReadArray<OffsetFetchGroupResult>(r, kFetchGroupBytes, [](Reader& x) {
    OffsetFetchGroupResult g;
    g.group_id = x.CompactString();
    g.topics = ReadArray<OffsetFetchTopicResult>(x, kFetchTopicBytes, [](Reader& y) {
      OffsetFetchTopicResult t;
      t.name = y.CompactString();
      t.partitions = ReadArray<OffsetFetchPartitionResult>(y, kFetchPartitionBytes, [](Reader& z) {
        OffsetFetchPartitionResult p;
        p.partition_index = z.Int32();
        p.committed_offset = z.Int64();
        p.committed_leader_epoch = z.Int32();
        p.metadata = z.CompactNullableString();
        p.error_code = z.Int16();
        z.TaggedFields();
        return p;
      });
      y.TaggedFields();
      return t;
    });
    g.error_code = x.Int16();
    x.TaggedFields();
    return g;
  });
  m.tagged_fields = r.TaggedFields();
  return Finish(r, std::move(m));
}

}  // namespace restoresim::kafka_protocol
