// The bug programs (bug_programs.h): each mutation in the base scenario that opens its window.
#include <fmt/format.h>

#include "core/runtime/mutation.h"
#include "scenarios/bug_programs.h"
#include "scenarios/catalogue.h"

namespace restoresim::scenarios {
namespace {

// Which scenario each mutation needs, and the invariants that catch it there (docs/ZOO.md says
// why for each).
const std::vector<BugProgram>& Table() {
  static const std::vector<BugProgram>* table = new std::vector<BugProgram>{
      {Mutation::kCreateBeforeClose, "scenario.swap_roles_repeatedly", {"registration"}},
      {Mutation::kLatePartitionCapture, "scenario.swap_roles_repeatedly", {"registration"}},
  };
  return *table;
}

}  // namespace

std::span<const BugProgram> BugPrograms() { return Table(); }

std::string BugProgramName(Mutation mutation) {
  std::string name = "bug." + std::string(InfoOf(mutation).name);
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

absl::Status RegisterBugScenarios(sim::ProgramRegistry& registry) {
  for (const BugProgram& bug : Table()) {
    const sim::Program* base = registry.Find(bug.base);
    if (base == nullptr) {
      return absl::NotFoundError(fmt::format("bug program {}: no base scenario {}",
                                             BugProgramName(bug.mutation), bug.base));
    }
    const MutationInfo& info = InfoOf(bug.mutation);
    sim::Program program;
    program.name = BugProgramName(bug.mutation);
    program.description = fmt::format("{} ({}) in {}", info.description, info.source,
                                      bug.base.substr(bug.base.find('.') + 1));
    program.bug_expected = true;
    program.expected_invariants.assign(bug.invariants.begin(), bug.invariants.end());
    program.steps_hint = base->steps_hint;
    program.steps_max = base->steps_max;
    program.body = [body = base->body, mutations = MutationSet{bug.mutation}](sim::RunEnv& env) {
      ScopedMutations installed(mutations);
      body(env);
    };
    if (absl::Status s = registry.Add(std::move(program)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace restoresim::scenarios
