// `restoresim merge` end to end: the shards of a sweep, each run by its own process, merge to
// what one process running the whole sweep prints — byte for byte in --json once "timing" is
// removed, for 1, 2, 3 and 8 shards, with the same repro files — and shards that are not one
// whole sweep are refused with one line and exit code 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"  // beside this file

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using Result = restoresim::tools::testing::CliResult;

std::string Bin() {
  const char* bin = std::getenv("RESTORESIM_BIN");
  return fs::absolute(bin != nullptr ? bin : "build/tools/restoresim").string();
}

// Runs restoresim in `dir`; stdout only, or with stderr too.
Result RunIn(const std::string& dir, const std::string& args, bool with_stderr = true) {
  return restoresim::tools::testing::RunShell("cd '" + dir + "' && " + Bin() + " " + args +
                                              (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string WithoutTiming(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text);
  j.erase("timing");
  return j.dump(2);
}

// The repro files of a folder, by name.
std::map<std::string, std::string> Repros(const std::string& dir) {
  std::map<std::string, std::string> files;
  if (!fs::exists(dir)) return files;
  for (const auto& e : fs::directory_iterator(dir)) {
    files[e.path().filename().string()] = Read(e.path().string());
  }
  return files;
}

class MergeCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/restoresim_merge_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Mkdir(const std::string& name) {
    fs::create_directories(dir_ + "/" + name);
    return dir_ + "/" + name;
  }
  // Runs shard i/n of `sweep` in dir_/shards<n>; returns its report's path from dir_/merged<n>.
  std::string RunShard(const std::string& sweep, uint32_t i, uint32_t n) {
    const std::string dir = Mkdir("shards" + std::to_string(n));
    const std::string name = "shard-" + std::to_string(i) + ".json";
    const Result r = RunIn(dir, sweep + " --shard " + std::to_string(i) + "/" +
                                    std::to_string(n) + " --json-out " + name +
                                    " --repro-dir repros-" + std::to_string(i) + " --quiet");
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out;
    return "../shards" + std::to_string(n) + "/" + name;
  }
  std::string dir_;
};

TEST_F(MergeCliTest, MergedShardsEqualOneProcessByteForByte) {
  // Every program (the runtime's scenarios, the bug programs, the demos): failures with repro
  // files, coverage marks, planted bugs found in some shards only.
  const std::string sweep = "explore --scenario all --seeds 12 --seed-start 3 --repros-max 2";
  const Result single = RunIn(Mkdir("single"), sweep + " --json --repro-dir repros --jobs 2",
                              /*with_stderr=*/false);
  ASSERT_TRUE(single.exit_code == 0 || single.exit_code == 1) << single.out;
  const auto sj = nlohmann::json::parse(single.out);
  ASSERT_GT(sj["failures"].size(), 10u);
  const auto single_repros = Repros(dir_ + "/single/repros");
  ASSERT_GT(single_repros.size(), 5u);
  for (uint32_t n : {1u, 2u, 3u, 8u}) {
    std::string shards;
    for (uint32_t i = 0; i < n; ++i) shards += " " + RunShard(sweep + " --jobs 1", i, n);
    const std::string merged_dir = Mkdir("merged" + std::to_string(n));
    const Result merged = RunIn(merged_dir, "merge" + shards + " --json --repros-to repros",
                                /*with_stderr=*/false);
    EXPECT_EQ(merged.exit_code, single.exit_code) << merged.out;
    EXPECT_EQ(WithoutTiming(merged.out), WithoutTiming(single.out)) << n << " shards";
    EXPECT_EQ(Repros(merged_dir + "/repros"), single_repros) << n << " shards";
    const auto timing = nlohmann::json::parse(merged.out)["timing"];
    EXPECT_EQ(timing["shards"].size(), n);
    EXPECT_GT(timing["seeds_per_second"].get<double>(), 0);
  }
  // A repro file merged from a shard replays from its new folder.
  const std::string repro = single_repros.begin()->first;
  const Result replay = RunIn(dir_ + "/merged8", "replay --repro repros/" + repro);
  EXPECT_EQ(replay.exit_code, 1) << replay.out;  // the failure, again
  EXPECT_THAT(replay.out, HasSubstr("reproduced"));
  EXPECT_THAT(replay.out, ::testing::Not(HasSubstr("NOT REPRODUCED")));

  // A shard's --json on stdout is its --json-out file.
  const std::string dir = dir_ + "/shards3";
  const Result stdout_json =
      RunIn(dir, sweep + " --jobs 1 --shard 1/3 --json --repro-dir repros-1", false);
  EXPECT_EQ(WithoutTiming(stdout_json.out), WithoutTiming(Read(dir + "/shard-1.json")));

  // The text report looks like explore's: the same table, then the totals over the shards.
  const Result text = RunIn(dir_ + "/merged3",
                            "merge ../shards3/shard-0.json ../shards3/shard-1.json "
                            "../shards3/shard-2.json");
  EXPECT_EQ(text.exit_code, single.exit_code) << text.out;
  EXPECT_THAT(text.out, HasSubstr("restoresim merge: 3 shards of scenario=all seeds=[3, 15)"));
  EXPECT_THAT(text.out, HasSubstr("runs/s over the slowest of 3 shards"));
  EXPECT_THAT(text.out, HasSubstr("trace hash " + sj["trace_hash"].get<std::string>()));
  EXPECT_THAT(text.out, HasSubstr("expected findings (--all-failures shows each in full)"));
  // The replay lines of the text name the binary as invoked, so they run when pasted.
  EXPECT_THAT(text.out, HasSubstr("bug.create_before_close found at seed 3 "
                                  "[invariant:registration]: " + Bin() + " replay "));
  EXPECT_THAT(text.out, HasSubstr("verdict: "));
  const Result full = RunIn(dir_ + "/merged3",
                            "merge --all-failures ../shards3/shard-0.json "
                            "../shards3/shard-1.json ../shards3/shard-2.json");
  EXPECT_THAT(full.out, HasSubstr("  replay: " + Bin() + " replay "));
  EXPECT_THAT(full.out, ::testing::Not(HasSubstr("expected findings")));
  const Result explore_text = RunIn(dir_ + "/single", sweep + " --repro-dir '' --quiet");
  const auto table = [](const std::string& s) {
    const size_t from = s.find("\nscenario ");
    return s.substr(from, s.find(" runs, ", from) - from);
  };
  EXPECT_EQ(table(text.out).substr(0, table(text.out).rfind('\n')),
            table(explore_text.out).substr(0, table(explore_text.out).rfind('\n')));
}

// Regression (issue 12): a shard that got none of the seeds failed with "NOT FOUND".
TEST_F(MergeCliTest, AShardWithoutRunsSucceeds) {
  const Result r =
      RunIn(dir_, "explore --scenario 'demo.abba*' --seeds 2 --shard 5/8 --json --repro-dir ''");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["runs"], 0);
  EXPECT_EQ(j["scenarios"][0]["verdict"], "no runs");
  EXPECT_TRUE(j["ok"].get<bool>());
  const Result text = RunIn(dir_, "explore --scenario 'demo.abba*' --seeds 2 --shard 5/8");
  EXPECT_EQ(text.exit_code, 0) << text.out;
  EXPECT_THAT(text.out, HasSubstr("no runs"));
}

