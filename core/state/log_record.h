// The record format of LogStore segments, separate so it can be tested (and fuzzed) alone.
//   u32 length (of everything after the checksum) | u32 checksum (of the segment's salt, then
//   those bytes) | u8 type (1 put, 2 delete) | u32 key length | key | value (the rest; empty for
//   a delete)
// Integers are little-endian. The salt binds a record to the segment it was written to (see
// log_store_manifest.h): a record that reached another store's segment — a misdirected write,
// or a file copied from elsewhere — fails its checksum there. Salt 0 is no salt (the checksum
// of the bytes alone, what version 1 segments hold).
#ifndef RESTORESIM_CORE_STATE_LOG_RECORD_H_
#define RESTORESIM_CORE_STATE_LOG_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace restoresim {

inline constexpr uint32_t kLogRecordBytesMax = 64u << 20;  // a longer record is corruption

void AppendLogRecord(std::string& out, std::string_view key, const std::string_view* value,
                     uint64_t salt = 0);

struct DecodedLogRecord {
  std::string_view key;
  std::optional<std::string_view> value;  // nullopt: a delete
  size_t bytes = 0;                       // how much of the input it used
};

enum class DecodeResult { kOk, kIncomplete, kCorrupt };

// Decodes the record at the start of `in` (views point into `in`), written with `salt`.
DecodeResult DecodeLogRecord(std::string_view in, DecodedLogRecord& out, uint64_t salt = 0);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_LOG_RECORD_H_
