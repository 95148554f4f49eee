// Merging shard reports: N shards merge to the report of one process running the whole sweep,
// byte for byte in JSON once `timing` is removed, for several N; and shards that do not make
// one whole sweep are refused with a message naming the problem.
#include "sim/sweep_merge.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

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

SweepConfig Config(uint64_t seeds) {
  SweepConfig c;
  c.programs = Demos().All();
  c.seed_start = 7;
  c.seeds = seeds;
  c.jobs = 2;
  c.failures_kept_max = 4;  // small, so that shards keep failures one process would not
  c.run.strategy = *StrategySpec::Parse("pct:3");
  return c;
}

SweepIdentity Identity(const SweepConfig& c) {
  return SweepIdentity{.build = "test-build",
                       .scenario = "demo.*",
                       .seed_start = c.seed_start,
                       .seeds = c.seeds,
                       .strategy = c.run.strategy.ToString(),
                       .steps_max = c.run.steps_max,
                       .spurious_per_mille = c.run.spurious_wakeup_per_mille,
                       .repros_max = 2,
                       .failures_kept_max = c.failures_kept_max};
}

// As explore does: the first repros_max failures of each scenario get a repro file.
SweepReport Report(const SweepConfig& c) {
  SweepReport r = ReportFromSweep(Identity(c), c, RunSweep(c));
  std::map<std::string, uint64_t> saved;
  for (FailureReport& f : r.failures) {
    if (saved[f.scenario]++ >= r.sweep.repros_max) continue;
    f.has_repro = true;
    f.repro = fmt::format("repros/{}-seed{}.json", f.scenario, f.seed);
    f.reproduced = true;
  }
  return r;
}

// Through JSON text and back, as the files between shards and merge are.
SweepReport RoundTrip(const SweepReport& r) {
  absl::StatusOr<SweepReport> back = SweepReportFromJson(SweepReportToJson(r).dump(2));
  EXPECT_TRUE(back.ok()) << back.status();
  return *back;
}

std::string WithoutTiming(const SweepReport& r) {
  nlohmann::json j = SweepReportToJson(r);
  j.erase("timing");
  return j.dump(2);
}

std::vector<ShardReport> Shards(SweepConfig c, uint32_t count) {
  std::vector<ShardReport> shards;
  c.shard_count = count;
  for (uint32_t i = count; i-- > 0;) {  // any order
    c.shard_index = i;
    shards.push_back(ShardReport{fmt::format("shard{}.json", i), RoundTrip(Report(c))});
  }
  return shards;
}

TEST(SweepMergeTest, ShardsMergeToTheSingleProcessReport) {
  const SweepConfig c = Config(60);
  const SweepReport whole = Report(c);
  ASSERT_GT(whole.failures.size(), 8u);  // something to merge
  for (uint32_t n : {1u, 2u, 3u, 8u}) {
    const std::vector<ShardReport> shards = Shards(c, n);
    absl::StatusOr<SweepReport> merged = MergeShardReports(shards);
    ASSERT_TRUE(merged.ok()) << merged.status();
    EXPECT_EQ(WithoutTiming(*merged), WithoutTiming(whole)) << n << " shards";
    EXPECT_EQ(merged->timing.shards.size(), n);
    double slowest = 0;
    for (const ShardReport& s : shards) slowest = std::max(slowest, s.report.timing.wall_seconds);
    EXPECT_EQ(merged->timing.wall_seconds, slowest);
  }
}

TEST(SweepMergeTest, ShardsWithoutRunsPassAndThePlantedBugIsFoundByAnother) {
  const SweepConfig c = Config(8);  // 8 seeds in 10 shards: shards 8 and 9 run nothing
  const std::vector<ShardReport> shards = Shards(c, 10);
  size_t shards_without_runs = 0;
  for (const ShardReport& s : shards) {
    if (s.report.runs > 0) continue;
    ++shards_without_runs;
    EXPECT_TRUE(s.report.Ok()) << s.source;  // no shard fails for lack of runs
    for (const ScenarioReport& sc : s.report.scenarios) EXPECT_EQ(sc.Verdict(), "no runs");
  }
  EXPECT_EQ(shards_without_runs, 2u);
  absl::StatusOr<SweepReport> merged = MergeShardReports(shards);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(WithoutTiming(*merged), WithoutTiming(Report(c)));
  // A planted bug found by one shard is found, though other shards had no runs of it.
  size_t found = 0;
  for (const ScenarioReport& sc : merged->scenarios) found += sc.Verdict() == "bug found";
  EXPECT_GT(found, 0u);
}

TEST(SweepMergeTest, RefusesShardsThatAreNotOneWholeSweep) {
  const SweepConfig c = Config(10);
  const std::vector<ShardReport> shards = Shards(c, 3);
  auto refused = [](const std::vector<ShardReport>& s) {
    absl::StatusOr<SweepReport> r = MergeShardReports(s);
    EXPECT_FALSE(r.ok());
    return std::string(r.status().message());
  };
  EXPECT_THAT(refused({}), HasSubstr("no shard"));
  EXPECT_THAT(refused({shards[0], shards[2]}), HasSubstr("1 of 3 shards are missing: 1/3"));
  EXPECT_THAT(refused({shards[0], shards[1], shards[1]}), HasSubstr("shard 1/3 is given twice"));
  std::vector<ShardReport> other = shards;
  other[1].report.sweep.strategy = "random";
  EXPECT_THAT(refused(other), HasSubstr("different sweeps: --strategy 'pct:3' against 'random'"));
  other = shards;
  other[2].report.sweep.build = "another-build";
  EXPECT_THAT(refused(other), HasSubstr("build 'test-build' against 'another-build'"));
  other = shards;
  other[2].report.sweep.seeds = 11;
  EXPECT_THAT(refused(other), HasSubstr("--seeds"));
  other = shards;
  other[0].report.scenarios.pop_back();
  EXPECT_THAT(refused(other), HasSubstr("scenario count"));
  other = shards;
  SweepConfig four = c;
  four.shard_count = 4;
  four.shard_index = 3;
  other[1].report = Report(four);
  EXPECT_THAT(refused(other), HasSubstr("shard count"));
  other = shards;
  other[1].report.scenarios[0].runs -= 1;  // an interrupted shard
  EXPECT_THAT(refused(other), HasSubstr("an interrupted or edited run"));
}

TEST(SweepMergeTest, ShardRunsCountsTheSeedsOfAShard) {
  EXPECT_EQ(ShardRuns(10, 0, 3), 4u);  // 0 3 6 9
  EXPECT_EQ(ShardRuns(10, 2, 3), 3u);  // 2 5 8
  EXPECT_EQ(ShardRuns(3, 5, 8), 0u);
  EXPECT_EQ(ShardRuns(1, 0, 1), 1u);
}

}  // namespace
}  // namespace restoresim::sim
