// The input format of the LogStore fuzz target: a store directory as a sequence of files.
//   entry := u8 tag | u16 length (little-endian) | length bytes (cut short at the end of input)
// The tag says which file the bytes become (tag % 8; a later entry for a name replaces it):
//   0     MANIFEST
//   1..4  segment-0000000<tag>.log (the names LogStore writes)
//   5     a segment with any number: the first 4 bytes (u32) are the number, the rest its bytes
//   6     the same number, but named without zero padding ("segment-7.log": not LogStore's)
//   7     MANIFEST.tmp (what a crash during WriteFileAtomically leaves)
// Small fixed names make it likely that mutations hit the files the manifest lists; tag 5
// reaches the edges of the numbering. The seed corpus is written by fuzz/make_corpus.cc.
#ifndef RESTORESIM_FUZZ_STORE_ARCHIVE_H_
#define RESTORESIM_FUZZ_STORE_ARCHIVE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace restoresim::fuzz {

inline constexpr size_t kStoreArchiveEntriesMax = 64;

struct ArchiveFile {
  std::string name;
  std::string contents;
  std::optional<uint32_t> segment;  // the number, for a file named as LogStore names segments
};

inline std::string CanonicalSegmentName(uint32_t number) {
  return fmt::format("segment-{:08}.log", number);
}

inline std::vector<ArchiveFile> ParseStoreArchive(std::string_view in) {
  std::vector<ArchiveFile> files;
  while (in.size() >= 3 && files.size() < kStoreArchiveEntriesMax) {
    const auto tag = static_cast<uint8_t>(in[0]) % 8;
    const size_t length =
        static_cast<uint8_t>(in[1]) | (size_t{static_cast<uint8_t>(in[2])} << 8);
    std::string_view bytes = in.substr(3, length);
    in.remove_prefix(3 + bytes.size());
    ArchiveFile f;
    if (tag == 0) {
      f.name = "MANIFEST";
    } else if (tag <= 4) {
      f.segment = tag;
      f.name = CanonicalSegmentName(tag);
    } else if (tag == 7) {
      f.name = "MANIFEST.tmp";
    } else {
      uint32_t number = 0;
      for (size_t i = 0; i < 4 && i < bytes.size(); ++i) {
        number |= uint32_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
      }
      bytes.remove_prefix(std::min<size_t>(4, bytes.size()));
      if (tag == 5) f.segment = number;
      f.name = tag == 5 ? CanonicalSegmentName(number) : fmt::format("segment-{}.log", number);
      if (f.name == CanonicalSegmentName(number)) f.segment = number;  // e.g. 12345678
    }
    f.contents = std::string(bytes);
    std::erase_if(files, [&](const ArchiveFile& old) { return old.name == f.name; });
    files.push_back(std::move(f));
  }
  return files;
}

// One entry; `tag` as above (for tag 5 and 6 the caller puts the number first in `bytes`).
inline void AppendArchiveEntry(std::string& out, uint8_t tag, std::string_view bytes) {
  const size_t length = std::min<size_t>(bytes.size(), 0xFFFF);
  out.push_back(static_cast<char>(tag));
  out.push_back(static_cast<char>(length & 0xFF));
  out.push_back(static_cast<char>(length >> 8));
  out.append(bytes.substr(0, length));
}

}  // namespace restoresim::fuzz

#endif  // RESTORESIM_FUZZ_STORE_ARCHIVE_H_
