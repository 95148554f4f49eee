// Sweeps: results independent of --jobs, shards that merge into the whole, failures ordered by
// seed with working replay lines, and clear errors for bad configurations.
#include "sim/sweep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include "sim/demos/demos.h"

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

SweepConfig AllDemos(uint64_t seeds) {
  SweepConfig c;
  c.programs = Demos().All();
  c.seeds = seeds;
  c.run.strategy = *StrategySpec::Parse("pct:3");
  return c;
}

TEST(SweepTest, ResultsDoNotDependOnJobs) {
  SweepConfig c = AllDemos(300);
  c.jobs = 1;
  const SweepResult one = RunSweep(c);
  c.jobs = 2;
  const SweepResult two = RunSweep(c);
  c.jobs = 5;
  const SweepResult five = RunSweep(c);
  EXPECT_EQ(one.fingerprint, two.fingerprint);
  EXPECT_EQ(one.fingerprint, five.fingerprint);
  EXPECT_EQ(one.failed_runs, two.failed_runs);
  EXPECT_EQ(one.runs, 300 * Demos().All().size());
  for (size_t i = 0; i < one.programs.size(); ++i) {
    EXPECT_EQ(one.programs[i].fingerprint, five.programs[i].fingerprint);
    ASSERT_EQ(one.programs[i].failures.size(), five.programs[i].failures.size());
    for (size_t j = 0; j < one.programs[i].failures.size(); ++j) {
      EXPECT_EQ(one.programs[i].failures[j].seed, five.programs[i].failures[j].seed);
    }
  }
}

TEST(SweepTest, ShardsMergeIntoTheWholeSweep) {
  SweepConfig c = AllDemos(200);
  c.jobs = 2;
  const SweepResult whole = RunSweep(c);
  c.shard_count = 3;
  uint64_t runs = 0;
  uint64_t failed = 0;
  uint64_t fingerprint = 0;
  std::vector<uint64_t> fingerprints(whole.programs.size(), 0);
  for (uint32_t i = 0; i < 3; ++i) {
    c.shard_index = i;
    const SweepResult part = RunSweep(c);
    runs += part.runs;
    failed += part.failed_runs;
    fingerprint ^= part.fingerprint;
    for (size_t p = 0; p < part.programs.size(); ++p) {
      fingerprints[p] ^= part.programs[p].fingerprint;
    }
  }
  EXPECT_EQ(runs, whole.runs);
  EXPECT_EQ(failed, whole.failed_runs);
  // Regression (issue 12): the sweep-wide fingerprint mixed each program's fingerprint with its
  // name, which does not distribute over XOR, so shards' sweep-wide hashes did not combine.
  EXPECT_EQ(fingerprint, whole.fingerprint);
  for (size_t p = 0; p < whole.programs.size(); ++p) {
    EXPECT_EQ(fingerprints[p], whole.programs[p].fingerprint) << whole.programs[p].program->name;
  }
}

// Regression (issue 12): a shard whose seeds all went to other shards ran no program, and its
// planted-bug programs counted as "not found", failing the shard.
TEST(SweepTest, ShardWithoutRunsFindsNothingUnexpected) {
  SweepConfig c = AllDemos(3);
  c.shard_count = 8;
  c.shard_index = 5;
  const SweepResult r = RunSweep(c);
  EXPECT_EQ(r.runs, 0u);
  EXPECT_EQ(r.fingerprint, 0u);
  bool has_bug_program = false;
  for (const ProgramSweepStats& s : r.programs) {
    has_bug_program = has_bug_program || s.program->bug_expected;
    EXPECT_TRUE(s.AsExpected()) << s.program->name;
  }
  EXPECT_TRUE(has_bug_program);
  EXPECT_TRUE(r.AllAsExpected());
  // The shard that did run the bug programs still decides as before.
  c.shard_index = 0;
  EXPECT_TRUE(RunSweep(c).runs > 0);
}

