// `restoresim config FILE`: loads a Kafka Streams properties file as the runtime would
// (RuntimeConfig::FromPropertiesText): prints every setting it takes with its value, and a
// warning for each key it ignores (Kafka Streams' settings it does not model, client settings,
// unknown names). A bad value of a known key, or a file that is not a properties file, is an
// error naming the key or line, exit 2.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/runtime/runtime_config.h"
#include "core/util/java_properties.h"
#include "core/util/shown.h"
#include "tools/restoresim/commands.h"

namespace restoresim::tools {
namespace {

// The settings a config takes, under Kafka's names (what the runtime will use).
std::vector<std::pair<std::string, std::string>> Settings(const RuntimeConfig& c) {
  return {
      {"application.id", c.application_id},
      {"input.topic", c.input_topic},
      {"state.dir", c.state_dir},
      {"processing.guarantee", c.processing_guarantee},
      {"num.stream.threads", std::to_string(c.num_stream_threads)},
      {"num.standby.replicas", std::to_string(c.num_standby_replicas)},
      {"commit.interval.ms", std::to_string(c.commit_interval_ms)},
      {"poll.ms", std::to_string(c.poll_ms)},
      {"main.consumer.max.poll.records", std::to_string(c.max_poll_records)},
      {"restore.consumer.max.poll.records", std::to_string(c.restore_max_poll_records)},
      {"task.timeout.ms", std::to_string(c.task_timeout_ms)},
      {"max.warmup.replicas", std::to_string(c.max_warmup_replicas)},
      {"acceptable.recovery.lag", std::to_string(c.acceptable_recovery_lag)},
      {"probing.rebalance.interval.ms", std::to_string(c.probing_rebalance_interval_ms)},
      {"restoresim.group.assignor", c.group_assignor},
  };
}

absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("cannot open {}", Shown(path)));
  std::string text;
  text.resize(kPropertiesBytesMax + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return absl::UnavailableError(fmt::format("cannot read {}", Shown(path)));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;  // one byte over the limit at most: the parser refuses it
}

}  // namespace

Command AddConfigCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "config", "load a Kafka Streams properties file as the runtime would, and show it");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("file", *path, "the properties file (e.g. streams.properties)")->required();
  cmd->add_flag("--json", *json, "print {file, settings, warnings} as JSON");
  return [path, json]() {
    absl::StatusOr<std::string> text = ReadText(*path);
    std::vector<std::string> warnings;
    absl::StatusOr<RuntimeConfig> config =
        text.ok() ? RuntimeConfig::FromPropertiesText(*text, &warnings)
                  : absl::StatusOr<RuntimeConfig>(text.status());
    if (!config.ok()) {
      std::fprintf(stderr, "restoresim config: %s: %s\n", Shown(*path).c_str(),
                   Shown(std::string(config.status().message())).c_str());
      return kExitUsage;
    }
    if (*json) {
      nlohmann::json settings = nlohmann::json::object();
      for (const auto& [key, value] : Settings(*config)) settings[key] = value;
      const nlohmann::json out = {
          {"file", *path}, {"settings", settings}, {"warnings", warnings}};
      std::printf("%s\n", out.dump(2).c_str());
      return kExitOk;
    }
    for (const auto& [key, value] : Settings(*config)) {
      std::printf("%s\n", fmt::format("{}={}", key, Shown(value, kPropertiesBytesMax)).c_str());
    }
    for (const std::string& w : warnings) {
      std::fprintf(stderr, "restoresim config: warning: %s\n", Shown(w).c_str());
    }
    return kExitOk;
  };
}

}  // namespace restoresim::tools
