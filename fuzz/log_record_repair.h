// Helpers for fuzzing LogStore records (core/state/log_record.h): random bytes almost never
// carry a matching 32-bit checksum, so the targets also try each input with its records'
// checksums recomputed ("repaired"), which lets mutations reach the type, key-length and
// value checks and the store's replay of records that decode.
#ifndef RESTORESIM_FUZZ_LOG_RECORD_REPAIR_H_
#define RESTORESIM_FUZZ_LOG_RECORD_REPAIR_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "core/state/log_record.h"
#include "core/util/stable_hash.h"

namespace restoresim::fuzz {

inline uint32_t LoadU32(std::string_view in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(in[i])} << (8 * i);
  return v;
}

// The checksum log_record.cc stores: the low 32 bits of the StableHash of the segment's salt
// (none for salt 0) and the body.
inline uint32_t RecordChecksum(uint64_t salt, std::string_view body) {
  StableHash h;
  if (salt != 0) h.Add(salt);
  h.AddString(body);
  return static_cast<uint32_t>(h.Value());
}

// Rewrites the checksum of each record along `bytes` (from `begin` to `end`) for `salt`,
// following the length fields, until one does not fit (a length out of bounds or past the end).
inline void RepairRecordChecksums(std::string& bytes, size_t begin, size_t end, uint64_t salt) {
  constexpr size_t kHeaderBytes = 8;
  size_t at = begin;
  while (end - at >= kHeaderBytes) {
    const uint32_t length = LoadU32(std::string_view(bytes).substr(at));
    if (length < 5 || length > kLogRecordBytesMax || end - at - kHeaderBytes < length) return;
    const uint32_t sum =
        RecordChecksum(salt, std::string_view(bytes).substr(at + kHeaderBytes, length));
    for (int i = 0; i < 4; ++i) bytes[at + 4 + i] = static_cast<char>((sum >> (8 * i)) & 0xFF);
    at += kHeaderBytes + length;
  }
}

}  // namespace restoresim::fuzz

#endif  // RESTORESIM_FUZZ_LOG_RECORD_REPAIR_H_
