#include "tools/restoresim/build_id.h"

#include <elf.h>
#include <link.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/util/stable_hash.h"

namespace restoresim::tools {
namespace {

constexpr size_t kBuildIdBytesMax = 64;

// The GNU build-id note of the main program (the first object dl_iterate_phdr reports).
int FindBuildId(struct dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::string*>(data);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof(note));
      const char* name = p + sizeof(note);
      const char* desc = name + ((note.n_namesz + 3) & ~3u);
      const char* next = desc + ((note.n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0 && note.n_descsz <= kBuildIdBytesMax) {
        for (ElfW(Word) b = 0; b < note.n_descsz; ++b) {
          *out += fmt::format("{:02x}", static_cast<unsigned char>(desc[b]));
        }
        return 1;
      }
      p = next;
    }
  }
  return 1;  // only the main program
}

std::string ComputeBuildId() {
  std::string id;
  dl_iterate_phdr(FindBuildId, &id);
  if (!id.empty()) return fmt::format("restoresim {} gnu-build-id:{}", kRestoresimVersion, id);
  std::ifstream exe("/proc/self/exe", std::ios::binary);
  StableHash h;
  std::string chunk(1 << 20, '\0');
  while (exe.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || exe.gcount() > 0) {
    h.AddString(std::string_view(chunk.data(), static_cast<size_t>(exe.gcount())));
  }
  return fmt::format("restoresim {} exe-hash:{:016x}", kRestoresimVersion, h.Value());
}

}  // namespace

const std::string& BuildId() {
  static const std::string* id = new std::string(ComputeBuildId());
  return *id;
}

}  // namespace restoresim::tools