TEST(SweepTest, FailuresAreSortedCappedAndReplayable) {
  SweepConfig c;
  c.programs = {Demos().Find("demo.lost_update")};
  c.seeds = 400;
  c.jobs = 2;
  c.failures_kept_max = 5;
  c.run.strategy = *StrategySpec::Parse("random");
  const SweepResult r = RunSweep(c);
  const ProgramSweepStats& s = r.programs[0];
  ASSERT_GT(s.failed_runs, 5u);
  ASSERT_EQ(s.failures.size(), 5u);
  EXPECT_EQ(s.failures[0].seed, s.first_failing_seed);
  for (size_t i = 1; i < s.failures.size(); ++i) {
    EXPECT_LT(s.failures[i - 1].seed, s.failures[i].seed);
  }
  EXPECT_THAT(s.failures[0].replay, HasSubstr("--seed " + std::to_string(s.failures[0].seed)));
  RunConfig again = c.run;
  again.seed = s.failures[0].seed;
  EXPECT_EQ(RunProgram(*c.programs[0], again).trace_hash, s.failures[0].trace_hash);
  EXPECT_TRUE(s.AsExpected());
}

// The seeds are enumerated as they are run: the documented maximum (2^40 seeds per program)
// needs no memory up front (a list of them once ended in bad_alloc), and a stop request ends
// the sweep after the runs in progress, with what was done reported as interrupted.
TEST(SweepTest, TheLargestSweepStartsAtOnceAndStopsWhenAsked) {
  SweepConfig c = AllDemos(uint64_t{1} << 40);
  c.programs.resize(1);
  c.jobs = 2;
  c.shard_index = 5;
  c.shard_count = 7;
  std::atomic<bool> stop{false};
  c.stop = &stop;
  const SweepResult r = RunSweep(c, [&](const SweepProgress& p) {
    if (p.runs_done >= 20) stop = true;
  });
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.runs_planned, ((uint64_t{1} << 40) - 5 - 1) / 7 + 1);
  EXPECT_TRUE(r.workers.ok());
  EXPECT_GE(r.runs, 20u);
  EXPECT_LE(r.runs, 22u) << "at most the runs already started finish";
  for (const SweepFailure& f : r.programs[0].failures) EXPECT_EQ(f.seed % 7, 5u);
}

TEST(SweepTest, ShardSeedsAreExactlyTheOffsetsOfTheShard) {
  // 10 seeds from 100 in 4 shards: shard 1 runs 101, 105, 109; shard 3 runs 103, 107.
  for (uint32_t shard = 0; shard < 4; ++shard) {
    SweepConfig c = AllDemos(10);
    c.programs.resize(1);
    c.seed_start = 100;
    c.shard_index = shard;
    c.shard_count = 4;
    c.failures_kept_max = 100;
    const SweepResult r = RunSweep(c);
    EXPECT_EQ(r.runs, shard < 2 ? 3u : 2u) << shard;
    EXPECT_FALSE(r.interrupted);
  }
  SweepConfig beyond = AllDemos(3);
  beyond.shard_index = 5;
  beyond.shard_count = 8;
  EXPECT_EQ(RunSweep(beyond).runs, 0u) << "a shard past the seed count runs nothing";
}

TEST(SweepTest, StoppedBeforeItStartsRunsNothing) {
  SweepConfig c = AllDemos(100);
  std::atomic<bool> stop{true};
  c.stop = &stop;
  const SweepResult r = RunSweep(c);
  EXPECT_EQ(r.runs, 0u);
  EXPECT_TRUE(r.interrupted);
}

TEST(SweepTest, RejectsBadConfigurations) {
  SweepConfig c = AllDemos(10);
  c.jobs = 1;
  EXPECT_TRUE(ValidateSweepConfig(c).ok());
  SweepConfig bad = c;
  bad.seeds = 0;
  EXPECT_THAT(std::string(ValidateSweepConfig(bad).message()), HasSubstr("--seeds"));
  bad = c;
  bad.shard_index = 3;
  bad.shard_count = 3;
  EXPECT_THAT(std::string(ValidateSweepConfig(bad).message()), HasSubstr("--shard"));
  bad = c;
  bad.jobs = 0;
  EXPECT_THAT(std::string(ValidateSweepConfig(bad).message()), HasSubstr("--jobs"));
  bad = c;
  bad.seed_start = UINT64_MAX - 3;
  EXPECT_THAT(std::string(ValidateSweepConfig(bad).message()), HasSubstr("overflows"));
  bad = c;
  bad.programs.clear();
  EXPECT_FALSE(ValidateSweepConfig(bad).ok());
}

}  // namespace
}  // namespace restoresim::sim
