#include "core/util/java_properties.h"

#include <vector>

#include <fmt/format.h>

#include "core/util/check.h"

namespace restoresim {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\f'; }

// One logical line: natural lines joined where one ends in an odd number of backslashes.
struct LogicalLine {
  std::string text;
  int line_number = 0;  // of its first natural line, from 1
};

std::vector<LogicalLine> LogicalLines(std::string_view text) {
  std::vector<LogicalLine> lines;
  size_t pos = 0;
  int number = 0;
  bool continuing = false;
  while (pos < text.size()) {
    size_t end = text.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view natural = text.substr(pos, end - pos);
    ++number;
    pos = end;
    if (pos < text.size() && text[pos] == '\r') {
      ++pos;
      if (pos < text.size() && text[pos] == '\n') ++pos;  // \r\n: one line end
    } else if (pos < text.size()) {
      ++pos;  // \n
    }
    size_t lead = 0;
    while (lead < natural.size() && IsBlank(natural[lead])) ++lead;
    natural.remove_prefix(lead);
    if (!continuing) {
      if (natural.empty() || natural[0] == '#' || natural[0] == '!') continue;
      lines.push_back(LogicalLine{.text = "", .line_number = number});
    }
    size_t backslashes = 0;
    while (backslashes < natural.size() && natural[natural.size() - 1 - backslashes] == '\\') {
      ++backslashes;
    }
    continuing = backslashes % 2 == 1;
    if (continuing) natural.remove_suffix(1);
    lines.back().text.append(natural);
  }
  return lines;
}

void AppendUtf8(std::string& out, uint32_t code) {
  if (code < 0x80) {
    out.push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code >> 6)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xE0 | (code >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

// Unescapes text[from, to); `stop_at_separator`: ends at the first unescaped '=', ':' or
// blank, returning where it stopped in *end.
absl::StatusOr<std::string> Unescape(const LogicalLine& line, size_t from, bool stop_at_separator,
                                     size_t* end) {
  const std::string& t = line.text;
  std::string out;
  size_t i = from;
  while (i < t.size()) {
    const char c = t[i];
    if (stop_at_separator && (c == '=' || c == ':' || IsBlank(c))) break;
    if (c != '\\' || i + 1 == t.size()) {
      out.push_back(c);
      ++i;
      continue;
    }
    const char e = t[i + 1];
    i += 2;
    switch (e) {
      case 't': out.push_back('\t'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 'f': out.push_back('\f'); break;
      case 'u': {
        uint32_t code = 0;
        for (int k = 0; k < 4; ++k, ++i) {
          const char h = i < t.size() ? t[i] : '\0';
          const int v = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
          if (v < 0) {
            return absl::InvalidArgumentError(
                fmt::format("line {}: malformed \\uxxxx escape", line.line_number));
          }
          code = code * 16 + static_cast<uint32_t>(v);
        }
        AppendUtf8(out, code);
        break;
      }
      default: out.push_back(e); break;
    }
  }
  RS_CHECK(i <= t.size());
  if (end != nullptr) *end = i;
  return out;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseJavaProperties(std::string_view text) {
  if (text.size() > kPropertiesBytesMax) {
    return absl::InvalidArgumentError(fmt::format(
        "properties text of {} bytes is over the limit of {}", text.size(), kPropertiesBytesMax));
  }
  std::map<std::string, std::string> properties;
  for (const LogicalLine& line : LogicalLines(text)) {
    size_t pos = 0;
    absl::StatusOr<std::string> key = Unescape(line, 0, /*stop_at_separator=*/true, &pos);
    if (!key.ok()) return key.status();
    const std::string& t = line.text;
    while (pos < t.size() && IsBlank(t[pos])) ++pos;
    if (pos < t.size() && (t[pos] == '=' || t[pos] == ':')) ++pos;
    while (pos < t.size() && IsBlank(t[pos])) ++pos;
    absl::StatusOr<std::string> value = Unescape(line, pos, /*stop_at_separator=*/false, nullptr);
    if (!value.ok()) return value.status();
    properties[*std::move(key)] = *std::move(value);
    if (properties.size() > kPropertiesKeysMax) {
      return absl::InvalidArgumentError(fmt::format(
          "line {}: more than {} keys", line.line_number, kPropertiesKeysMax));
    }
  }
  return properties;
}

}  // namespace restoresim
