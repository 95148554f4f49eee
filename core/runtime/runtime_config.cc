#include "core/runtime/runtime_config.h"

#include <charconv>
#include <set>

#include <fmt/format.h>

#include "core/runtime/kafka_config_names.h"
#include "core/util/java_properties.h"

namespace restoresim {
namespace {

// restoresim's own settings are under "restoresim." (issue 24); the input topic's old name is
// still read, with a warning.
constexpr std::string_view kInputTopicKey = "restoresim.input.topic";
constexpr std::string_view kInputTopicDefault = "input";
constexpr std::string_view kInputTopicOldKey = "input.topic";

// Java's String.trim, which Kafka's ConfigDef.parseType applies to every value it parses, of
// every type (STRING included: `case STRING: return trimmed`), after java.util.Properties has
// dropped the value's leading whitespace: every character up to U+0020 off both ends, so
// `num.stream.threads= 2 ` is 2 and `application.id=app ` is "app" (issue 25).
std::string_view KafkaTrim(std::string_view value) {
  while (!value.empty() && static_cast<unsigned char>(value.front()) <= 0x20) {
    value.remove_prefix(1);
  }
  while (!value.empty() && static_cast<unsigned char>(value.back()) <= 0x20) value.remove_suffix(1);
  return value;
}

template <typename T>
absl::Status ParseInt(const std::string& key, std::string_view untrimmed, T& out) {
  const std::string_view text = KafkaTrim(untrimmed);
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
        fmt::format("{}: '{}' must be 1-200 characters of [a-zA-Z0-9._-]", kInputTopicKey,
                    input_topic));
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
  if (group_protocol != "classic" && group_protocol != "streams") {
    return absl::InvalidArgumentError(fmt::format(
        "restoresim.group.protocol: '{}' is not classic or streams", group_protocol));
  }
  if (streams_group() && streams_assignor()) {
    return absl::InvalidArgumentError(
        "restoresim.group.protocol=streams places tasks on the broker, so "
        "restoresim.group.assignor must stay default (streams runs the assignor on a classic "
        "group's leader)");
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
                         Range("restoresim.restore.share.while.processing.percent",
                               restore_share_while_processing_percent, 1, 100),
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

namespace {

using Setter = absl::Status (*)(const std::string& key, const std::string& value,
                                RuntimeConfig& c);

template <auto Field>
absl::Status SetText(const std::string&, const std::string& value, RuntimeConfig& c) {
  c.*Field = std::string(KafkaTrim(value));
  return absl::OkStatus();
}

template <auto Field>
absl::Status SetInt(const std::string& key, const std::string& value, RuntimeConfig& c) {
  return ParseInt(key, value, c.*Field);
}

// Every setting read by name: Kafka Streams' under Kafka's names, restoresim's own under
// "restoresim.". The consumers' max.poll.records is resolved apart (ResolveClientSettings).
const std::map<std::string_view, Setter>& Setters() {
  static const auto* setters = new std::map<std::string_view, Setter>{
      {"application.id", SetText<&RuntimeConfig::application_id>},
      {kInputTopicKey, SetText<&RuntimeConfig::input_topic>},
      {"num.stream.threads", SetInt<&RuntimeConfig::num_stream_threads>},
      {"num.standby.replicas", SetInt<&RuntimeConfig::num_standby_replicas>},
      {"state.dir", SetText<&RuntimeConfig::state_dir>},
      {"processing.guarantee", SetText<&RuntimeConfig::processing_guarantee>},
      {"commit.interval.ms", SetInt<&RuntimeConfig::commit_interval_ms>},
      {"poll.ms", SetInt<&RuntimeConfig::poll_ms>},
      {"task.timeout.ms", SetInt<&RuntimeConfig::task_timeout_ms>},
      {"max.warmup.replicas", SetInt<&RuntimeConfig::max_warmup_replicas>},
      {"acceptable.recovery.lag", SetInt<&RuntimeConfig::acceptable_recovery_lag>},
      {"probing.rebalance.interval.ms", SetInt<&RuntimeConfig::probing_rebalance_interval_ms>},
      {"restoresim.group.assignor", SetText<&RuntimeConfig::group_assignor>},
      {"restoresim.group.protocol", SetText<&RuntimeConfig::group_protocol>},
      {"restoresim.restore.share.while.processing.percent",
       SetInt<&RuntimeConfig::restore_share_while_processing_percent>},
  };
  return *setters;
}

// A consumer setting the runtime models, as Kafka Streams resolves it for one consumer
// (StreamsConfig.getMainConsumerConfigs / getRestoreConsumerConfigs): the bare client key,
// overridden by "consumer.", overridden by the consumer's own prefix. Each key it read is
// added to `used`.
absl::Status ResolveConsumerSetting(const std::map<std::string, std::string>& properties,
                                    std::string_view own_prefix, std::string_view name,
                                    int32_t& out, std::set<std::string>& used) {
  for (const std::string& key : {std::string(name), "consumer." + std::string(name),
                                 std::string(own_prefix) + std::string(name)}) {
    auto it = properties.find(key);
    if (it == properties.end()) continue;
    used.insert(key);
    if (absl::Status s = ParseInt(key, it->second, out); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ResolveClientSettings(const std::map<std::string, std::string>& properties,
                                   RuntimeConfig& c, std::set<std::string>& used) {
  if (absl::Status s = ResolveConsumerSetting(properties, "main.consumer.", "max.poll.records",
                                              c.max_poll_records, used);
      !s.ok()) {
    return s;
  }
  return ResolveConsumerSetting(properties, "restore.consumer.", "max.poll.records",
                                c.restore_max_poll_records, used);
}

}  // namespace

absl::StatusOr<RuntimeConfig> RuntimeConfig::FromProperties(
    const std::map<std::string, std::string>& properties, std::vector<std::string>* warnings) {
  RuntimeConfig c;
  c.input_topic = std::string(kInputTopicDefault);
  if (!properties.contains("application.id")) {
    return absl::InvalidArgumentError(
        "application.id: missing; Kafka Streams requires it (it names the group, the state "
        "directory and the changelogs)");
  }
  std::set<std::string> used;
  if (absl::Status s = ResolveClientSettings(properties, c, used); !s.ok()) return s;
  for (const auto& [key, value] : properties) {
    if (used.contains(key)) continue;
    auto setter = Setters().find(key);
    if (setter != Setters().end()) {
      if (absl::Status s = setter->second(key, value, c); !s.ok()) return s;
    } else if (key == kInputTopicOldKey) {
      // The name before issue 24; Kafka Streams has no such setting. Read, with a warning.
      if (!properties.contains(std::string(kInputTopicKey))) {
        c.input_topic = std::string(KafkaTrim(value));
      }
      if (warnings != nullptr) {
        warnings->push_back(fmt::format("setting '{}' is restoresim's old name of '{}': use "
                                        "that",
                                        kInputTopicOldKey, kInputTopicKey));
      }
    } else if (warnings != nullptr) {
      warnings->push_back(IgnoredSettingWarning(key));
    }
  }
  // Kafka Streams' default commit interval is 100 ms under exactly-once, 30 s otherwise.
  if (!properties.contains("commit.interval.ms") && c.exactly_once()) c.commit_interval_ms = 100;
  if (absl::Status s = c.Validate(); !s.ok()) return s;
  return c;
}

std::vector<std::pair<std::string, std::string>> RuntimeConfig::ToProperties() const {
  return {
      {"application.id", application_id},
      {std::string(kInputTopicKey), input_topic},
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
      {"restoresim.group.protocol", group_protocol},
      {"restoresim.restore.share.while.processing.percent",
       std::to_string(restore_share_while_processing_percent)},
  };
}

absl::StatusOr<RuntimeConfig> RuntimeConfig::FromPropertiesText(
    std::string_view text, std::vector<std::string>* warnings) {
  absl::StatusOr<std::map<std::string, std::string>> properties = ParseJavaProperties(text);
  if (!properties.ok()) return properties.status();
  return FromProperties(*properties, warnings);
}

}  // namespace restoresim
