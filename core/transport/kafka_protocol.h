// The Kafka wire format's primitives, for the messages librdkafka does not speak (issue 26:
// streams groups, KIP-1071). Kafka counterparts: org.apache.kafka.common.protocol.Writable and
// Readable over a ByteBufferAccessor, with ByteUtils' varints, and the generated messages'
// compact (flexible-version) forms: a compact string or array is its length + 1 as an unsigned
// varint (0 = null), and every struct ends with its tagged fields (a count, then tag, size and
// bytes each, tags strictly ascending).
//
// Pure code: no sockets, no clock. The reader never trusts a length: every read checks what
// remains, the first failure sticks (later reads return zeros and empties), and the caller asks
// status() once at the end, so a truncated or malformed response is an error, never a crash or
// a huge allocation.
//
// Thread-safety: none; a Writer or Reader belongs to one caller.
#ifndef RESTORESIM_CORE_TRANSPORT_KAFKA_PROTOCOL_H_
#define RESTORESIM_CORE_TRANSPORT_KAFKA_PROTOCOL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace restoresim::kafka_protocol {

// A tagged field a decoder does not know (Kafka's RawTaggedField): kept and written back.
struct RawTaggedField {
  uint32_t tag = 0;
  std::string data;
  bool operator==(const RawTaggedField&) const = default;
};

class Writer {
 public:
  void Int8(int8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void Bool(bool v) { Int8(v ? 1 : 0); }
  void Int16(int16_t v) { BigEndian(static_cast<uint16_t>(v), 2); }
  void Uint16(uint16_t v) { BigEndian(v, 2); }
  void Int32(int32_t v) { BigEndian(static_cast<uint32_t>(v), 4); }
  void Int64(int64_t v) { BigEndian(static_cast<uint64_t>(v), 8); }
  void UnsignedVarint(uint32_t v);
  void CompactString(std::string_view s);
  void CompactNullableString(const std::optional<std::string>& s);
  void CompactBytes(std::string_view b);
  // A classic (non-compact) nullable string: int16 length, -1 for null (the request header's
  // client id, even in header v2).
  void NullableString(const std::optional<std::string>& s);
  // A compact array's length (n + 1); a nullable one writes 0 for null.
  void CompactArrayLength(size_t n);
  void CompactNullableArrayLength(std::optional<size_t> n);
  // Tagged fields, which must be sorted by tag with no repeats (RS_CHECK).
  void TaggedFields(const std::vector<RawTaggedField>& fields);
  void NoTaggedFields() { UnsignedVarint(0); }
  void Raw(std::string_view b) { bytes_.append(b); }

  const std::string& bytes() const { return bytes_; }
  std::string Take() { return std::move(bytes_); }

 private:
  void BigEndian(uint64_t v, int width);
  std::string bytes_;
};

class Reader {
 public:
  // Reads `bytes` in place: they must outlive the reader (hence no temporary strings).
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  explicit Reader(std::string&& bytes) = delete;

  int8_t Int8() { return static_cast<int8_t>(BigEndian(1, "int8")); }
  bool Bool() { return Int8() != 0; }
  int16_t Int16() { return static_cast<int16_t>(BigEndian(2, "int16")); }
  uint16_t Uint16() { return static_cast<uint16_t>(BigEndian(2, "uint16")); }
  int32_t Int32() { return static_cast<int32_t>(BigEndian(4, "int32")); }
  int64_t Int64() { return static_cast<int64_t>(BigEndian(8, "int64")); }
  uint32_t UnsignedVarint();
  std::string CompactString();
  std::optional<std::string> CompactNullableString();
  std::string CompactBytes();
  std::optional<std::string> NullableString();
  // A compact array's element count, refused when more than `min_element_bytes` each could not
  // fit in what remains (so a forged count allocates nothing). Null (0) is an error here.
  size_t CompactArrayLength(size_t min_element_bytes);
  std::optional<size_t> CompactNullableArrayLength(size_t min_element_bytes);
  // The tagged fields of a struct: all kept, in order; a repeated or unsorted tag is an error.
  std::vector<RawTaggedField> TaggedFields();
  // A nullable struct's marker (Kafka writes -1 for null, 1 for present; reads any negative
  // as null).
  bool NullableStructPresent();

  // Fails unless every byte was read.
  void ExpectEnd();
  void Fail(std::string what);
  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }
  size_t remaining() const { return rest_.size(); }

 private:
  uint64_t BigEndian(int width, const char* what);
  std::string_view Take(size_t n, const char* what);
  std::string_view rest_;
  size_t consumed_ = 0;
  absl::Status status_;
};

// Arrays of structs or scalars: `one(writer, item)` / `one(reader)` for each element.
template <typename T, typename Fn>
void WriteArray(Writer& w, const std::vector<T>& items, Fn one) {
  w.CompactArrayLength(items.size());
  for (const T& item : items) one(w, item);
}
template <typename T, typename Fn>
void WriteNullableArray(Writer& w, const std::optional<std::vector<T>>& items, Fn one) {
  if (!items) return w.CompactNullableArrayLength(std::nullopt);
  WriteArray(w, *items, one);
}
// `min_bytes`: the fewest bytes one element can take, so a forged count is refused up front.
template <typename T, typename Fn>
std::vector<T> ReadArray(Reader& r, size_t min_bytes, Fn one) {
  std::vector<T> items;
  const size_t n = r.CompactArrayLength(min_bytes);
  items.reserve(n);
  for (size_t i = 0; r.ok() && i < n; ++i) items.push_back(one(r));
  return items;
}
template <typename T, typename Fn>
std::optional<std::vector<T>> ReadNullableArray(Reader& r, size_t min_bytes, Fn one) {
  const std::optional<size_t> n = r.CompactNullableArrayLength(min_bytes);
  if (!n) return std::nullopt;
  std::vector<T> items;
  items.reserve(*n);
  for (size_t i = 0; r.ok() && i < *n; ++i) items.push_back(one(r));
  return items;
}

}  // namespace restoresim::kafka_protocol

#endif  // RESTORESIM_CORE_TRANSPORT_KAFKA_PROTOCOL_H_
