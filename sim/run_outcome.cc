// The names of run outcomes (declared in simulation.h). Apart from simulation.cc so that
// what only reads and writes outcome names (repro files, and their fuzz target in fuzz/) links
// without the scheduler.
#include <optional>
#include <string_view>

#include "sim/simulation.h"

namespace restoresim::sim {

std::string_view OutcomeKindName(RunOutcome::Kind kind) {
  switch (kind) {
    case RunOutcome::Kind::kOk: return "ok";
    case RunOutcome::Kind::kFailed: return "failed";
    case RunOutcome::Kind::kDeadlock: return "deadlock";
    case RunOutcome::Kind::kStepBudget: return "step-budget";
  }
  return "?";
}

std::optional<RunOutcome::Kind> ParseOutcomeKind(std::string_view name) {
  for (auto kind : {RunOutcome::Kind::kOk, RunOutcome::Kind::kFailed, RunOutcome::Kind::kDeadlock,
                    RunOutcome::Kind::kStepBudget}) {
    if (OutcomeKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

}  // namespace restoresim::sim
