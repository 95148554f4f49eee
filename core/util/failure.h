// Failure: why a simulated run failed, as data. It is produced where the failure is detected —
// the oracle's checkers and the scenario checks (kInvariant), RS_CHECK (kCheck), the
// scheduler (kDeadlock, kStepBudget, kException) — carried by the run's outcome, stored in
// repro files and compared by the shrinker (sim::SameFailure decides "this run reproduces that
// one"); Render() turns it into text only at the edge (terminal, logs, JSON "message").
//
//   [invariant:registration] step 8123, 0_2#14: changelog app-counts-changelog-2 registered
//   twice in a-StreamThread-1-restore (already by 0_2#11)
//
// Thread-safety: a value type.
#ifndef RESTORESIM_CORE_UTIL_FAILURE_H_
#define RESTORESIM_CORE_UTIL_FAILURE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace restoresim {

// Append only: names are stored in repro files (FailureKindName).
enum class FailureKind : uint8_t {
  kNone = 0,
  kInvariant,   // an invariant of the oracle or a scenario check: `invariant` names it
  kCheck,       // an RS_CHECK in the runtime or the harness: `location` is file:line
  kDeadlock,    // every thread blocked, no timer: `waits` lists what they wait on
  kStepBudget,  // the run passed its step budget
  kException,   // an uncaught exception, std::terminate in a simulated thread
  kOther,       // a program's own Fail(text)
};
std::string_view FailureKindName(FailureKind kind);
std::optional<FailureKind> FailureKindFromName(std::string_view name);

struct Failure {
  FailureKind kind = FailureKind::kNone;
  std::string invariant;  // kInvariant: "registration", "liveness", ...
  std::string who;        // what it is about: "0_2#14", a thread, a directory ("" if nothing)
  uint64_t step = 0;      // the scheduling step at which it was detected
  std::string detail;     // what happened, for people
  std::string location;   // kCheck: "core/runtime/task.cc:42"
  // kDeadlock: the objects the blocked threads wait on ("mutex 'lock_a'"), sorted, unique.
  std::vector<std::string> waits;
  // Added while the run was torn down (e.g. a check that failed during unwinding).
  std::vector<std::string> notes;

  bool failed() const { return kind != FailureKind::kNone; }
  // The text form (see the header comment); notes follow on their own lines.
  std::string Render() const;
  bool operator==(const Failure&) const = default;
};

// The constructors the detectors use. The simulation fills in `step` when the run fails.
Failure InvariantFailure(std::string_view invariant, std::string_view who, std::string detail);
Failure CheckFailure(std::string location, std::string detail);
Failure OtherFailure(FailureKind kind, std::string detail);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_UTIL_FAILURE_H_
