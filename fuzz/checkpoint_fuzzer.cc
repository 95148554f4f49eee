// Fuzzes DecodeCheckpoint (core/state/checkpoint_file.h), the reader of a task's checkpoint
// file. Each input is decoded twice: as given, and "resealed" (its last line replaced by the
// checksum of the lines before it), so that mutations get past the checksum into the header,
// count and entry parsing. The contract checked:
//   * a failure is kDataLoss (the header promises it for anything malformed), with a message;
//   * a success holds at most kCheckpointEntriesMax entries, each with a non-empty topic free
//     of spaces and newlines and a non-negative partition and offset;
//   * a success re-encodes (EncodeCheckpoint) to text that decodes to the same offsets, and
//     that text is a fixed point (encoding again gives the same bytes).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/state/checkpoint_file.h"
#include "core/util/stable_hash.h"
#include "fuzz/fuzz_check.h"

namespace restoresim::fuzz {
namespace {

// The input with a correct checksum line: the checksum covers every line before it, each
// hashed as checkpoint_file.cc hashes them.
std::string Reseal(std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  std::vector<std::string_view> lines;
  for (size_t start = 0;;) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (lines.back().starts_with("checksum")) lines.pop_back();
  StableHash h;
  std::string out;
  for (std::string_view line : lines) {
    h.AddString(line);
    out.append(line);
    out += '\n';
  }
  return out + fmt::format("checksum {:016x}\n", h.Value());
}

void CheckDecode(std::string_view text) {
  absl::StatusOr<CheckpointOffsets> decoded = DecodeCheckpoint(text);
  if (!decoded.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(decoded.status()), "not DataLoss: {}",
               decoded.status().ToString());
    FUZZ_CHECK(!decoded.status().message().empty());
    return;
  }
  FUZZ_CHECK(decoded->size() <= kCheckpointEntriesMax, "{} entries", decoded->size());
  for (const auto& [tp, offset] : *decoded) {
    FUZZ_CHECK(!tp.topic.empty() && tp.topic.view().find_first_of(" \n") == std::string_view::npos,
               "topic '{}'", tp.topic);
    FUZZ_CHECK(tp.partition >= 0 && offset >= 0, "{} at {}", tp.ToString(), offset);
  }
  const std::string encoded = EncodeCheckpoint(*decoded);
  absl::StatusOr<CheckpointOffsets> again = DecodeCheckpoint(encoded);
  FUZZ_CHECK(again.ok(), "the re-encoded checkpoint does not decode: {}\n{}",
             again.status().ToString(), encoded);
  FUZZ_CHECK(*again == *decoded, "the re-encoded checkpoint decodes differently:\n{}", encoded);
  FUZZ_CHECK(EncodeCheckpoint(*again) == encoded, "encoding is not a fixed point");
}

}  // namespace
}  // namespace restoresim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  restoresim::fuzz::CheckDecode(text);
  restoresim::fuzz::CheckDecode(restoresim::fuzz::Reseal(text));
  return 0;
}
