// Reads the text of a Java properties file (java.util.Properties.load's format), so a Kafka
// Streams application's streams.properties loads as it is: `key=value`, `key: value` or
// `key value`; `#` and `!` comment lines; a line ending in an odd number of backslashes
// continues on the next (its leading whitespace dropped); escapes \t \n \r \f \uXXXX (as
// UTF-8), any other \c is c. A key given twice keeps its last value, as Java does.
//
// Bad input is an error naming the line, never a crash: a malformed \u escape, a text over
// kPropertiesBytesMax or with more than kPropertiesKeysMax keys.
//
// Thread-safety: a pure function.
#ifndef RESTORESIM_CORE_UTIL_JAVA_PROPERTIES_H_
#define RESTORESIM_CORE_UTIL_JAVA_PROPERTIES_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace restoresim {

inline constexpr size_t kPropertiesBytesMax = 1 << 20;
inline constexpr size_t kPropertiesKeysMax = 10'000;

absl::StatusOr<std::map<std::string, std::string>> ParseJavaProperties(std::string_view text);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_UTIL_JAVA_PROPERTIES_H_
