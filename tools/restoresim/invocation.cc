#include "tools/restoresim/invocation.h"

#include <string>

namespace restoresim::tools {
namespace {

constexpr std::string_view kProgram = "restoresim";
constexpr size_t kInvocationBytesMax = 4096;  // PATH_MAX; main refuses longer arguments

std::string& Invocation() {
  static std::string* invocation = new std::string;
  return *invocation;
}

bool ShellSafe(std::string_view word) {
  for (char c : word) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '/' || c == '.' || c == '_' || c == '-' ||
                       c == '+' || c == ',' || c == ':' || c == '@' || c == '%';
    if (!plain) return false;
  }
  return !word.empty();
}

// 'word' for a POSIX shell: single quotes, each ' written as '\''.
std::string Quoted(std::string_view word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

std::string ShellWord(std::string_view word) {
  return ShellSafe(word) ? std::string(word) : Quoted(word);
}

void SetInvocation(std::string_view argv0) {
  Invocation() = std::string(argv0.substr(0, kInvocationBytesMax));
}

std::string BinaryWord() {
  const std::string& argv0 = Invocation();
  if (argv0.find('/') == std::string::npos) return std::string(kProgram);
  return ShellWord(argv0);
}

std::string Runnable(std::string_view command) {
  const std::string prefix = std::string(kProgram) + " ";
  if (!command.starts_with(prefix)) return std::string(command);
  return BinaryWord() + std::string(command.substr(kProgram.size()));
}

}  // namespace restoresim::tools
