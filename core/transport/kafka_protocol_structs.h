// The structs shared by the streams-group messages (kafka_protocol_messages.h), each written and
// read by one pair of functions, nested tagged fields written empty and read and dropped. Kafka
// counterparts: the nested classes of StreamsGroupHeartbeat{Request,Response}Data and
// StreamsGroupDescribeResponseData. Internal to the codec.
//
// Thread-safety: stateless.
#ifndef RESTORESIM_CORE_TRANSPORT_KAFKA_PROTOCOL_STRUCTS_H_
#define RESTORESIM_CORE_TRANSPORT_KAFKA_PROTOCOL_STRUCTS_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/transport/kafka_protocol.h"
#include "core/transport/kafka_protocol_messages.h"

namespace restoresim::kafka_protocol::internal {

void WriteStrings(Writer& w, const std::vector<std::string>& v);
std::vector<std::string> ReadStrings(Reader& r);
void WriteInt32s(Writer& w, const std::vector<int32_t>& v);
std::vector<int32_t> ReadInt32s(Reader& r);
void WriteInt16s(Writer& w, const std::vector<int16_t>& v);
std::vector<int16_t> ReadInt16s(Reader& r);

void WriteKeyValue(Writer& w, const KeyValue& kv);
KeyValue ReadKeyValue(Reader& r);
void WriteTopicInfo(Writer& w, const TopicInfo& t);
TopicInfo ReadTopicInfo(Reader& r);
void WriteTaskIds(Writer& w, const TaskIds& t);
TaskIds ReadTaskIds(Reader& r);
void WriteTaskOffset(Writer& w, const TaskOffset& t);
TaskOffset ReadTaskOffset(Reader& r);
void WriteEndpoint(Writer& w, const Endpoint& e);
Endpoint ReadEndpoint(Reader& r);

// Whether `range` holds `version`; the error a decoder gives for a version outside it.
bool Speaks(VersionRange range, int16_t version);
absl::Status Unspoken(std::string_view message, int16_t version);

// A status of `reader`'s outcome: `value` when every byte was read, else the reader's error.
template <typename T>
absl::StatusOr<T> Finish(Reader& r, T value) {
  r.ExpectEnd();
  if (!r.ok()) return r.status();
  return value;
}

}  // namespace restoresim::kafka_protocol::internal

#endif  // RESTORESIM_CORE_TRANSPORT_KAFKA_PROTOCOL_STRUCTS_H_
