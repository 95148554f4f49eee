#include "core/transport/kafka_protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "core/util/check.h"

namespace restoresim::kafka_protocol {

namespace {
// An unsigned varint of a 32-bit value takes at most 5 bytes (ByteUtils.readUnsignedVarint).
constexpr int kVarintBytesMax = 5;
}  // namespace

void Writer::BigEndian(uint64_t v, int width) {
  for (int i = width - 1; i >= 0; --i) bytes_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void Writer::UnsignedVarint(uint32_t v) {
  while ((v & ~0x7fu) != 0) {
    bytes_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  bytes_.push_back(static_cast<char>(v));
}

void Writer::CompactString(std::string_view s) {
  RS_CHECK_LE(s.size(), static_cast<size_t>(std::numeric_limits<int16_t>::max()),
              "a Kafka string is at most 32767 bytes");
  UnsignedVarint(static_cast<uint32_t>(s.size() + 1));
  bytes_.append(s);
}

void Writer::CompactNullableString(const std::optional<std::string>& s) {
  if (!s) return UnsignedVarint(0);
  CompactString(*s);
}

void Writer::CompactBytes(std::string_view b) {
  UnsignedVarint(static_cast<uint32_t>(b.size() + 1));
  bytes_.append(b);
}

void Writer::NullableString(const std::optional<std::string>& s) {
  if (!s) return Int16(-1);
  RS_CHECK_LE(s->size(), static_cast<size_t>(std::numeric_limits<int16_t>::max()));
  Int16(static_cast<int16_t>(s->size()));
  bytes_.append(*s);
}

void Writer::CompactArrayLength(size_t n) {
  RS_CHECK_LT(n, static_cast<size_t>(std::numeric_limits<int32_t>::max()));
  UnsignedVarint(static_cast<uint32_t>(n + 1));
}

void Writer::CompactNullableArrayLength(std::optional<size_t> n) {
  if (!n) return UnsignedVarint(0);
  CompactArrayLength(*n);
}

void Writer::TaggedFields(const std::vector<RawTaggedField>& fields) {
  UnsignedVarint(static_cast<uint32_t>(fields.size()));
  for (size_t i = 0; i < fields.size(); ++i) {
    RS_CHECK(i == 0 || fields[i - 1].tag < fields[i].tag, "tagged fields sorted, no repeats");
    UnsignedVarint(fields[i].tag);
    UnsignedVarint(static_cast<uint32_t>(fields[i].data.size()));
    bytes_.append(fields[i].data);
  }
}

void Reader::Fail(std::string what) {
  if (!status_.ok()) return;
  status_ = absl::DataLossError(fmt::format("malformed Kafka message at byte {}: {}", consumed_,
                                            what));
  rest_ = {};
}

std::string_view Reader::Take(size_t n, const char* what) {
  if (!status_.ok()) return {};
  if (n > rest_.size()) {
    Fail(fmt::format("{} needs {} bytes, {} left", what, n, rest_.size()));
    return {};
  }
  std::string_view taken = rest_.substr(0, n);
  rest_.remove_prefix(n);
  consumed_ += n;
  return taken;
}

uint64_t Reader::BigEndian(int width, const char* what) {
  std::string_view b = Take(static_cast<size_t>(width), what);
  uint64_t v = 0;
  for (char c : b) v = (v << 8) | static_cast<uint8_t>(c);
  return v;
}

uint32_t Reader::UnsignedVarint() {
  uint32_t v = 0;
  for (int i = 0; i < kVarintBytesMax; ++i) {
    std::string_view b = Take(1, "varint");
    if (b.empty()) return 0;
    const auto byte = static_cast<uint8_t>(b[0]);
    if (i == kVarintBytesMax - 1 && (byte & 0xf0) != 0) break;  // past 32 bits
    v |= static_cast<uint32_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) return v;
  }
  Fail("a varint longer than 32 bits");
  return 0;
}

std::optional<std::string> Reader::CompactNullableString() {
  const uint32_t n = UnsignedVarint();
  if (!ok() || n == 0) return std::nullopt;
  if (n - 1 > static_cast<uint32_t>(std::numeric_limits<int16_t>::max())) {
    Fail(fmt::format("a string of {} bytes (at most 32767)", n - 1));
    return std::nullopt;
  }
  return std::string(Take(n - 1, "string"));
}

std::string Reader::CompactString() {
  const bool was_ok = ok();
  std::optional<std::string> s = CompactNullableString();
  if (!s && was_ok && ok()) Fail("a null string where one is required");
  return s.value_or(std::string());
}

std::string Reader::CompactBytes() {
  const uint32_t n = UnsignedVarint();
  if (!ok()) return {};
  if (n == 0) {
    Fail("null bytes where they are required");
    return {};
  }
  return std::string(Take(n - 1, "bytes"));
}

std::optional<std::string> Reader::NullableString() {
  const int16_t n = Int16();
  if (!ok() || n == -1) return std::nullopt;
  if (n < 0) {
    Fail(fmt::format("a string length of {}", n));
    return std::nullopt;
  }
  return std::string(Take(static_cast<size_t>(n), "string"));
}

std::optional<size_t> Reader::CompactNullableArrayLength(size_t min_element_bytes) {
  const uint32_t n = UnsignedVarint();
  if (!ok() || n == 0) return std::nullopt;
  const size_t count = n - 1;
  if (count > rest_.size() / std::max<size_t>(min_element_bytes, 1)) {
    Fail(fmt::format("an array of {} elements in {} bytes", count, rest_.size()));
    return std::nullopt;
  }
  return count;
}

size_t Reader::CompactArrayLength(size_t min_element_bytes) {
  const bool was_ok = ok();
  std::optional<size_t> n = CompactNullableArrayLength(min_element_bytes);
  if (!n && was_ok && ok()) Fail("a null array where one is required");
  return n.value_or(0);
}

std::vector<RawTaggedField> Reader::TaggedFields() {
  std::vector<RawTaggedField> fields;
  // Each field takes at least 2 bytes (its tag and its size).
  const uint32_t count = UnsignedVarint();
  if (ok() && count > rest_.size() / 2) Fail(fmt::format("{} tagged fields", count));
  for (uint32_t i = 0; ok() && i < count; ++i) {
    const uint32_t tag = UnsignedVarint();
    if (ok() && !fields.empty() && tag <= fields.back().tag) {
      Fail(fmt::format("tagged field {} after {}", tag, fields.back().tag));
    }
    const uint32_t size = UnsignedVarint();
    std::string_view data = Take(size, "tagged field");
    if (ok()) fields.push_back(RawTaggedField{tag, std::string(data)});
  }
  return fields;
}

bool Reader::NullableStructPresent() {
  // As Kafka's generated readers: any negative marker is null, any other present.
  const int8_t marker = Int8();
  return ok() && marker >= 0;
}

void Reader::ExpectEnd() {
  if (ok() && !rest_.empty()) Fail(fmt::format("{} bytes left over", rest_.size()));
}

}  // namespace restoresim::kafka_protocol
