// Every `--json` output of restoresim is one JSON object that names its format and the
// format's version (docs/USING.md, "JSON outputs", has each format's fields): a reader checks
// both before it reads the rest. A version changes when a field is removed or changes
// meaning; a new field does not change it.
#ifndef RESTORESIM_TOOLS_RESTORESIM_JSON_OUTPUT_H_
#define RESTORESIM_TOOLS_RESTORESIM_JSON_OUTPUT_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace restoresim::tools {

// `fields` (an object) with "format": FORMAT and "version": VERSION.
inline nlohmann::json JsonDocument(std::string_view format, int version,
                                   nlohmann::json fields = nlohmann::json::object()) {
  fields["format"] = std::string(format);
  fields["version"] = version;
  return fields;
}

}  // namespace restoresim::tools

#endif  // RESTORESIM_TOOLS_RESTORESIM_JSON_OUTPUT_H_
