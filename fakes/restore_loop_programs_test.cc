// The fake-broker programs: a retrying restore survives swarm faults on every seed (random walk,
// PCT and POS), the planted give-up-on-error restore is caught, and the faults show in the trace
// of a replayed run.
#include "fakes/restore_loop_programs.h"

#include <gtest/gtest.h>

#include "sim/runner.h"
#include "sim/sweep.h"

namespace restoresim::fakes {
namespace {

const sim::ProgramRegistry& Programs() {
  static const sim::ProgramRegistry* registry = []() {
    auto* r = new sim::ProgramRegistry();
    EXPECT_TRUE(RegisterRestoreLoopPrograms(*r).ok());
    return r;
  }();
  return *registry;
}

TEST(RestoreLoopProgramsTest, RetryingRestoreSurvivesFaultsAndTheGiveUpBugIsFound) {
  sim::SweepConfig config;
  config.programs = Programs().All();
  config.seeds = 400;
  config.jobs = 2;
  for (const char* strategy : {"random", "pct:3", "pos"}) {
    config.run.strategy = *sim::StrategySpec::Parse(strategy);
    const sim::SweepResult r = sim::RunSweep(config);
    for (const sim::ProgramSweepStats& s : r.programs) {
      EXPECT_TRUE(s.AsExpected()) << s.program->name << " with " << strategy << ": "
                                  << s.failed_runs << " failures"
                                  << (s.failures.empty() ? "" : ", first: " +
                                                                     s.failures[0].outcome.message);
    }
  }
}

TEST(RestoreLoopProgramsTest, InjectedFaultsAreMarkedInTheTrace) {
  const sim::Program* p = Programs().Find("fake.restore_loop");
  ASSERT_NE(p, nullptr);
  int runs_with_faults = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    sim::RunConfig config;
    config.seed = seed;
    config.trace_mode = sim::TraceMode::kFull;
    const sim::RunResult r = sim::RunProgram(*p, config);
    ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
    bool fault_marked = false;
    for (const sim::TraceEvent& e : r.simulation->trace().events()) {
      if (e.kind == sim::TraceKind::kMark &&
          r.simulation->trace().MarkText(e.object).starts_with("fault/")) {
        fault_marked = true;
      }
    }
    if (fault_marked) ++runs_with_faults;
  }
  EXPECT_GT(runs_with_faults, 5);
}

}  // namespace
}  // namespace restoresim::fakes
