// What makes two failed runs "the same failure": the one rule the shrinker (keep a candidate),
// explore (a saved repro reproduces) and replay (exit 3 when not) share. It is computed from
// the run's structured Failure (core/util/failure.h), never by parsing its text:
//   invariant     the invariant's name ("[invariant:registration]"): who, step and detail
//                 may change while a run shrinks;
//   check         the check's location (file:line);
//   deadlock      the objects the blocked threads wait on (sorted, numbers masked);
//   step budget   nothing more;
//   other         the detail's first line with every number masked.
// A version-1 repro file stored only the text; FailureFromLegacyMessage rebuilds the
// structure from it, so older files still load.
//
// Thread-safety: free functions on values.
#ifndef RESTORESIM_SIM_FAILURE_SIGNATURE_H_
#define RESTORESIM_SIM_FAILURE_SIGNATURE_H_

#include <string>
#include <string_view>

#include "core/util/failure.h"
#include "sim/simulation.h"

namespace restoresim::sim {

struct FailureSignature {
  RunOutcome::Kind kind = RunOutcome::Kind::kOk;
  std::string detail;
  // "failed: [invariant:single_owner]", "deadlock: waits on mutex 'lock_a', mutex 'lock_b'".
  std::string ToString() const;
  bool operator==(const FailureSignature&) const = default;
};

FailureSignature SignatureOf(RunOutcome::Kind kind, const Failure& failure);
inline FailureSignature SignatureOf(const RunOutcome& outcome) {
  return SignatureOf(outcome.kind, outcome.failure);
}
// Whether `actual` fails the way `expected` did (same signature).
bool SameFailure(RunOutcome::Kind expected_kind, const Failure& expected,
                 const RunOutcome& actual);

// Replaces every number by '#': decimal digit runs, "0x" hex numbers, and words of hex digits
// that start with a digit ("0e2ec79a"). "step 1234 at 0x1f, t3" -> "step # at #, t#".
std::string MaskNumbers(std::string_view text);

// The structure of a failure that a version-1 repro stored as text only: "[invariant:NAME]
// step N, WHO: detail", "check failed at FILE:LINE: ...", a deadlock report, or other text.
Failure FailureFromLegacyMessage(RunOutcome::Kind kind, std::string_view message);

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_FAILURE_SIGNATURE_H_
