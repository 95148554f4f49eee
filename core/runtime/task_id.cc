#include "core/runtime/task_id.h"

#include <charconv>

#include <fmt/compile.h>
#include <fmt/format.h>

namespace restoresim {

// Task names are printed per event on hot paths: formats compiled, not parsed per call.
std::string TaskId::ToString() const {
  return fmt::format(FMT_COMPILE("{}_{}"), subtopology, partition);
}

std::optional<TaskId> TaskId::Parse(std::string_view text) {
  const size_t underscore = text.find('_');
  if (underscore == std::string_view::npos) return std::nullopt;
  TaskId id;
  auto parse = [](std::string_view s, int32_t& out) {
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && ptr == s.data() + s.size() && !s.empty() && out >= 0;
  };
  if (!parse(text.substr(0, underscore), id.subtopology) ||
      !parse(text.substr(underscore + 1), id.partition)) {
    return std::nullopt;
  }
  return id;
}

std::string TaskIncarnation::ToString() const {
  return fmt::format(FMT_COMPILE("{}_{}#{}"), id.subtopology, id.partition, incarnation);
}

}  // namespace restoresim
