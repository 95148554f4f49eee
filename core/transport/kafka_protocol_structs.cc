#include "core/transport/kafka_protocol_structs.h"

#include <fmt/format.h>

namespace restoresim::kafka_protocol::internal {

bool Speaks(VersionRange range, int16_t version) {
  return version >= range.min && version <= range.max;
}

absl::Status Unspoken(std::string_view message, int16_t version) {
  return absl::InvalidArgumentError(
      fmt::format("{} v{} is not a version this codec speaks", message, version));
}

void WriteStrings(Writer& w, const std::vector<std::string>& v) {
  WriteArray(w, v, [](Writer& x, const std::string& s) { x.CompactString(s); });
}
std::vector<std::string> ReadStrings(Reader& r) {
  return ReadArray<std::string>(r, 1, [](Reader& x) { return x.CompactString(); });
}
void WriteInt32s(Writer& w, const std::vector<int32_t>& v) {
  WriteArray(w, v, [](Writer& x, int32_t i) { x.Int32(i); });
}
std::vector<int32_t> ReadInt32s(Reader& r) {
  return ReadArray<int32_t>(r, 4, [](Reader& x) { return x.Int32(); });
}
void WriteInt16s(Writer& w, const std::vector<int16_t>& v) {
  WriteArray(w, v, [](Writer& x, int16_t i) { x.Int16(i); });
}
std::vector<int16_t> ReadInt16s(Reader& r) {
  return ReadArray<int16_t>(r, 2, [](Reader& x) { return x.Int16(); });
}

void WriteKeyValue(Writer& w, const KeyValue& kv) {
  w.CompactString(kv.key);
  w.CompactString(kv.value);
  w.NoTaggedFields();
}
KeyValue ReadKeyValue(Reader& r) {
  KeyValue kv;
  kv.key = r.CompactString();
  kv.value = r.CompactString();
  r.TaggedFields();
  return kv;
}

void WriteTopicInfo(Writer& w, const TopicInfo& t) {
  w.CompactString(t.name);
  w.Int32(t.partitions);
  w.Int16(t.replication_factor);
  WriteArray(w, t.topic_configs, WriteKeyValue);
  w.NoTaggedFields();
}
TopicInfo ReadTopicInfo(Reader& r) {
  TopicInfo t;
  t.name = r.CompactString();
  t.partitions = r.Int32();
  t.replication_factor = r.Int16();
  t.topic_configs = ReadArray<KeyValue>(r, 3, ReadKeyValue);
  r.TaggedFields();
  return t;
}

void WriteTaskIds(Writer& w, const TaskIds& t) {
  w.CompactString(t.subtopology_id);
  WriteInt32s(w, t.partitions);
  w.NoTaggedFields();
}
TaskIds ReadTaskIds(Reader& r) {
  TaskIds t;
  t.subtopology_id = r.CompactString();
  t.partitions = ReadInt32s(r);
  r.TaggedFields();
  return t;
}

void WriteTaskOffset(Writer& w, const TaskOffset& t) {
  w.CompactString(t.subtopology_id);
  w.Int32(t.partition);
  w.Int64(t.offset);
  w.NoTaggedFields();
}
TaskOffset ReadTaskOffset(Reader& r) {
  TaskOffset t;
  t.subtopology_id = r.CompactString();
  t.partition = r.Int32();
  t.offset = r.Int64();
  r.TaggedFields();
  return t;
}

void WriteEndpoint(Writer& w, const Endpoint& e) {
  w.CompactString(e.host);
  w.Uint16(e.port);
  w.NoTaggedFields();
}
Endpoint ReadEndpoint(Reader& r) {
  Endpoint e;
  e.host = r.CompactString();
  e.port = r.Uint16();
  r.TaggedFields();
  return e;
}

}  // namespace restoresim::kafka_protocol::internal
