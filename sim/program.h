// Programs: named workloads the simulator can run from a seed. The scheduler's own demo
// programs (sim/demos/) live here; the runtime's scenarios (scenarios/) register the same way.
// A program's body runs as the simulated thread "main" and reaches everything
// non-deterministic through its RunEnv.
//
// Thread-safety: a registry is filled once at start-up and then only read.
#ifndef RESTORESIM_SIM_PROGRAM_H_
#define RESTORESIM_SIM_PROGRAM_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/port/random.h"
#include "core/sync/clock.h"

namespace restoresim::sim {

class Simulation;

// What a running program may use. Everything here is derived from the run's seed.
struct RunEnv {
  Clock& clock;          // virtual time
  RandomSource& random;  // the program's own stream (workload shape, data)
  Simulation& sim;
  uint64_t seed;

  // A choice in [0, n) made by the strategy and recorded with the schedule, so replaying or
  // shrinking a schedule also replays it. Use for choices a schedule should explore.
  uint64_t Choose(uint64_t n);
  // Fails the run with `message` (never returns).
  [[noreturn]] void Fail(std::string message);
  // Fails the run naming the invariant it broke: "[invariant:NAME] step N, WHO: detail".
  [[noreturn]] void FailInvariant(std::string_view invariant, std::string_view who,
                                  std::string detail);
};

struct Program {
  std::string name;         // "demo.lost_update", "scenario.recycle_while_restoring"
  std::string description;  // one line for `restoresim scenarios`
  // The program has a planted bug (a demo, a mutation of the runtime): a sweep that finds it
  // succeeds, and one that does not is reported.
  bool bug_expected = false;
  // For a bug_expected program: the invariants that must name its failure for it to count as
  // found (empty: any failure counts). A bug caught only by a crash of the runtime's own checks
  // is not found.
  std::vector<std::string> expected_invariants;
  uint64_t steps_hint = 1000;   // typical steps of a run: PCT's default step estimate
  uint64_t steps_max = 200'000;  // default step budget of one run
  std::function<void(RunEnv&)> body;
};

// Whether `name` matches the glob `pattern` as a whole: '*' matches any run of characters
// (also none), '?' any one character, every other character itself.
bool GlobMatches(std::string_view pattern, std::string_view name);
// The elements of a comma-separated list, empty ones included ("a,,b": "a", "", "b").
std::vector<std::string_view> SplitCommas(std::string_view list);

class ProgramRegistry {
 public:
  // Fails on a duplicate or empty name, or a missing body.
  absl::Status Add(Program program);
  const Program* Find(std::string_view name) const;
  // Every program, by name.
  std::vector<const Program*> All() const;
  // A comma-separated list of elements, each "all", an exact name or a glob ('*' any run of
  // characters, '?' any one: "demo.*", "scenario.*restore*"). The programs any element
  // selects, each once, by name (the order of the list does not matter). An element that
  // selects nothing (or an empty one) is an error naming it that lists the families.
  absl::StatusOr<std::vector<const Program*>> Select(std::string_view pattern) const;

 private:
  std::map<std::string, Program, std::less<>> programs_;
};

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_PROGRAM_H_
