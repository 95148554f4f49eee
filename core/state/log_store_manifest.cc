#include "core/state/log_store_manifest.h"

#include <charconv>
#include <iterator>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "absl/status/status.h"
#include "core/util/check.h"
#include "core/util/stable_hash.h"

namespace restoresim {
namespace {

constexpr std::string_view kHeader = "restoresim-logstore-manifest 3";
constexpr std::string_view kHeaderVersion2 = "restoresim-logstore-manifest 2";
constexpr std::string_view kHeaderVersion1 = "restoresim-logstore-manifest 1";
constexpr std::string_view kOffsetWord = "changelog-offset";

uint64_t BodyHash(std::string_view body) {
  StableHash h;
  h.AddString(body);
  return h.Value();
}

template <typename T>
bool ParseNumber(std::string_view s, T& out) {
  if (s.empty() || s.size() > 20) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool ParseHex16(std::string_view s, uint64_t& out) {
  if (s.size() != 16) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= line.size()) {
    const size_t space = line.find(' ', start);
    const size_t end = space == std::string_view::npos ? line.size() : space;
    out.push_back(line.substr(start, end - start));
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  return out;
}

absl::Status Damaged(std::string_view why) {
  return absl::DataLossError(fmt::format("damaged manifest: {}", why));
}

}  // namespace

std::string EncodeLogStoreManifest(const LogStoreManifest& manifest) {
  RS_CHECK(!manifest.changelog_offset.has_value() || *manifest.changelog_offset >= 0,
           "changelog offset {} in a manifest", *manifest.changelog_offset);
  std::string body(kHeader);
  body += '\n';
  body += manifest.changelog_offset.has_value()
              ? fmt::format(FMT_COMPILE("{} {}\n"), kOffsetWord, *manifest.changelog_offset)
              : fmt::format(FMT_COMPILE("{} none\n"), kOffsetWord);
  // Written with every commit of a store: formats compiled, appended in place.
  for (const LogSegmentEntry& s : manifest.segments) {
    fmt::format_to(std::back_inserter(body), FMT_COMPILE("segment {} {} {} {:016x}\n"), s.number,
                   s.flushed_bytes, s.sealed ? "sealed" : "open", s.salt);
  }
  fmt::format_to(std::back_inserter(body), FMT_COMPILE("checksum {:016x}\n"), BodyHash(body));
  return body;
}

namespace {

// The "changelog-offset" line of a version 3 manifest.
absl::Status ParseOffsetLine(std::string_view line, std::optional<int64_t>& offset) {
  const std::vector<std::string_view> w = Words(line);
  if (w.size() != 2 || w[0] != kOffsetWord) return Damaged("line 2 is not the changelog offset");
  if (w[1] == "none") {
    offset.reset();
    return absl::OkStatus();
  }
  int64_t value = 0;
  if (!ParseNumber(w[1], value) || value < 0) {
    return Damaged(fmt::format("changelog offset '{}' is not an offset", w[1]));
  }
  offset = value;
  return absl::OkStatus();
}

// Checks the checksum line; returns the lines before it.
absl::StatusOr<std::string_view> CheckedBody(std::string_view text) {
  if (text.size() > kLogStoreManifestBytesMax) {
    return Damaged(fmt::format("{} bytes (more than {})", text.size(), kLogStoreManifestBytesMax));
  }
  if (text.empty() || text.back() != '\n') return Damaged("it does not end with a newline");
  const size_t checksum_at = text.rfind('\n', text.size() - 2);
  if (checksum_at == std::string_view::npos) return Damaged("no checksum line");
  const std::string_view body = text.substr(0, checksum_at + 1);
  const std::vector<std::string_view> checksum =
      Words(text.substr(checksum_at + 1, text.size() - checksum_at - 2));
  uint64_t expected = 0;
  if (checksum.size() != 2 || checksum[0] != "checksum" || !ParseHex16(checksum[1], expected)) {
    return Damaged("the last line is not a checksum");
  }
  if (BodyHash(body) != expected) return Damaged("checksum mismatch");
  return body;
}

// One "segment" line (`words`: 4 in version 1, no salt; 5 since).
absl::Status ParseSegmentLine(std::string_view line, size_t words, size_t index,
                              LogSegmentEntry& e) {
  const std::vector<std::string_view> w = Words(line);
  if (w.size() != words || w[0] != "segment" || !ParseNumber(w[1], e.number) ||
      !ParseNumber(w[2], e.flushed_bytes) || (w[3] != "sealed" && w[3] != "open") ||
      (words == 5 && !ParseHex16(w[4], e.salt))) {
    return Damaged(fmt::format("line {} is not a segment entry", index));
  }
  e.sealed = w[3] == "sealed";
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LogStoreManifest> DecodeLogStoreManifest(std::string_view text,
                                                        uint32_t segments_max) {
  absl::StatusOr<std::string_view> body = CheckedBody(text);
  if (!body.ok()) return body.status();
  LogStoreManifest manifest;
  std::vector<LogSegmentEntry>& segments = manifest.segments;
  size_t start = 0;
  size_t line_number = 0;
  int version = 0;
  while (start < body->size()) {
    const size_t end = body->find('\n', start);
    const std::string_view line = body->substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line_number == 1) {
      version = line == kHeader ? 3 : line == kHeaderVersion2 ? 2 : line == kHeaderVersion1 ? 1 : 0;
      if (version == 0) return Damaged("unknown header (not a LogStore manifest of version 1-3)");
      continue;
    }
    if (line_number == 2 && version == 3) {
      if (absl::Status s = ParseOffsetLine(line, manifest.changelog_offset); !s.ok()) return s;
      continue;
    }
    LogSegmentEntry e;
    if (absl::Status s = ParseSegmentLine(line, version == 1 ? 4 : 5, line_number, e); !s.ok()) {
      return s;
    }
    if (!segments.empty() && segments.back().number >= e.number) {
      return Damaged(fmt::format("segment {} listed after segment {}", e.number,
                                 segments.back().number));
    }
    if (!segments.empty() && !segments.back().sealed) {
      return Damaged(fmt::format("segment {} is open but not the last", segments.back().number));
    }
    segments.push_back(e);
    if (segments.size() > segments_max) {
      return Damaged(fmt::format("more than {} segments", segments_max));
    }
  }
  if (version == 0) return Damaged("no header");
  if (version == 3 && line_number < 2) return Damaged("no changelog offset line");
  RS_CHECK(segments.size() <= segments_max);
  return manifest;
}

}  // namespace restoresim
