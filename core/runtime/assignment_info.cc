#include "core/runtime/assignment_info.h"

#include <fmt/format.h>

namespace restoresim {

std::string AssignmentInfo::Encode() const {
  std::string out = "standby=";
  bool first = true;
  for (const TaskId& id : standby_tasks) {
    if (!first) out += ",";
    out += id.ToString();
    first = false;
  }
  return out;
}

absl::StatusOr<AssignmentInfo> AssignmentInfo::Decode(std::string_view user_data) {
  AssignmentInfo info;
  if (user_data.empty()) return info;
  constexpr std::string_view kPrefix = "standby=";
  if (!user_data.starts_with(kPrefix)) {
    return absl::InvalidArgumentError(
        fmt::format("assignment info '{}' does not start with '{}'", user_data, kPrefix));
  }
  std::string_view rest = user_data.substr(kPrefix.size());
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    std::optional<TaskId> id = TaskId::Parse(item);
    if (!id) {
      return absl::InvalidArgumentError(
          fmt::format("assignment info '{}': bad task id '{}'", user_data, item));
    }
    info.standby_tasks.insert(*id);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return info;
}

}  // namespace restoresim
