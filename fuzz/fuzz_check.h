// FUZZ_CHECK: how a fuzz target states its parser's contract. A broken contract prints what
// broke and aborts, which libFuzzer reports as a crash and saves the input that caused it
// (-artifact_prefix). Used only in fuzz/, where aborting is the point; the code under test
// validates its input with absl::Status and is never expected to reach one of these.
#ifndef RESTORESIM_FUZZ_FUZZ_CHECK_H_
#define RESTORESIM_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace restoresim::fuzz {

[[noreturn]] inline void ContractBroken(const char* file, int line, const char* condition,
                                        const std::string& message) {
  std::fprintf(stderr, "fuzz contract broken at %s:%d: %s\n  %s\n", file, line, condition,
               message.c_str());
  std::abort();
}

// The status message as a std::string (Debian's Abseil has its own string_view).
template <typename S>
std::string MessageOf(const S& status) {
  return std::string(status.message().data(), status.message().size());
}

}  // namespace restoresim::fuzz

#define FUZZ_CHECK(condition, ...)                                                     \
  do {                                                                                 \
    if (!(condition)) {                                                                \
      ::restoresim::fuzz::ContractBroken(__FILE__, __LINE__, #condition,               \
                                         ::fmt::format("" __VA_OPT__(__VA_ARGS__)));   \
    }                                                                                  \
  } while (0)

#endif  // RESTORESIM_FUZZ_FUZZ_CHECK_H_
