// Shown(value): a value as an error message may echo it — at most a bounded prefix, with its
// full length named, so that a megabyte of bad input does not come back as a megabyte of error.
#ifndef RESTORESIM_CORE_UTIL_SHOWN_H_
#define RESTORESIM_CORE_UTIL_SHOWN_H_

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace restoresim {

inline constexpr size_t kShownBytesMax = 120;

inline std::string Shown(std::string_view value, size_t max = kShownBytesMax) {
  if (value.size() <= max) return std::string(value);
  return fmt::format("{}... ({} bytes)", value.substr(0, max), value.size());
}

}  // namespace restoresim

#endif  // RESTORESIM_CORE_UTIL_SHOWN_H_
