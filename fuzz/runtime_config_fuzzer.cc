// Fuzzes RuntimeConfig::FromProperties (core/runtime/runtime_config.h), the validation of the
// runtime's Kafka-style settings. The project has no properties-file reader of its own: the
// settings arrive as a key-value map. This target reads its input the way a Java properties
// file is commonly written (one "key=value" per line, split at the first '='; blank lines and
// lines starting with '#' or '!' skipped; a trailing '\r' dropped; a later key replaces an
// earlier one) and hands the map over. The contract checked:
//   * a failure is kInvalidArgument with a message;
//   * a success passes Validate(), and holds exactly the values given for the keys given;
//   * a success rendered back to properties (every key, with its value) reads back to an
//     equal config.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/runtime/runtime_config.h"
#include "fuzz/fuzz_check.h"

namespace restoresim::fuzz {
namespace {

std::map<std::string, std::string> ParseLines(std::string_view text) {
  std::map<std::string, std::string> out;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#' || line.front() == '!') continue;
    const size_t eq = line.find('=');
    const std::string key(line.substr(0, eq));
    out[key] = eq == std::string_view::npos ? "" : std::string(line.substr(eq + 1));
  }
  return out;
}

std::map<std::string, std::string> Render(const RuntimeConfig& c) {
  return {
      {"application.id", c.application_id},
      {"input.topic", c.input_topic},
      {"num.stream.threads", std::to_string(c.num_stream_threads)},
      {"num.standby.replicas", std::to_string(c.num_standby_replicas)},
      {"state.dir", c.state_dir},
      {"processing.guarantee", c.processing_guarantee},
      {"commit.interval.ms", std::to_string(c.commit_interval_ms)},
      {"poll.ms", std::to_string(c.poll_ms)},
      {"main.consumer.max.poll.records", std::to_string(c.max_poll_records)},
      {"restore.consumer.max.poll.records", std::to_string(c.restore_max_poll_records)},
      {"checkpoint.interval.ms", std::to_string(c.checkpoint_interval_ms)},
  };
}

void CheckConfig(const std::map<std::string, std::string>& given) {
  absl::StatusOr<RuntimeConfig> config = RuntimeConfig::FromProperties(given);
  if (!config.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(config.status()), "{}", config.status().ToString());
    FUZZ_CHECK(!config.status().message().empty());
    return;
  }
  FUZZ_CHECK(config->Validate().ok(), "accepted but invalid: {}",
             config->Validate().ToString());
  FUZZ_CHECK(config->store_names.empty(), "store names from properties");
  const std::map<std::string, std::string> rendered = Render(*config);
  for (const auto& [key, value] : given) {
    const auto it = rendered.find(key);
    FUZZ_CHECK(it != rendered.end(), "unknown key '{}' accepted", key);
    const bool is_text = key == "application.id" || key == "input.topic" ||
                         key == "state.dir" || key == "processing.guarantee";
    if (is_text) FUZZ_CHECK(it->second == value, "{}: '{}' kept as '{}'", key, value, it->second);
  }
  absl::StatusOr<RuntimeConfig> again = RuntimeConfig::FromProperties(rendered);
  FUZZ_CHECK(again.ok(), "the rendered config does not read back: {}",
             again.status().ToString());
  FUZZ_CHECK(Render(*again) == rendered, "the rendered config reads back differently");
}

}  // namespace
}  // namespace restoresim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  restoresim::fuzz::CheckConfig(restoresim::fuzz::ParseLines(text));
  return 0;
}
