// Fuzzes RuntimeConfig::FromPropertiesText (core/runtime/runtime_config.h): the Java
// properties reader (core/util/java_properties.h) and the validation of the runtime's Kafka
// Streams settings. The contract checked:
//   * the reader fails only with kInvalidArgument and a message;
//   * a config failure is kInvalidArgument with a message;
//   * a success passes Validate(), holds the values given for the text keys as Kafka reads
//     them (ConfigDef.parseType's String.trim: every character up to U+0020 off both ends,
//     issue 25), and warns once for every key it does not know (and for no key it knows);
//   * a success rendered back to properties (every key, with its value) reads back to an
//     equal config, without warnings.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <vector>

#include "core/runtime/runtime_config.h"
#include "core/util/java_properties.h"
#include "fuzz/fuzz_check.h"

namespace restoresim::fuzz {
namespace {

// Java's String.trim, written out here apart from the reader's own, so that the contract is
// checked against Kafka's rule rather than against the code under test.
std::string JavaTrim(const std::string& s) {
  size_t begin = 0;
  size_t end = s.size();
  while (begin < end && static_cast<unsigned char>(s[begin]) <= ' ') ++begin;
  while (end > begin && static_cast<unsigned char>(s[end - 1]) <= ' ') --end;
  return s.substr(begin, end - begin);
}

std::map<std::string, std::string> Render(const RuntimeConfig& c) {
  const std::vector<std::pair<std::string, std::string>> settings = c.ToProperties();
  return {settings.begin(), settings.end()};
}

void CheckConfig(std::string_view text) {
  absl::StatusOr<std::map<std::string, std::string>> given = ParseJavaProperties(text);
  if (!given.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(given.status()), "{}", given.status().ToString());
    FUZZ_CHECK(!given.status().message().empty());
    return;
  }
  std::vector<std::string> warnings;
  absl::StatusOr<RuntimeConfig> config = RuntimeConfig::FromProperties(*given, &warnings);
  if (!config.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(config.status()), "{}", config.status().ToString());
    FUZZ_CHECK(!config.status().message().empty());
    return;
  }
  FUZZ_CHECK(config->Validate().ok(), "accepted but invalid: {}",
             config->Validate().ToString());
  FUZZ_CHECK(config->store_names.empty(), "store names from properties");
  const std::map<std::string, std::string> rendered = Render(*config);
  size_t unknown = 0;
  for (const auto& [key, value] : *given) {
    const auto it = rendered.find(key);
    // Read but rendered under the consumers' own prefixes (Kafka's precedence, issue 24).
    if (key == "max.poll.records" || key == "consumer.max.poll.records") continue;
    if (it == rendered.end()) {
      ++unknown;
      continue;
    }
    const bool is_text = key == "application.id" || key == "restoresim.input.topic" ||
                         key == "state.dir" || key == "processing.guarantee";
    if (is_text) {
      FUZZ_CHECK(it->second == JavaTrim(value), "{}: '{}' kept as '{}'", key, value, it->second);
    }
  }
  FUZZ_CHECK(warnings.size() == unknown, "{} unknown keys, {} warnings", unknown,
             warnings.size());
  std::vector<std::string> again_warnings;
  absl::StatusOr<RuntimeConfig> again = RuntimeConfig::FromProperties(rendered, &again_warnings);
  FUZZ_CHECK(again.ok(), "the rendered config does not read back: {}",
             again.status().ToString());
  FUZZ_CHECK(again_warnings.empty(), "the rendered config warns: {}", again_warnings.front());
  FUZZ_CHECK(Render(*again) == rendered, "the rendered config reads back differently");
}

}  // namespace
}  // namespace restoresim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  restoresim::fuzz::CheckConfig(text);
  return 0;
}
