// The bug programs: one table of mutation (core/util/mutation.h) × base scenario × the
// invariants that must catch it. Each row becomes a program "bug.<mutation name>" that runs
// the base scenario with the mutation installed; a sweep counts it found only when a failure
// names one of the expected invariants (sim::Program::expected_invariants) — never a crash of
// the runtime's own checks. `restoresim zoo` sweeps every row; catalogue_test (Zoo/BugProgramTest)
// and cli_test (ZooFindsEveryMutationAndThePlainRuntimePasses, a budgeted zoo run) assert each
// is found.
//
// Thread-safety: the table is immutable.
#ifndef RESTORESIM_SCENARIOS_BUG_PROGRAMS_H_
#define RESTORESIM_SCENARIOS_BUG_PROGRAMS_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/mutation.h"

namespace restoresim::scenarios {

struct BugProgram {
  Mutation mutation;
  std::string_view base;  // the scenario.* program whose window the mutation needs
  std::vector<std::string_view> invariants;
};

std::span<const BugProgram> BugPrograms();
// "bug." + the mutation's name with '-' as '_': "bug.create_before_close".
std::string BugProgramName(Mutation mutation);

}  // namespace restoresim::scenarios

#endif  // RESTORESIM_SCENARIOS_BUG_PROGRAMS_H_
