// Always-on invariant checks for the runtime's state machines (TigerBeetle-style density).
//
//   RS_CHECK(task.state() == TaskState::kRestoring, "task {} in {}", id, state);
//
// A failed check inside a simulation fails that run (with its seed and a replay line) instead
// of killing the process, so a sweep goes on and the failure can be replayed. Outside a
// simulation it prints the message and aborts. Broker and file input are validated with
// absl::Status, never with checks.
//
//   RS_INVARIANT("single_owner", who, places == 1, "task {} held in {} places", who, places);
//
// An invariant the oracle also states (properties/checks/), checked inline where the state
// moves: its failure names the invariant ("[invariant:NAME] step N, WHO: ..."), exactly as the
// oracle's checker would, so a sweep, the zoo and the shrinker treat the two alike — and a
// real-thread run, which has no oracle, still checks it.
#ifndef RESTORESIM_CORE_UTIL_CHECK_H_
#define RESTORESIM_CORE_UTIL_CHECK_H_

#include <string>

#include <fmt/format.h>

namespace restoresim {

[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              const std::string& message);

[[noreturn]] void InvariantFailed(const char* invariant, std::string who,
                                  const std::string& message);

}  // namespace restoresim

#define RS_CHECK(condition, ...)                                                          \
  do {                                                                                    \
    if (__builtin_expect(!(condition), 0)) {                                              \
      ::restoresim::CheckFailed(__FILE__, __LINE__, #condition,                           \
                                ::fmt::format("" __VA_OPT__(__VA_ARGS__)));                \
    }                                                                                     \
  } while (0)

#define RS_INVARIANT(invariant, who, condition, ...)                                     \
  do {                                                                                    \
    if (__builtin_expect(!(condition), 0)) {                                              \
      ::restoresim::InvariantFailed(invariant, who,                                       \
                                    ::fmt::format("" __VA_OPT__(__VA_ARGS__)));           \
    }                                                                                     \
  } while (0)

#define RS_CHECK_EQ(a, b, ...) RS_CHECK((a) == (b), __VA_ARGS__)
#define RS_CHECK_NE(a, b, ...) RS_CHECK((a) != (b), __VA_ARGS__)
#define RS_CHECK_LT(a, b, ...) RS_CHECK((a) < (b), __VA_ARGS__)
#define RS_CHECK_LE(a, b, ...) RS_CHECK((a) <= (b), __VA_ARGS__)
#define RS_CHECK_GE(a, b, ...) RS_CHECK((a) >= (b), __VA_ARGS__)

#endif  // RESTORESIM_CORE_UTIL_CHECK_H_
