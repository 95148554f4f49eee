#include "core/runtime/runtime_config.h"

#include <charconv>

#include <fmt/format.h>

#include "core/runtime/kafka_config_names.h"
#include "core/util/java_properties.h"

namespace restoresim {
namespace {

template <typename T>
absl::Status ParseInt(const std::string& key, const std::string& text, T& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: expected an integer, got '{}'", key, text));
  }
  return absl::OkStatus();
}

absl::Status Range(std::string_view key, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {} is outside [{}, {}]", key, value, lo, hi));
  }
  return absl::OkStatus();
}

bool ValidName(const std::string& s) {
  if (s.empty() || s.size() > 200) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::Status RuntimeConfig::Validate() const {
  if (!ValidName(application_id)) {
    return absl::InvalidArgumentError(fmt::format(
        "application.id: '{}' must be 1-200 characters of [a-zA-Z0-9._-]", application_id));
  }
  if (!ValidName(input_topic)) {
    return absl::InvalidArgumentError(
        fmt::format("input topic '{}' must be 1-200 characters of [a-zA-Z0-9._-]", input_topic));
  }
  if (processing_guarantee != "at_least_once" && processing_guarantee != "exactly_once_v2") {
    return absl::InvalidArgumentError(fmt::format(
        "processing.guarantee: '{}' is not at_least_once or exactly_once_v2",
        processing_guarantee));
  }
  if (state_dir.empty()) return absl::InvalidArgumentError("state.dir: must not be empty");
  if (group_assignor != "default" && group_assignor != "streams") {
    return absl::InvalidArgumentError(fmt::format(
        "restoresim.group.assignor: '{}' is not default or streams", group_assignor));
  }
  if (!topology_name.empty() && !ValidName(topology_name)) {
    return absl::InvalidArgumentError(fmt::format(
        "topology name '{}' must be empty (the unnamed topology) or 1-200 characters of "
        "[a-zA-Z0-9._-]",
        topology_name));
  }
  for (absl::Status s : {Range("num.stream.threads", num_stream_threads, 1, kStreamThreadsMax),
                         Range("num.standby.replicas", num_standby_replicas, 0, 16),
                         Range("commit.interval.ms", commit_interval_ms, 0, 86'400'000),
                         Range("poll.ms", poll_ms, 0, 3'600'000),
                         Range("main.consumer.max.poll.records", max_poll_records, 1, 1'000'000),
                         Range("restore.consumer.max.poll.records", restore_max_poll_records, 1,
                               1'000'000),
                         Range("task.timeout.ms", task_timeout_ms, 0, 86'400'000),
                         Range("checkpoint_offset_delta_min", checkpoint_offset_delta_min, 0,
                               int64_t{1} << 40),
                         Range("max.warmup.replicas", max_warmup_replicas, 1, 1'000'000),
                         Range("acceptable.recovery.lag", acceptable_recovery_lag, 0,
                               INT64_MAX),
                         Range("probing.rebalance.interval.ms", probing_rebalance_interval_ms,
                               60'000, 86'400'000'000)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<RuntimeConfig> RuntimeConfig::FromProperties(
    const std::map<std::string, std::string>& properties, std::vector<std::string>* warnings) {
  RuntimeConfig c;
  bool commit_interval_set = false;
  for (const auto& [key, value] : properties) {
    absl::Status s;
    if (key == "application.id") {
      c.application_id = value;
    } else if (key == "input.topic") {
      c.input_topic = value;
    } else if (key == "num.stream.threads") {
      s = ParseInt(key, value, c.num_stream_threads);
    } else if (key == "num.standby.replicas") {
      s = ParseInt(key, value, c.num_standby_replicas);
    } else if (key == "state.dir") {
      c.state_dir = value;
    } else if (key == "processing.guarantee") {
      c.processing_guarantee = value;
    } else if (key == "commit.interval.ms") {
      s = ParseInt(key, value, c.commit_interval_ms);
      commit_interval_set = true;
    } else if (key == "poll.ms") {
      s = ParseInt(key, value, c.poll_ms);
    } else if (key == "main.consumer.max.poll.records") {
      s = ParseInt(key, value, c.max_poll_records);
    } else if (key == "restore.consumer.max.poll.records") {
      s = ParseInt(key, value, c.restore_max_poll_records);
    } else if (key == "task.timeout.ms") {
      s = ParseInt(key, value, c.task_timeout_ms);
    } else if (key == "max.warmup.replicas") {
      s = ParseInt(key, value, c.max_warmup_replicas);
    } else if (key == "acceptable.recovery.lag") {
      s = ParseInt(key, value, c.acceptable_recovery_lag);
    } else if (key == "probing.rebalance.interval.ms") {
      s = ParseInt(key, value, c.probing_rebalance_interval_ms);
    } else if (key == "restoresim.group.assignor") {
      c.group_assignor = value;
    } else {
      if (warnings != nullptr) warnings->push_back(IgnoredSettingWarning(key));
    }
    if (!s.ok()) return s;
  }
  // Kafka Streams' default commit interval is 100 ms under exactly-once, 30 s otherwise.
  if (!commit_interval_set && c.exactly_once()) c.commit_interval_ms = 100;
  if (absl::Status s = c.Validate(); !s.ok()) return s;
  return c;
}

std::vector<std::pair<std::string, std::string>> RuntimeConfig::ToProperties() const {
  return {
      {"application.id", application_id},
      {"input.topic", input_topic},
      {"state.dir", state_dir},
      {"processing.guarantee", processing_guarantee},
      {"num.stream.threads", std::to_string(num_stream_threads)},
      {"num.standby.replicas", std::to_string(num_standby_replicas)},
      {"commit.interval.ms", std::to_string(commit_interval_ms)},
      {"poll.ms", std::to_string(poll_ms)},
      {"main.consumer.max.poll.records", std::to_string(max_poll_records)},
      {"restore.consumer.max.poll.records", std::to_string(restore_max_poll_records)},
      {"task.timeout.ms", std::to_string(task_timeout_ms)},
      {"max.warmup.replicas", std::to_string(max_warmup_replicas)},
      {"acceptable.recovery.lag", std::to_string(acceptable_recovery_lag)},
      {"probing.rebalance.interval.ms", std::to_string(probing_rebalance_interval_ms)},
      {"restoresim.group.assignor", group_assignor},
  };
}

absl::StatusOr<RuntimeConfig> RuntimeConfig::FromPropertiesText(
    std::string_view text, std::vector<std::string>* warnings) {
  absl::StatusOr<std::map<std::string, std::string>> properties = ParseJavaProperties(text);
  if (!properties.ok()) return properties.status();
  return FromProperties(*properties, warnings);
}

}  // namespace restoresim
