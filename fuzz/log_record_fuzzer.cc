// Fuzzes DecodeLogRecord (core/state/log_record.h), the decoder LogStore replays its segments
// with. Each input is read as a segment, record after record: as given without a salt, and
// with its checksums repaired (log_record_repair.h) for no salt and for a segment's salt. The
// contract checked for every record decoded:
//   * kOk: the record used at least its 13 header bytes and no more than it was given; its key
//     and value lie inside those bytes; AppendLogRecord of the key and value gives back exactly
//     those bytes for the same salt (the format has one encoding); decoding just those bytes,
//     without what follows, gives the same record; every strict prefix of them is
//     kIncomplete, never kCorrupt (a write cut short by a crash reads as a torn tail);
//   * kIncomplete: the input really is shorter than a header, or than the length it announces;
//   * nothing reads outside the input (ASan).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/state/log_record.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/log_record_repair.h"

namespace restoresim::fuzz {
namespace {

constexpr size_t kRecordsPerInputMax = 1 << 16;

bool Within(std::string_view inner, std::string_view outer) {
  return inner.data() >= outer.data() && inner.data() + inner.size() <= outer.data() + outer.size();
}

// Not 0 (no salt): what LogStore::SegmentSalt could give.
constexpr uint64_t kSalt = 0x5A17'5A17'5A17'5A17ull;

void CheckRecord(std::string_view in, const DecodedLogRecord& r, uint64_t salt) {
  FUZZ_CHECK(r.bytes >= 13 && r.bytes <= in.size(), "{} bytes of {}", r.bytes, in.size());
  const std::string_view used = in.substr(0, r.bytes);
  FUZZ_CHECK(Within(r.key, used.substr(13)), "the key lies outside the record");
  FUZZ_CHECK(!r.value || Within(*r.value, used.substr(13)), "the value lies outside the record");
  std::string encoded;
  const std::string_view value = r.value.value_or("");
  AppendLogRecord(encoded, r.key, r.value ? &value : nullptr, salt);
  FUZZ_CHECK(encoded == used, "re-encoding gives {} bytes, the record was {}", encoded.size(),
             used.size());
  DecodedLogRecord alone;
  FUZZ_CHECK(DecodeLogRecord(used, alone, salt) == DecodeResult::kOk && alone.bytes == r.bytes &&
                 alone.key == r.key && alone.value == r.value,
             "the record decodes differently without the bytes after it");
  for (size_t cut : {size_t{0}, size_t{7}, size_t{8}, size_t{13}, r.bytes - 1}) {
    if (cut >= r.bytes) continue;
    DecodedLogRecord torn;
    FUZZ_CHECK(DecodeLogRecord(used.substr(0, cut), torn, salt) == DecodeResult::kIncomplete,
               "a record cut to {} of its {} bytes is not incomplete", cut, r.bytes);
  }
}

void CheckSegment(std::string_view in, uint64_t salt) {
  for (size_t records = 0; !in.empty(); ++records) {
    FUZZ_CHECK(records < kRecordsPerInputMax, "no progress");
    DecodedLogRecord r;
    const DecodeResult result = DecodeLogRecord(in, r, salt);
    if (result == DecodeResult::kIncomplete) {
      FUZZ_CHECK(in.size() < 8 || in.size() < 8 + uint64_t{LoadU32(in)},
                 "{} bytes announcing a {}-byte body reported incomplete", in.size(),
                 LoadU32(in));
      return;
    }
    if (result == DecodeResult::kCorrupt) return;
    CheckRecord(in, r, salt);
    in.remove_prefix(r.bytes);
  }
}

}  // namespace
}  // namespace restoresim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace restoresim::fuzz;
  const std::string input(reinterpret_cast<const char*>(data), size);
  CheckSegment(input, 0);
  for (uint64_t salt : {uint64_t{0}, kSalt}) {
    std::string repaired = input;
    RepairRecordChecksums(repaired, 0, repaired.size(), salt);
    CheckSegment(repaired, salt);
  }
  return 0;
}
