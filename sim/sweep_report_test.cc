// Sweep reports: JSON that reads back to the same bytes, timing kept apart from the rest, the
// verdicts of a shard without runs, and a reader that refuses edited, truncated or foreign
// files with the field named.
#include "sim/sweep_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/util/prng.h"
#include "sim/demos/demos.h"

namespace restoresim::sim {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

SweepReport DemoReport(uint32_t shard_index = 0, uint32_t shard_count = 1) {
  static const ProgramRegistry* registry = []() {
    auto* r = new ProgramRegistry();
    EXPECT_TRUE(RegisterDemoPrograms(*r).ok());
    return r;
  }();
  SweepConfig c;
  c.programs = registry->All();
  c.seeds = 40;
  c.shard_index = shard_index;
  c.shard_count = shard_count;
  c.run.strategy = *StrategySpec::Parse("pct:3");
  SweepIdentity id{.build = "b", .scenario = "demo.*", .seeds = c.seeds, .strategy = "pct:3",
                   .repros_max = 3, .failures_kept_max = c.failures_kept_max};
  SweepReport r = ReportFromSweep(id, c, RunSweep(c));
  if (!r.failures.empty()) {
    r.failures[0].has_repro = true;
    r.failures[0].repro = "x.json";
    r.failures[0].reproduced = true;
  }
  return r;
}

TEST(SweepReportTest, JsonReadsBackToTheSameBytes) {
  const SweepReport r = DemoReport();
  ASSERT_GT(r.failures.size(), 0u);
  const std::string text = SweepReportToJson(r).dump(2);
  absl::StatusOr<SweepReport> back = SweepReportFromJson(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(SweepReportToJson(*back).dump(2), text);
  const json j = json::parse(text);
  EXPECT_EQ(j["format"], "restoresim-sweep");
  EXPECT_EQ(j["shard"], "0/1");
  // Everything that depends on the process is under timing, and only there.
  for (const char* key : {"jobs", "wall_seconds", "seeds_per_second"}) {
    EXPECT_TRUE(j["timing"].contains(key)) << key;
    EXPECT_FALSE(j.contains(key)) << key;
  }
}

TEST(SweepReportTest, AScenarioWithoutRunsHasNoVerdictOfItsOwn) {
  ScenarioReport bug{.name = "demo.x", .bug_expected = true};
  EXPECT_EQ(bug.Verdict(), "no runs");
  EXPECT_TRUE(bug.AsExpected());
  bug.runs = 5;
  // Not found within the seeds given: said, not a failure (issue 24).
  EXPECT_EQ(bug.Verdict(), "not found");
  EXPECT_TRUE(bug.NotFound());
  EXPECT_TRUE(bug.AsExpected());
  bug.failed_runs = 2;
  EXPECT_EQ(bug.Verdict(), "NOT NAMED");
  EXPECT_FALSE(bug.AsExpected());
  bug.found_runs = 1;
  EXPECT_EQ(bug.Verdict(), "bug found");
  ScenarioReport correct{.name = "demo.y", .runs = 3};
  EXPECT_EQ(correct.Verdict(), "ok");
  correct.failed_runs = 1;
  EXPECT_EQ(correct.Verdict(), "FAILED");
  // A whole shard without runs is ok (its exit code is 0).
  const SweepReport empty = DemoReport(/*shard_index=*/45, /*shard_count=*/50);
  EXPECT_EQ(empty.runs, 0u);
  EXPECT_TRUE(empty.Ok());
}

void ExpectRefused(const std::function<void(json&)>& edit, const std::string& message) {
  json j = SweepReportToJson(DemoReport());
  edit(j);
  absl::StatusOr<SweepReport> r = SweepReportFromJson(j.dump());
  ASSERT_FALSE(r.ok()) << message;
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(message));
}

TEST(SweepReportTest, RefusesWhatIsNotAConsistentReport) {
  EXPECT_THAT(std::string(SweepReportFromJson("{\"runs\": ").status().message()),
              HasSubstr("not JSON"));
  EXPECT_THAT(std::string(SweepReportFromJson("[1]").status().message()),
              HasSubstr("not a JSON object"));
  ExpectRefused([](json& j) { j["format"] = "restoresim-repro"; }, "not a sweep report");
  ExpectRefused([](json& j) { j["version"] = 7; }, "version 7");
  ExpectRefused([](json& j) { j.erase("build"); }, "field 'build' is missing");
  ExpectRefused([](json& j) { j["seeds"] = -1; }, "field 'seeds' is not an integer");
  ExpectRefused([](json& j) { j["shard"] = "3/3"; }, "field 'shard' is not I/N");
  ExpectRefused([](json& j) { j["shard"] = "1/"; }, "field 'shard' is not I/N");
  ExpectRefused([](json& j) { j["trace_hash"] = "0x12"; }, "field 'trace_hash' is not 0x");
  ExpectRefused([](json& j) { j["runs"] = j["runs"].get<uint64_t>() + 1; },
                "not the sum over its scenarios");
  ExpectRefused([](json& j) { j["scenarios"][0]["failed"] = 1000; }, "field 'failed'");
  ExpectRefused([](json& j) { j["scenarios"][1]["name"] = j["scenarios"][0]["name"]; },
                "listed twice");
  ExpectRefused([](json& j) { j["failures"].erase(j["failures"].size() - 1); },
                "not min(failed, failures_kept_max)");
  ExpectRefused(
      [](json& j) {
        json& f = j["failures"];
        for (size_t i = 1; i < f.size(); ++i) {
          if (f[i]["scenario"] == f[i - 1]["scenario"]) {
            f[i]["seed"] = f[i - 1]["seed"];
            return;
          }
        }
        FAIL() << "no scenario with two failures";
      },
      "seed order");
  ExpectRefused([](json& j) { j["ok"] = !j["ok"].get<bool>(); }, "field 'ok' disagrees");
  ExpectRefused([](json& j) { j["timing"]["wall_seconds"] = "fast"; }, "timing: field");
}

// Damaged files (bytes changed, cut short) are refused or read, never crash the reader; what
// reads back is a consistent report.
TEST(SweepReportTest, DamagedTextIsRefusedNotACrash) {
  const std::string text = SweepReportToJson(DemoReport()).dump(2);
  Prng prng(14);
  constexpr int kEditsMax = 400;
  int refused = 0;
  for (int i = 0; i < kEditsMax; ++i) {
    std::string damaged = text;
    if (i % 4 == 0) {
      damaged.resize(prng.Uniform(damaged.size()));
    } else {
      for (int k = 0; k < 3; ++k) {
        damaged[prng.Uniform(damaged.size())] = static_cast<char>(prng.Uniform(256));
      }
    }
    absl::StatusOr<SweepReport> r = SweepReportFromJson(damaged);
    if (!r.ok()) {
      ++refused;
      EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
      continue;
    }
    EXPECT_EQ(SweepReportFromJson(SweepReportToJson(*r).dump(2)).ok(), true);
  }
  EXPECT_GT(refused, kEditsMax / 2);
}

}  // namespace
}  // namespace restoresim::sim
