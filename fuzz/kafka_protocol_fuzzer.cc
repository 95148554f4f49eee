// Fuzzes the Kafka protocol codec's decoders (core/transport/kafka_protocol_messages.h, issue
// 26): what a broker sends back must never crash the member. The input's first byte picks the
// message and version (bits 0-2: the message, bit 3: the version; with bit 4 set, the second
// table: bits 1-2 pick OffsetCommit v9 (0) or OffsetFetch v8-v9 (1, bit 3 the version), bit 0
// its response or request), the rest is its body. The contract checked:
//   * a failure is kDataLoss (malformed or truncated) with a message;
//   * a success re-encodes to bytes no longer than the body (nested tagged fields are dropped,
//     non-canonical varints and booleans normalized) that decode to the same message and
//     re-encode to themselves.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/transport/kafka_protocol_messages.h"
#include "fuzz/fuzz_check.h"

namespace restoresim::fuzz {
namespace {

using namespace restoresim::kafka_protocol;  // NOLINT(build/namespaces)

template <typename Decode>
void Check(std::string_view body, int16_t version, Decode decode) {
  auto decoded = decode(body, version);
  if (!decoded.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(decoded.status()), "not DataLoss: {}",
               decoded.status().ToString());
    FUZZ_CHECK(!decoded.status().message().empty());
    return;
  }
  const std::string encoded = Encode(*decoded, version);
  auto again = decode(encoded, version);
  FUZZ_CHECK(again.ok(), "its own encoding refused: {}", again.status().ToString());
  FUZZ_CHECK(*again == *decoded, "decode(encode(m)) != m");
  FUZZ_CHECK(Encode(*again, version) == encoded, "encoding is not a fixed point");
  FUZZ_CHECK(encoded.size() <= body.size(), "{} bytes re-encoded to {}", body.size(),
             encoded.size());
}

}  // namespace
}  // namespace restoresim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace restoresim::kafka_protocol;  // NOLINT(build/namespaces)
  using restoresim::fuzz::Check;
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const int16_t v = (data[0] >> 3) & 1;
  if ((data[0] & 16) != 0) {  // the second table: OffsetCommit v9, OffsetFetch v8-v9
    const bool request = (data[0] & 1) != 0;
    switch ((data[0] >> 1) & 3) {
      case 0:
        request ? Check(body, int16_t{9}, DecodeOffsetCommitRequest)
                : Check(body, int16_t{9}, DecodeOffsetCommitResponse);
        break;
      case 1:
        request ? Check(body, static_cast<int16_t>(v + 8), DecodeOffsetFetchRequest)
                : Check(body, static_cast<int16_t>(v + 8), DecodeOffsetFetchResponse);
        break;
      default: break;
    }
    return 0;
  }
  switch (data[0] & 7) {
    case 0: Check(body, v, DecodeStreamsGroupHeartbeatResponse); break;
    case 1: Check(body, v, DecodeStreamsGroupHeartbeatRequest); break;
    case 2: Check(body, v, DecodeStreamsGroupDescribeResponse); break;
    case 3: Check(body, v, DecodeStreamsGroupDescribeRequest); break;
    case 4: Check(body, static_cast<int16_t>(v + 3), DecodeApiVersionsResponse); break;
    case 5: Check(body, static_cast<int16_t>(v + 3), DecodeApiVersionsRequest); break;
    case 6: Check(body, static_cast<int16_t>(v + 4), DecodeFindCoordinatorResponse); break;
    case 7: Check(body, static_cast<int16_t>(v + 4), DecodeFindCoordinatorRequest); break;
    default: break;
  }
  return 0;
}
