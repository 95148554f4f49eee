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
#include "tools/restoresim/json_output.h"
#include "tools/restoresim/output_file.h"

namespace restoresim::tools {
namespace {

absl::StatusOr<std::string> ReadText(const std::string& path) {
  // A FIFO (or a directory, a device) is refused before it is opened: opening a FIFO waits
  // for a writer for ever (issue 25).
  if (absl::Status s = CheckInputFile(path, kPropertiesBytesMax); !s.ok()) {
    if (absl::IsNotFound(s)) return absl::NotFoundError(fmt::format("cannot open {}", Shown(path)));
    return s;
  }
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
  cmd->add_flag("--json", *json, "print {format, version, file, settings, warnings} as JSON");
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
      for (const auto& [key, value] : config->ToProperties()) settings[key] = value;
      const nlohmann::json out =
          JsonDocument("restoresim-config", 1,
                       {{"file", *path}, {"settings", settings}, {"warnings", warnings}});
      std::printf("%s\n", out.dump(2).c_str());
      return kExitOk;
    }
    for (const auto& [key, value] : config->ToProperties()) {
      std::printf("%s\n", fmt::format("{}={}", key, Shown(value, kPropertiesBytesMax)).c_str());
    }
    for (const std::string& w : warnings) {
      std::fprintf(stderr, "restoresim config: warning: %s\n", Shown(w).c_str());
    }
    return kExitOk;
  };
}

}  // namespace restoresim::tools
