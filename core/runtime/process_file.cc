#include "core/runtime/process_file.h"

#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/port/random.h"
#include "core/util/check.h"

namespace restoresim {

std::optional<std::string> ParseProcessFile(std::string_view contents) {
  const nlohmann::json json =
      nlohmann::json::parse(contents, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return std::nullopt;
  auto it = json.find("processId");
  if (it == json.end() || !it->is_string()) return std::nullopt;
  std::string id = it->get<std::string>();
  if (id.empty()) return std::nullopt;
  // It becomes part of client and transactional ids: letters, digits, '.', '_' and '-' only.
  for (char ch : id) {
    const bool ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
                    (ch >= 'A' && ch <= 'Z') || ch == '.' || ch == '_' || ch == '-';
    if (!ok) return std::nullopt;
  }
  return id;
}

std::string FormatProcessFile(const std::string& process_id) {
  RS_CHECK(ParseProcessFile(nlohmann::json{{"processId", process_id}}.dump()) == process_id,
           "a process id that would not read back");
  return nlohmann::json{{"processId", process_id}}.dump();
}

std::string NewProcessUuid() {
  OsSeededRandom random;
  const uint64_t hi = (random.Next64() & ~uint64_t{0xf000}) | 0x4000;  // version 4
  const uint64_t lo = (random.Next64() & ~(uint64_t{3} << 62)) | (uint64_t{2} << 62);  // variant
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff,
                     hi & 0xffff, lo >> 48, lo & 0xffffffffffffULL);
}

absl::StatusOr<std::string> LoadOrCreateProcessId(FileSystem& fs, const std::string& app_dir,
                                                  const std::function<std::string()>& fresh) {
  const std::string path = app_dir + "/" + std::string(kProcessFileName);
  absl::StatusOr<std::string> contents = fs.ReadFile(path);
  if (contents.ok()) {
    if (std::optional<std::string> id = ParseProcessFile(*contents); id.has_value()) return *id;
    std::fprintf(stderr, "restoresim: %s is not a process file (%zu bytes); writing a new "
                 "process id, as Kafka Streams does\n", path.c_str(), contents->size());
  } else if (!absl::IsNotFound(contents.status())) {
    return absl::Status(contents.status().code(),
                        fmt::format("state.dir: cannot read the process file {}: {}", path,
                                    std::string(contents.status().message())));
  }
  const std::string id = fresh();
  RS_CHECK(!id.empty(), "an empty fresh process id");
  if (absl::Status s = WriteFileAtomically(fs, path, FormatProcessFile(id)); !s.ok()) {
    return absl::Status(s.code(), fmt::format("state.dir: cannot write the process file {}: {}",
                                              path, std::string(s.message())));
  }
  return id;
}

}  // namespace restoresim
