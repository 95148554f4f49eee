#include "core/state/checkpoint_file.h"

#include <charconv>
#include <iterator>
#include <vector>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "core/util/stable_hash.h"

namespace restoresim {
namespace {

constexpr std::string_view kMagic = "restoresim-checkpoint";

template <typename T>
bool ParseInt(std::string_view text, T& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && !text.empty();
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

uint64_t BodyHash(const std::vector<std::string_view>& lines, size_t count) {
  StableHash h;
  for (size_t i = 0; i < count; ++i) h.AddString(lines[i]);
  return h.Value();
}

absl::Status Corrupt(std::string_view why) {
  return absl::DataLossError(fmt::format("corrupt checkpoint: {}", why));
}

}  // namespace

std::string EncodeCheckpoint(const CheckpointOffsets& offsets) {
  // Written with every checkpoint: formats compiled, lines formatted once.
  std::vector<std::string> lines;
  lines.reserve(offsets.size() + 2);
  lines.push_back(fmt::format(FMT_COMPILE("{} {}"), kMagic, kCheckpointVersion));
  lines.push_back(std::to_string(offsets.size()));
  for (const auto& [tp, offset] : offsets) {
    lines.push_back(fmt::format(FMT_COMPILE("{} {} {}"), tp.topic, tp.partition, offset));
  }
  size_t bytes = 0;
  for (const std::string& line : lines) bytes += line.size() + 1;
  std::vector<std::string_view> views(lines.begin(), lines.end());
  std::string out;
  out.reserve(bytes + 26);  // + "checksum " and 16 hex digits and "\n"
  for (const std::string& line : lines) out.append(line).append(1, '\n');
  fmt::format_to(std::back_inserter(out), FMT_COMPILE("checksum {:016x}\n"),
                 BodyHash(views, views.size()));
  return out;
}

absl::StatusOr<CheckpointOffsets> DecodeCheckpoint(std::string_view text) {
  if (text.size() > kCheckpointBytesMax) return Corrupt("larger than the size limit");
  if (!text.ends_with('\n')) return Corrupt("truncated (no final newline)");
  std::vector<std::string_view> lines = Split(text.substr(0, text.size() - 1), '\n');
  if (lines.size() < 3) return Corrupt("fewer than 3 lines");
  std::vector<std::string_view> header = Split(lines[0], ' ');
  int version = 0;
  if (header.size() != 2 || header[0] != kMagic || !ParseInt(header[1], version)) {
    return Corrupt("no 'restoresim-checkpoint <version>' header");
  }
  if (version != kCheckpointVersion) {
    return Corrupt(fmt::format("version {} (this build reads version {})", version,
                               kCheckpointVersion));
  }
  size_t count = 0;
  if (!ParseInt(lines[1], count) || count > kCheckpointEntriesMax) {
    return Corrupt("bad entry count");
  }
  if (lines.size() != count + 3) {
    return Corrupt(fmt::format("{} entries announced, {} lines found", count, lines.size() - 3));
  }
  std::vector<std::string_view> checksum = Split(lines.back(), ' ');
  uint64_t expected = 0;
  if (checksum.size() != 2 || checksum[0] != "checksum" || checksum[1].size() != 16 ||
      std::from_chars(checksum[1].data(), checksum[1].data() + 16, expected, 16).ptr !=
          checksum[1].data() + 16) {
    return Corrupt("no checksum line");
  }
  if (expected != BodyHash(lines, lines.size() - 1)) return Corrupt("checksum mismatch");
  CheckpointOffsets offsets;
  for (size_t i = 2; i < 2 + count; ++i) {
    std::vector<std::string_view> f = Split(lines[i], ' ');
    TopicPartition tp;
    int64_t offset = 0;
    if (f.size() != 3 || f[0].empty() || !ParseInt(f[1], tp.partition) || tp.partition < 0 ||
        !ParseInt(f[2], offset) || offset < 0) {
      return Corrupt(fmt::format("bad entry on line {}", i + 1));
    }
    tp.topic = Topic(f[0]);
    if (!offsets.emplace(std::move(tp), offset).second) {
      return Corrupt(fmt::format("duplicate partition on line {}", i + 1));
    }
  }
  return offsets;
}

absl::Status WriteCheckpoint(FileSystem& fs, const std::string& path,
                             const CheckpointOffsets& offsets) {
  for (const auto& [tp, offset] : offsets) {
    if (tp.topic.empty() || tp.topic.view().find_first_of(" \n") != std::string_view::npos ||
        offset < 0 || tp.partition < 0) {
      return absl::InvalidArgumentError(
          fmt::format("cannot checkpoint {} at offset {}", tp.ToString(), offset));
    }
  }
  return WriteFileAtomically(fs, path, EncodeCheckpoint(offsets));
}

absl::StatusOr<CheckpointOffsets> ReadCheckpoint(FileSystem& fs, const std::string& path) {
  absl::StatusOr<std::string> text = fs.ReadFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<CheckpointOffsets> offsets = DecodeCheckpoint(*text);
  if (!offsets.ok()) {
    return absl::Status(offsets.status().code(),
                        fmt::format("{}: {}", path, std::string(offsets.status().message())));
  }
  return offsets;
}

}  // namespace restoresim
