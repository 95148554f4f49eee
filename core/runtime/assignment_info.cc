#include "core/runtime/assignment_info.h"

#include <fmt/format.h>

#include <charconv>
#include <vector>

namespace restoresim {
namespace {

// Splits on `sep`; an empty text gives no parts.
std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  while (!text.empty()) {
    const size_t at = text.find(sep);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  return parts;
}

std::optional<int64_t> ParseInt64(std::string_view text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

absl::Status Bad(std::string_view what, std::string_view user_data, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("{} '{}': {}", what, user_data, why));
}

absl::Status DecodeStandbys(std::string_view list, std::string_view user_data,
                            AssignmentInfo& info) {
  for (std::string_view item : Split(list, ',')) {
    std::optional<TaskId> id = TaskId::Parse(item);
    if (!id) return Bad("assignment info", user_data, fmt::format("bad task id '{}'", item));
    info.standby_tasks.insert(*id);
  }
  return absl::OkStatus();
}

bool ValidProcessId(std::string_view id) {
  if (id.empty() || id.size() > 200) return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string AssignmentInfo::Encode() const {
  std::string out = "standby=";
  bool first = true;
  for (const TaskId& id : standby_tasks) {
    if (!first) out += ",";
    out += id.ToString();
    first = false;
  }
  if (rebalance_at_ms) out += fmt::format(";rebalance_at_ms={}", *rebalance_at_ms);
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
  const std::vector<std::string_view> fields = Split(user_data.substr(kPrefix.size()), ';');
  if (!fields.empty()) {
    if (absl::Status s = DecodeStandbys(fields[0], user_data, info); !s.ok()) return s;
  }
  constexpr std::string_view kRebalanceAt = "rebalance_at_ms=";
  for (size_t i = 1; i < fields.size(); ++i) {
    if (!fields[i].starts_with(kRebalanceAt) || info.rebalance_at_ms) {
      return Bad("assignment info", user_data, fmt::format("unexpected field '{}'", fields[i]));
    }
    info.rebalance_at_ms = ParseInt64(fields[i].substr(kRebalanceAt.size()));
    if (!info.rebalance_at_ms || *info.rebalance_at_ms < 0) {
      return Bad("assignment info", user_data, "rebalance_at_ms is not a time");
    }
  }
  return info;
}

std::string SubscriptionInfo::Encode() const {
  std::string out = fmt::format("process={};offsets=", process_id);
  bool first = true;
  for (const auto& [id, sum] : task_offset_sums) {
    if (!first) out += ",";
    out += fmt::format("{}:{}", id.ToString(), sum);
    first = false;
  }
  return out;
}

absl::StatusOr<SubscriptionInfo> SubscriptionInfo::Decode(std::string_view user_data) {
  constexpr std::string_view kWhat = "subscription info";
  const std::vector<std::string_view> fields = Split(user_data, ';');
  constexpr std::string_view kProcess = "process=";
  constexpr std::string_view kOffsets = "offsets=";
  if (fields.size() != 2 || !fields[0].starts_with(kProcess) ||
      !fields[1].starts_with(kOffsets)) {
    return Bad(kWhat, user_data, "expected 'process=<id>;offsets=<task>:<sum>,...'");
  }
  SubscriptionInfo info;
  info.process_id = std::string(fields[0].substr(kProcess.size()));
  if (!ValidProcessId(info.process_id)) {
    return Bad(kWhat, user_data, "the process id must be 1-200 characters of [a-zA-Z0-9._-]");
  }
  const std::vector<std::string_view> items = Split(fields[1].substr(kOffsets.size()), ',');
  if (items.size() > kTasksMax) return Bad(kWhat, user_data.substr(0, 64), "too many tasks");
  for (std::string_view item : items) {
    const size_t colon = item.find(':');
    std::optional<TaskId> id = TaskId::Parse(item.substr(0, colon));
    std::optional<int64_t> sum = colon == std::string_view::npos
                                     ? std::nullopt
                                     : ParseInt64(item.substr(colon + 1));
    if (!id || !sum || (*sum < 0 && *sum != kLatestOffset)) {
      return Bad(kWhat, user_data, fmt::format("bad offset sum '{}'", item));
    }
    if (!info.task_offset_sums.emplace(*id, *sum).second) {
      return Bad(kWhat, user_data, fmt::format("task {} twice", id->ToString()));
    }
  }
  return info;
}

}  // namespace restoresim
