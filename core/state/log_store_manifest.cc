#include "core/state/log_store_manifest.h"

#include <charconv>

#include <fmt/format.h>

#include "absl/status/status.h"
#include "core/util/stable_hash.h"

namespace restoresim {
namespace {

constexpr std::string_view kHeader = "restoresim-logstore-manifest 2";
constexpr std::string_view kHeaderVersion1 = "restoresim-logstore-manifest 1";

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

std::string EncodeLogStoreManifest(const std::vector<LogSegmentEntry>& segments) {
  std::string body(kHeader);
  body += '\n';
  for (const LogSegmentEntry& s : segments) {
    body += fmt::format("segment {} {} {} {:016x}\n", s.number, s.flushed_bytes,
                        s.sealed ? "sealed" : "open", s.salt);
  }
  return body + fmt::format("checksum {:016x}\n", BodyHash(body));
}

absl::StatusOr<std::vector<LogSegmentEntry>> DecodeLogStoreManifest(std::string_view text,
                                                                    uint32_t segments_max) {
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
  if (checksum.size() != 2 || checksum[0] != "checksum" || checksum[1].size() != 16 ||
      std::from_chars(checksum[1].data(), checksum[1].data() + 16, expected, 16).ptr !=
          checksum[1].data() + 16) {
    return Damaged("the last line is not a checksum");
  }
  if (BodyHash(body) != expected) return Damaged("checksum mismatch");
  std::vector<LogSegmentEntry> segments;
  size_t start = 0;
  bool header = true;
  size_t words = 5;  // per segment line: 4 in version 1 (no salt)
  while (start < body.size()) {
    const size_t end = body.find('\n', start);
    const std::string_view line = body.substr(start, end - start);
    start = end + 1;
    if (header) {
      if (line == kHeaderVersion1) {
        words = 4;
      } else if (line != kHeader) {
        return Damaged("unknown header (not a LogStore manifest of version 1 or 2)");
      }
      header = false;
      continue;
    }
    const std::vector<std::string_view> w = Words(line);
    LogSegmentEntry e;
    if (w.size() != words || w[0] != "segment" || !ParseNumber(w[1], e.number) ||
        !ParseNumber(w[2], e.flushed_bytes) || (w[3] != "sealed" && w[3] != "open") ||
        (words == 5 && !ParseHex16(w[4], e.salt))) {
      return Damaged(fmt::format("line {} is not a segment entry", segments.size() + 2));
    }
    e.sealed = w[3] == "sealed";
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
  if (header) return Damaged("no header");
  return segments;
}

}  // namespace restoresim
