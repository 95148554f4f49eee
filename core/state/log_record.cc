#include "core/state/log_record.h"

#include "core/util/check.h"
#include "core/util/stable_hash.h"

namespace restoresim {
namespace {

constexpr uint8_t kPut = 1;
constexpr uint8_t kDelete = 2;
constexpr size_t kHeaderBytes = 8;
constexpr size_t kBodyFixedBytes = 5;  // type + key length

void PutU32(std::string& out, uint32_t v) {
  const char bytes[4] = {static_cast<char>(v & 0xFF), static_cast<char>((v >> 8) & 0xFF),
                         static_cast<char>((v >> 16) & 0xFF), static_cast<char>(v >> 24)};
  out.append(bytes, sizeof(bytes));  // one append, not four push_backs
}

uint32_t GetU32(std::string_view in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(in[i])} << (8 * i);
  return v;
}

uint32_t Checksum(uint64_t salt, std::string_view body) {
  StableHash h;
  if (salt != 0) h.Add(salt);
  h.AddString(body);
  return static_cast<uint32_t>(h.Value());
}

}  // namespace

void AppendLogRecord(std::string& out, std::string_view key, const std::string_view* value,
                     uint64_t salt) {
  // The body is written in place after a header whose checksum is filled in last: no
  // temporary string per record (every write to a store appends one).
  const size_t body_size = kBodyFixedBytes + key.size() + (value ? value->size() : 0);
  const size_t header_at = out.size();
  PutU32(out, static_cast<uint32_t>(body_size));
  PutU32(out, 0);  // the checksum, once the body is there
  out.push_back(static_cast<char>(value ? kPut : kDelete));
  PutU32(out, static_cast<uint32_t>(key.size()));
  out.append(key);
  if (value) out.append(*value);
  const std::string_view body = std::string_view(out).substr(header_at + kHeaderBytes);
  RS_CHECK(body.size() == body_size, "a log record's body is {} bytes, not {}", body.size(),
           body_size);
  const uint32_t checksum = Checksum(salt, body);
  for (int i = 0; i < 4; ++i) {
    out[header_at + 4 + i] = static_cast<char>((checksum >> (8 * i)) & 0xFF);
  }
}

DecodeResult DecodeLogRecord(std::string_view in, DecodedLogRecord& out, uint64_t salt) {
  if (in.size() < kHeaderBytes) return DecodeResult::kIncomplete;
  const uint32_t length = GetU32(in);
  if (length < kBodyFixedBytes || length > kLogRecordBytesMax) return DecodeResult::kCorrupt;
  if (in.size() < kHeaderBytes + length) return DecodeResult::kIncomplete;
  const std::string_view body = in.substr(kHeaderBytes, length);
  if (Checksum(salt, body) != GetU32(in.substr(4))) return DecodeResult::kCorrupt;
  const auto type = static_cast<uint8_t>(body[0]);
  const uint32_t key_length = GetU32(body.substr(1));
  if ((type != kPut && type != kDelete) || key_length > length - kBodyFixedBytes) {
    return DecodeResult::kCorrupt;
  }
  out.key = body.substr(kBodyFixedBytes, key_length);
  const std::string_view rest = body.substr(kBodyFixedBytes + key_length);
  if (type == kDelete && !rest.empty()) return DecodeResult::kCorrupt;
  out.value = type == kPut ? std::optional<std::string_view>(rest) : std::nullopt;
  out.bytes = kHeaderBytes + length;
  return DecodeResult::kOk;
}

}  // namespace restoresim