TEST_F(MergeCliTest, RefusesWhatIsNotOneWholeSweepWithOneLine) {
  for (const char* s : {"0/2 --seeds 6 --json-out a0.json", "1/2 --seeds 6 --json-out a1.json",
                        "1/2 --seeds 6 --strategy random --json-out r1.json",
                        "1/2 --seeds 7 --json-out s1.json", "0/3 --seeds 6 --json-out t0.json"}) {
    const Result r = RunIn(dir_, "explore --scenario 'demo.lost*' --repro-dir '' --quiet --shard " +
                                     std::string(s));
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out;
  }
  const Result good = RunIn(dir_, "merge a0.json a1.json");
  ASSERT_TRUE(good.exit_code == 0 || good.exit_code == 1) << good.out;
  auto edited = nlohmann::json::parse(Read(dir_ + "/a1.json"));
  edited["build"] = "restoresim 0.0.9 gnu-build-id:00";
  std::ofstream(dir_ + "/b1.json") << edited.dump(2);
  std::ofstream(dir_ + "/broken.json") << "{\"format\": \"restoresim-sweep\", ";
  std::ofstream(dir_ + "/other.json") << "{\"format\": \"restoresim-repro\", \"version\": 2}";
  ASSERT_EQ(mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  ASSERT_EQ(truncate((dir_ + "/huge.json").c_str(), 0), -1);  // does not exist yet
  std::ofstream(dir_ + "/huge.json").close();
  ASSERT_EQ(truncate((dir_ + "/huge.json").c_str(), off_t{300} << 20), 0);  // sparse
  struct Case {
    std::string args;
    std::string message;
  } cases[] = {
      {"a0.json r1.json", "a0.json and r1.json are shards of different sweeps: --strategy "
                          "'pct:3' against 'random'"},
      {"a0.json s1.json", "different sweeps: --seeds '6' against '7'"},
      {"a0.json b1.json", "different sweeps: build"},
      {"a0.json t0.json", "different sweeps: shard count '2' against '3'"},
      {"a0.json", "1 of 2 shards are missing: 1/2"},
      {"a0.json a1.json a1.json", "shard 1/2 is given twice: a1.json and a1.json"},
      {"a0.json broken.json", "broken.json: not a shard report: report: not JSON"},
      {"a0.json other.json", "other.json: not a shard report: report: not a sweep report"},
      {"a0.json fifo", "not a regular file (a FIFO)"},
      {"a0.json huge.json", "huge.json is 314572800 bytes (at most 268435456)"},
      {"a0.json nosuch.json", "nosuch.json: No such file or directory"},
      {"a0.json a1.json --repros-to a0.json", "--repros-to"},
      {"", "shards is required"},
  };
  for (const Case& c : cases) {
    const Result r = RunIn(dir_, "merge " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.message)) << c.args;
    EXPECT_LE(std::count(r.out.begin(), r.out.end(), '\n'), 2) << c.args << "\n" << r.out;
  }
}

}  // namespace
