// The scheduler finds each planted bug, replays it from its seed exactly, never fails the fixed
// twins, and PCT and POS beat a random walk on the depth-3 bug (measured and printed).
#include "sim/demos/demos.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "sim/runner.h"
#include "sim/sweep.h"

namespace restoresim::sim {
namespace {

using ::testing::HasSubstr;

const ProgramRegistry& Demos() {
  static const ProgramRegistry* registry = []() {
    auto* r = new ProgramRegistry();
    EXPECT_TRUE(RegisterDemoPrograms(*r).ok());
    return r;
  }();
  return *registry;
}

StrategySpec Spec(std::string_view text) { return *StrategySpec::Parse(text); }

// The first failing seed in [0, seeds_max), or UINT64_MAX; counts failures in `failures`.
uint64_t FirstFailingSeed(const Program& p, StrategySpec strategy, uint64_t seeds_max,
                          uint64_t* failures = nullptr) {
  uint64_t first = UINT64_MAX;
  uint64_t count = 0;
  for (uint64_t seed = 0; seed < seeds_max; ++seed) {
    RunConfig config;
    config.seed = seed;
    config.strategy = strategy;
    if (!RunProgram(p, config).outcome.ok()) {
      ++count;
      first = std::min(first, seed);
      if (failures == nullptr) break;
    }
  }
  if (failures != nullptr) *failures = count;
  return first;
}

struct Expectation {
  const char* program;
  RunOutcome::Kind kind;
  const char* message_part;
};

class PlantedBugTest : public ::testing::TestWithParam<Expectation> {};

TEST_P(PlantedBugTest, FoundThenReplayedExactlyFromItsSeed) {
  const Program* p = Demos().Find(GetParam().program);
  ASSERT_NE(p, nullptr);
  for (const char* strategy : {"random", "pct:3", "pos"}) {
    if (std::string_view(GetParam().program) == "demo.order_violation_d3" &&
        std::string_view(strategy) == "random") {
      continue;  // a random walk practically never finds it; see PctBeatsRandomWalkOnDepth3
    }
    const uint64_t seed = FirstFailingSeed(*p, Spec(strategy), 20000);
    ASSERT_NE(seed, UINT64_MAX) << p->name << " not found with " << strategy;
    RunConfig config;
    config.seed = seed;
    config.strategy = Spec(strategy);
    const RunResult first = RunProgram(*p, config);
    EXPECT_EQ(first.outcome.kind, GetParam().kind) << first.outcome.message;
    EXPECT_THAT(first.outcome.message, HasSubstr(GetParam().message_part));
    // The printed line names everything needed to get the very same run back.
    EXPECT_EQ(ReplayCommand(*p, config),
              "restoresim replay " + p->name + " --seed " + std::to_string(seed) +
                  " --strategy " + strategy);
    const RunResult again = RunProgram(*p, config);
    EXPECT_EQ(again.trace_hash, first.trace_hash);
    EXPECT_EQ(again.outcome.message, first.outcome.message);
    std::printf("%s with %s: first failing seed %llu (%llu steps)\n", p->name.c_str(), strategy,
                static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(first.steps));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Demos, PlantedBugTest,
    ::testing::Values(
        Expectation{"demo.lost_update", RunOutcome::Kind::kFailed, "lost update"},
        Expectation{"demo.abba_deadlock", RunOutcome::Kind::kDeadlock, "holding mutex"},
        Expectation{"demo.missed_notification", RunOutcome::Kind::kDeadlock,
                    "cond.wait on condvar 'ready_cv'"},
        Expectation{"demo.order_violation_d2", RunOutcome::Kind::kFailed, "half-initialised"},
        Expectation{"demo.order_violation_d3", RunOutcome::Kind::kFailed, "both hold"}),
    [](const auto& info) {
      std::string name = info.param.program;
      for (char& c : name) {
        if (c == '.') c = '_';
      }
      return name;
    });

TEST(FixedTwinsTest, NeverFail) {
  SweepConfig config;
  for (const Program* p : Demos().All()) {
    if (!p->bug_expected) config.programs.push_back(p);
  }
  ASSERT_EQ(config.programs.size(), 5u);
  config.seeds = 500;
  config.jobs = 2;
  for (const char* strategy : {"random", "pct:2", "pct:3", "pos"}) {
    config.run.strategy = Spec(strategy);
    const SweepResult r = RunSweep(config);
    for (const ProgramSweepStats& s : r.programs) {
      EXPECT_EQ(s.runs, 500u);
      EXPECT_EQ(s.failed_runs, 0u) << s.program->name << " with " << strategy << ": "
                                   << (s.failures.empty() ? "" : s.failures[0].outcome.message);
    }
  }
}

TEST(PctTest, PctBeatsRandomWalkOnDepth3) {
  const Program* p = Demos().Find("demo.order_violation_d3");
  ASSERT_NE(p, nullptr);
  constexpr uint64_t kSeeds = 20000;
  uint64_t random_failures = 0;
  uint64_t pct_failures = 0;
  const uint64_t random_first = FirstFailingSeed(*p, Spec("random"), kSeeds, &random_failures);
  const uint64_t pct_first = FirstFailingSeed(*p, Spec("pct:3"), kSeeds, &pct_failures);
  auto show = [](uint64_t first) {
    return first == UINT64_MAX ? std::string("never") : std::to_string(first + 1);
  };
  std::printf("demo.order_violation_d3 over %llu seeds: random walk found it in %llu runs "
              "(first after %s runs); pct:3 in %llu runs (first after %s runs)\n",
              static_cast<unsigned long long>(kSeeds),
              static_cast<unsigned long long>(random_failures), show(random_first).c_str(),
              static_cast<unsigned long long>(pct_failures), show(pct_first).c_str());
  RecordProperty("random_failures", std::to_string(random_failures));
  RecordProperty("pct_failures", std::to_string(pct_failures));
  EXPECT_LT(pct_first, random_first);
  EXPECT_GT(pct_failures, random_failures);
}

// POS orders racing operations by fresh coin flips and lets the helper's yields (which race
// with nothing) run at once, so the long stretch of work does not hide the bug from it.
TEST(PosTest, PosFindsTheDepth3BugOften) {
  const Program* p = Demos().Find("demo.order_violation_d3");
  ASSERT_NE(p, nullptr);
  constexpr uint64_t kSeeds = 20000;
  uint64_t pos_failures = 0;
  uint64_t random_failures = 0;
  const uint64_t pos_first = FirstFailingSeed(*p, Spec("pos"), kSeeds, &pos_failures);
  FirstFailingSeed(*p, Spec("random"), kSeeds, &random_failures);
  std::printf("demo.order_violation_d3 over %llu seeds: pos found it in %llu runs (first failing "
              "seed %llu)\n",
              static_cast<unsigned long long>(kSeeds),
              static_cast<unsigned long long>(pos_failures),
              static_cast<unsigned long long>(pos_first));
  RecordProperty("pos_failures", std::to_string(pos_failures));
  EXPECT_NE(pos_first, UINT64_MAX);
  EXPECT_GT(pos_failures, random_failures);
}

}  // namespace
}  // namespace restoresim::sim
