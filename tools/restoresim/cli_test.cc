// The restoresim binary end to end: determinism across processes (the same seeds give the same
// trace hashes in two separate processes, with different address-space layouts), the printed
// replay line reproducing the failure, repro files, timelines, and clear errors for bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"  // beside this file

#include <sys/stat.h>
#include <unistd.h>

namespace {

using ::testing::HasSubstr;

using Result = restoresim::tools::testing::CliResult;

std::string Bin() {
  const char* bin = std::getenv("RESTORESIM_BIN");
  return bin != nullptr ? bin : "build/tools/restoresim";
}

// stdout and stderr, or stdout only.
Result RunCli(const std::string& args, bool stdout_only = false) {
  return restoresim::tools::testing::RunShell(Bin() + " " + args +
                                              (stdout_only ? " 2>/dev/null" : " 2>&1"));
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/restoresim_cli_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(CliTest, SameSeedsSameTraceHashInTwoProcesses) {
  // The scheduler's programs over many seeds; the runtime's scenarios over a few (each run is
  // ~10k steps), in a separate sweep below.
  const std::string args = "explore --scenario 'demo.*' --seeds 3000 --json --repro-dir ''";
  const Result a = RunCli(args + " --jobs 1");
  const Result b = RunCli(args + " --jobs 2");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  ASSERT_EQ(b.exit_code, 0) << b.out;
  const auto ja = nlohmann::json::parse(a.out);
  const auto jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja["trace_hash"], jb["trace_hash"]);
  EXPECT_EQ(ja["failed_runs"], jb["failed_runs"]);
  for (size_t i = 0; i < ja["scenarios"].size(); ++i) {
    EXPECT_EQ(ja["scenarios"][i]["trace_hash"], jb["scenarios"][i]["trace_hash"])
        << ja["scenarios"][i]["name"];
  }
  // And with another strategy the fingerprint changes: the hash covers the schedule.
  const Result c =
      RunCli("explore --scenario 'demo.*' --seeds 300 --json --repro-dir '' --strategy random");
  EXPECT_NE(nlohmann::json::parse(c.out)["trace_hash"], ja["trace_hash"]);
  // The runtime itself, over the fake broker and file system, is just as deterministic.
  const std::string runtime = "explore --scenario 'scenario.*' --seeds 12 --json --repro-dir ''";
  const Result r1 = RunCli(runtime + " --jobs 1");
  const Result r2 = RunCli(runtime + " --jobs 2");
  ASSERT_EQ(r1.exit_code, 0) << r1.out;
  EXPECT_EQ(nlohmann::json::parse(r1.out)["trace_hash"],
            nlohmann::json::parse(r2.out)["trace_hash"]);
}

TEST_F(CliTest, ExploreJsonHasTheDocumentedFields) {
  const Result r = RunCli("explore --scenario 'demo.abba*' --seeds 50 --json --repro-dir " + dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"seeds", "failures", "trace_hash", "runs", "failed_runs",
                          "scenarios", "ok", "build", "shard", "timing"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_TRUE(j["timing"].contains("seeds_per_second"));  // per process: apart from the rest
  EXPECT_EQ(j["seeds"], 50);
  ASSERT_GT(j["failures"].size(), 0u);
  const auto& f = j["failures"][0];
  EXPECT_TRUE(f.contains("seed"));
  EXPECT_THAT(f["replay"].get<std::string>(), HasSubstr("restoresim replay demo.abba_deadlock"));
  EXPECT_TRUE(f["reproduced"].get<bool>());
  EXPECT_TRUE(std::filesystem::exists(f["repro"].get<std::string>()));
}

TEST_F(CliTest, PrintedReplayLineReproducesTheFailure) {
  const Result sweep =
      RunCli("explore --scenario demo.lost_update --seeds 50 --json --repro-dir " + dir_);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out;
  const auto j = nlohmann::json::parse(sweep.out);
  ASSERT_GT(j["failures"].size(), 0u);
  const std::string replay = j["failures"][0]["replay"];
  const std::string expected_hash = j["failures"][0]["trace_hash"];
  ASSERT_EQ(replay.rfind("restoresim ", 0), 0u);
  const Result r = RunCli(replay.substr(std::string("restoresim ").size()) + " --timeline " +
                       dir_ + "/t.json");
  EXPECT_EQ(r.exit_code, 1) << r.out;  // the failure reproduced
  EXPECT_THAT(r.out, HasSubstr("lost update"));
  EXPECT_THAT(r.out, HasSubstr("trace-hash=" + expected_hash));
  std::ifstream timeline(dir_ + "/t.json");
  const auto trace = nlohmann::json::parse(timeline);
  EXPECT_GT(trace["traceEvents"].size(), 10u);

  const Result from_file = RunCli("replay --repro " + j["failures"][0]["repro"].get<std::string>());
  EXPECT_EQ(from_file.exit_code, 1) << from_file.out;
  EXPECT_THAT(from_file.out, HasSubstr("reproduced"));
  EXPECT_THAT(from_file.out, ::testing::Not(HasSubstr("NOT REPRODUCED")));
}

TEST_F(CliTest, SweepOfCorrectProgramsSucceedsAndPrintsATable) {
  const Result r = RunCli("explore --scenario 'demo.*' --seeds 3000 --repro-dir " + dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("restoresim explore: scenario=demo.* seeds=[0, 3000)"));
  EXPECT_THAT(r.out, HasSubstr("demo.lost_update_fixed"));
  EXPECT_THAT(r.out, HasSubstr("bug found"));
  EXPECT_THAT(r.out, HasSubstr("runs/s"));
  EXPECT_THAT(r.out, HasSubstr("verdict: every scenario behaved as expected"));
}

TEST_F(CliTest, BadInputGivesAClearErrorAndExitCode2) {
  struct Case {
    std::string args;
    std::string message;
  } cases[] = {
      {"explore --scenario nosuch", "no scenario matches 'nosuch'"},
      {"explore --strategy dfs", "unknown strategy 'dfs'"},
      {"explore --strategy pct:0", "pct depth"},
      {"explore --shard 2/2", "--shard '2/2'"},
      {"explore --shard x", "expected I/N"},
      {"explore --seeds 0", "--seeds"},
      {"explore --seeds -5", "seeds"},
      {"explore --spurious-per-mille 5000", "spurious"},
      {"replay demo.lost_update", "needs SCENARIO --seed N"},
      {"replay nosuch --seed 1", "no scenario matches 'nosuch'"},
      {"replay --repro /nonexistent/file.json", "/nonexistent/file.json"},
      // Options that a repro file overrides, or that do nothing without one (issue 12).
      {"replay --repro /nonexistent/file.json --strategy pos",
       "--strategy cannot be used with --repro"},
      {"replay --repro /nonexistent/file.json --steps-max 9", "--steps-max cannot be used"},
      {"replay demo.lost_update --seed 1 --ignore-schedule",
       "--ignore-schedule only applies to --repro"},
      {"frobnicate", "unknown command 'frobnicate'"},
      {"config /nonexistent/streams.properties", "cannot open /nonexistent/streams.properties"},
      {"config", "file is required"},
      // Negative values are errors, not wrapped to 2^64-1 (issue 12).
      {"explore --seed-start -5 --seeds 3", "'-5' (for --seed-start): no option takes a negative"},
      {"replay demo.lost_update --seed=-1", "'-1': no option takes a negative"},
      {"explore --jobs -2", "no option takes a negative"},
      // Long bad values are echoed as a bounded prefix with their length.
      {"explore --scenario " + std::string(3000, 'x'), "... (3000 bytes)"},
      {"explore --scenario " + std::string(5000, 'x'), "argument 3 is 5000 bytes long"},
  };
  for (const Case& c : cases) {
    const Result r = RunCli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.message)) << c.args.substr(0, 100);
    EXPECT_LT(r.out.size(), 2000u) << c.args.substr(0, 100);
  }
  // A FIFO or a directory as a repro file is refused at once, not waited on.
  ASSERT_EQ(mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  for (const std::string& command : {"replay --repro ", "shrink "}) {
    const Result fifo = RunCli(command + dir_ + "/fifo");
    EXPECT_EQ(fifo.exit_code, 2) << fifo.out;
    EXPECT_THAT(fifo.out, HasSubstr("not a regular file (a FIFO)"));
  }
  const Result directory = RunCli("replay --repro " + dir_);
  EXPECT_THAT(directory.out, HasSubstr("not a regular file (a directory)"));
  // A corrupt repro file is rejected, never crashes.
  std::ofstream(dir_ + "/bad.json") << "{\"format\": \"restoresim-repro\", \"version\": 99}";
  const Result r = RunCli("replay --repro " + dir_ + "/bad.json");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("version"));
}

// The benchmarks' options, refused with the option named (issues 12, 21); since issue 20 each
// benchmark is a subcommand with its own options, and an option of the other one says where it
// belongs.
TEST_F(CliTest, BadBenchOptionsGiveAClearErrorAndExitCode2) {
  struct Case {
    std::string args;
    std::string message;
  } cases[] = {
      {"bench sim --scenario nosuch", "no scenario matches 'nosuch'"},
      {"bench sim --seeds 0", "must be positive"},
      {"bench sim --strategy nosuch", "nosuch"},
      {"bench restore --records 1000", "--backend is required"},
      {"bench restore --backend nosuch", "--backend: fake or kafka, not 'nosuch'"},
      {"bench restore --backend sim", "sim is not a restore backend: `restoresim bench sim`"},
      {"bench restore --backend fake --records 0", "must be positive"},
      {"bench restore --backend fake --rounds 0", "must be positive"},
      {"bench restore --backend fake --records 10 --partitions 20",
       "--records must be >= --partitions"},
      {"bench restore --backend fake --tombstones 1.5", "--tombstones"},
      {"bench restore --backend fake --sizes 1000,x", "--sizes"},
      {"bench restore --backend fake --peer kafka-streams", "--peer needs --backend kafka"},
      {"bench restore --backend kafka --peer flink", "--peer must be kafka-streams"},
      {"bench restore --backend fake --bootstrap-servers 127.0.0.1:9", "needs --backend kafka"},
      {"bench restore --backend fake --checkpoint-fraction 0", "--checkpoint-fraction"},
      {"bench restore --backend fake --records x", "--records"},
      {"bench restore --backend fake --guarantee exactly_once",
       "--guarantee must be at_least_once or"},
      {"bench restore --backend fake --guarantee exactly_once_v2 --aborted-share 1",
       "--aborted-share is a share of transactions in [0, 1)"},
      {"bench restore --backend fake --guarantee exactly_once_v2 --aborted-share -0.5",
       "no option takes a negative"},
      {"bench restore --backend fake --aborted-share 0.1", "need --guarantee exactly_once_v2"},
      {"bench restore --backend fake --guarantee exactly_once_v2 --transaction-records 0",
       "--transaction-records must be positive"},
      {"bench restore --backend fake --restore-child a,b,1,default,x,1,-1",
       "--restore-child needs --backend kafka"},
      // An option of the other benchmark, another option, a stray word.
      {"bench sim --records 1000",
       "bench sim: --records is an option of `restoresim bench restore`, not of `bench sim`"},
      {"bench sim --guarantee=exactly_once_v2", "--guarantee is an option of `restoresim bench "
                                                "restore`"},
      {"bench sim --backend fake", "--backend is an option of `restoresim bench restore`"},
      {"bench restore --backend fake --seeds 5",
       "bench restore: --seeds is an option of `restoresim bench sim`, not of `bench restore`"},
      {"bench restore --backend fake --strategy pct:3", "--strategy is an option of `restoresim "
                                                        "bench sim`"},
      {"bench sim --nosuch 1", "bench sim: unknown option --nosuch"},
      {"bench sim extra", "bench sim: unexpected argument 'extra'"},
      {"bench sim restore --backend fake", "bench sim: unexpected argument 'restore'"},
      // The spellings from before the split (`bench [--backend sim|fake|kafka]`): refused, with
      // the new one named.
      {"bench", "restoresim bench: name the benchmark: `restoresim bench sim`"},
      {"bench --seeds 5", "'--seeds' before the benchmark's name"},
      {"bench --backend sim --seeds 5", "`bench --backend sim` is `bench sim` now"},
      {"bench --backend fake --records 1000",
       "`bench --backend fake` is `bench restore --backend fake` now"},
      {"bench --backend=kafka", "`bench --backend kafka` is `bench restore --backend kafka` now"},
  };
  for (const Case& c : cases) {
    const Result r = RunCli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.message)) << c.args;
  }
}

// An explored failure shrinks to the depth-3 bug's two preemptions, the shrunk repro replays,
// and shrinking is deterministic (the same file again, with other --jobs).
TEST_F(CliTest, ShrinkMinimisesAnExploredFailureAndTheResultReplays) {
  const Result sweep = RunCli("explore --scenario demo.order_violation_d3 --seeds 1000 --json "
                              "--repros-max 1 --repro-dir " + dir_);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out;
  const std::string repro = nlohmann::json::parse(sweep.out)["failures"][0]["repro"];
  ASSERT_TRUE(repro.ends_with(".json")) << repro;
  const std::string shrunk = repro.substr(0, repro.size() - 5) + ".min.json";

  const Result r = RunCli("shrink " + repro + " --json --jobs 1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["output"], shrunk);
  EXPECT_EQ(j["signature"], "failed: owner and helper both hold the claim");
  EXPECT_TRUE(j["fixed_point"].get<bool>());
  EXPECT_TRUE(j["input_reproduced_exactly"].get<bool>());
  EXPECT_GT(j["runs"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["after"]["preemptions"], 2);  // the bug's depth minus one: as small as it gets
  EXPECT_LT(j["after"]["preemptions"], j["before"]["preemptions"]);
  EXPECT_LE(j["after"]["choices"], j["before"]["choices"]);
  EXPECT_EQ(j["replay"], "restoresim replay --repro " + shrunk);

  const Result replay = RunCli("replay --repro " + shrunk);
  EXPECT_EQ(replay.exit_code, 1) << replay.out;  // the failure, reproduced
  EXPECT_THAT(replay.out, HasSubstr("owner and helper both hold the claim"));
  EXPECT_THAT(replay.out, HasSubstr(": reproduced"));

  const Result again = RunCli("shrink " + repro + " --jobs 2 --out " + dir_ + "/again.json");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_THAT(again.out, HasSubstr("shrunk to a fixed point in " + j["runs"].dump() + " runs"));
  EXPECT_THAT(again.out, HasSubstr("preemptions:  " + j["before"]["preemptions"].dump() + " -> 2"));
  // Printed with the binary as invoked, so that it runs when pasted.
  EXPECT_THAT(again.out, HasSubstr("replay: " + Bin() + " replay --repro " + dir_ + "/again.json"));
  auto read = [](const std::string& path) {
    nlohmann::json file = nlohmann::json::parse(std::ifstream(path));
    file.erase("replay");  // names the file
    return file;
  };
  EXPECT_EQ(read(shrunk), read(dir_ + "/again.json"));
}

// A failure found by POS is saved, replayed from its printed line and its repro file, and
// shrunk like any other: the repro records the thread picks, so POS itself is not needed again.
TEST_F(CliTest, PosFailureReplaysAndShrinks) {
  const Result sweep = RunCli("explore --scenario demo.order_violation_d3 --seeds 100 --json "
                              "--strategy pos --repros-max 1 --repro-dir " + dir_);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out;
  const auto failure = nlohmann::json::parse(sweep.out)["failures"][0];
  const std::string line = failure["replay"];
  EXPECT_THAT(line, HasSubstr("--strategy pos"));
  const Result by_line = RunCli(line.substr(std::string("restoresim ").size()));
  EXPECT_EQ(by_line.exit_code, 1) << by_line.out;
  EXPECT_THAT(by_line.out, HasSubstr("trace-hash=" + failure["trace_hash"].get<std::string>()));
  const std::string repro = failure["repro"];
  const Result by_file = RunCli("replay --repro " + repro);
  EXPECT_EQ(by_file.exit_code, 1) << by_file.out;
  EXPECT_THAT(by_file.out, HasSubstr("strategy=pos"));
  EXPECT_THAT(by_file.out, HasSubstr(": reproduced"));

  const Result r = RunCli("shrink " + repro + " --json --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["signature"], "failed: owner and helper both hold the claim");
  EXPECT_EQ(j["after"]["preemptions"], 2);
  const Result shrunk = RunCli("replay --repro " + j["output"].get<std::string>());
  EXPECT_EQ(shrunk.exit_code, 1) << shrunk.out;
  EXPECT_THAT(shrunk.out, HasSubstr(": reproduced"));
}

TEST_F(CliTest, ShrinkBadInputGivesAClearErrorAndExitCode2) {
  const Result sweep = RunCli("explore --scenario demo.lost_update --seeds 50 --json "
                              "--repros-max 1 --repro-dir " + dir_);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out;
  const std::string repro = nlohmann::json::parse(sweep.out)["failures"][0]["repro"];
  const nlohmann::json good = nlohmann::json::parse(std::ifstream(repro));
  auto edited = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json doc = good;
    edit(doc);
    const std::string path = dir_ + "/" + name + ".json";
    std::ofstream(path) << doc.dump(2);
    return path;
  };
  std::ofstream(dir_ + "/not_json.json") << "{\"format\": ";
  struct Case {
    std::string args;
    std::string message;
  } cases[] = {
      {"shrink", "repro is required"},
      {"shrink /nonexistent/file.json", "/nonexistent/file.json"},
      {"shrink " + dir_ + "/not_json.json", "not JSON"},
      {"shrink " + edited("passing",
                          [](auto& d) {
                            d["expected"]["outcome"] = "ok";
                            d["expected"].erase("failure");
                          }),
       "passing run"},
      {"shrink " + edited("other",
                          [](auto& d) { d["expected"]["failure"]["detail"] = "another bug"; }),
       "does not reproduce"},
      {"shrink " + edited("misfit", [](auto& d) { d["expected"]["outcome"] = "ok"; }),
       "is not a failure kind of outcome \"ok\""},
      {"shrink " + edited("nosuch", [](auto& d) { d["scenario"] = "nosuch"; }),
       "unknown scenario 'nosuch'"},
      {"shrink " + repro + " --out " + repro, "--out names the input file"},
      {"shrink " + repro + " --max-runs -1", "--max-runs"},
      {"shrink " + repro + " --jobs 100000", "--jobs"},
  };
  for (const Case& c : cases) {
    const Result r = RunCli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.message)) << c.args.substr(0, 100);
    EXPECT_LT(r.out.size(), 2000u) << c.args.substr(0, 100);
  }
}

// Outputs (issue 12): a symlink is written through, not replaced; "-" is standard output with
// the report on stderr; a read-only file, a directory or a missing directory is refused with
// exit 2 before any work, and a refused file keeps its contents.
TEST_F(CliTest, OutputPathsFollowLinksHonourDashAndRefuseWhatTheyMustNotReplace) {
  const std::string replay = "replay demo.abba_deadlock --seed 12 --strategy pct:3 --timeline ";
  std::filesystem::create_symlink("real.json", dir_ + "/link.json");
  Result r = RunCli(replay + dir_ + "/link.json");
  EXPECT_EQ(r.exit_code, 1) << r.out;  // the deadlock was replayed
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ + "/link.json"));
  std::ifstream real(dir_ + "/real.json");
  EXPECT_TRUE(nlohmann::json::parse(real).contains("traceEvents"));

  r = RunCli(replay + "-", /*stdout_only=*/true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(nlohmann::json::parse(r.out).contains("traceEvents")) << r.out.substr(0, 200);

  const std::string ro = dir_ + "/ro.json";
  { std::ofstream(ro) << "keep"; }
  std::filesystem::permissions(ro, std::filesystem::perms::owner_read |
                                       std::filesystem::perms::group_read |
                                       std::filesystem::perms::others_read);
  r = RunCli(replay + ro);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("not writable"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("outcome:"))) << "refused before the run";
  std::ifstream kept(ro);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "keep");

  r = RunCli(replay + dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("is a directory"));
  r = RunCli(replay + dir_ + "/missing/t.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("does not exist"));
}

TEST_F(CliTest, ScenariosListsEveryDemo) {
  const Result r = RunCli("scenarios");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* name : {"demo.lost_update", "demo.abba_deadlock", "demo.missed_notification",
                           "demo.order_violation_d2", "demo.order_violation_d3"}) {
    EXPECT_THAT(r.out, HasSubstr(name));
  }
  const Result j = RunCli("scenarios --json");
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["format"], "restoresim-scenarios");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_GE(doc["programs"].size(), 10u);
}

}  // namespace

// The benchmark measures a runtime scenario with the oracle on and off; the oracle adds no
// scheduling point, so both modes run the same schedules.
TEST_F(CliTest, BenchReportsSeedsPerSecondAndTheOracleKeepsTheSchedule) {
  const Result r = RunCli("bench sim --scenario scenario.restore_then_process --seeds 6 "
                          "--rounds 1 --jobs 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["format"], "restoresim-bench-sim");
  EXPECT_EQ(doc["version"], 1);
  const auto& j = doc["rows"];
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["scenario"], "scenario.restore_then_process");
  EXPECT_TRUE(j[0]["same_schedule"].get<bool>());
  EXPECT_GT(j[0]["steps_per_seed"].get<double>(), 100);
  EXPECT_GT(j[0]["seeds_per_second_oracle_on"].get<double>(), 0);
  EXPECT_EQ(j[0]["failed_runs"], 0);
}

// The zoo: every mutation is found by its invariants within a small budget, and the plain
// runtime passes the same seeds.
TEST_F(CliTest, ZooFindsEveryMutationAndThePlainRuntimePasses) {
  const Result r = RunCli("zoo --strategy pct:3 --sweeps 2 --seeds-max 2000 --budget-s 60 "
                          "--shrink-runs 50 --jobs 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["ok"].get<bool>());
  ASSERT_GE(j["rows"].size(), 18u);
  for (const auto& row : j["rows"]) {
    EXPECT_TRUE(row["all_found"].get<bool>()) << row["mutation"];
    EXPECT_EQ(row["plain_failures"], 0) << row["mutation"];
    EXPECT_GT(row["plain_runs"].get<uint64_t>(), 0u) << row["mutation"];
    EXPECT_FALSE(row["sweeps"][0]["invariant"].get<std::string>().empty()) << row["mutation"];
  }
  const Result bad = RunCli("zoo --mutations no-such-mutation");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.out, HasSubstr("selects nothing"));
}

// `--version` prints the build id, the one a sweep report carries (and `merge` compares).
TEST_F(CliTest, VersionPrintsTheBuildIdOfTheReports) {
  const Result v = RunCli("--version", /*stdout_only=*/true);
  ASSERT_EQ(v.exit_code, 0) << v.out;
  EXPECT_THAT(v.out,
              ::testing::MatchesRegex("restoresim [0-9.]+ (gnu-build-id|exe-hash):[0-9a-f]+\n"));
  const Result r = RunCli("explore --scenario demo.lost_update --seeds 2 --json --repro-dir ''",
                          /*stdout_only=*/true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["build"].get<std::string>() + "\n", v.out);
}

// `--scenario` (explore, bench), replay's SCENARIO and `zoo --mutations` take names and globs,
// comma-separated, in one order whatever the list's; an element that selects nothing is an
// error naming it.
TEST_F(CliTest, ScenarioListsAndGlobsSelectInOneOrderAndNameWhatMatchesNothing) {
  const std::string explore = "explore --seeds 20 --json --repro-dir '' --scenario ";
  const Result a = RunCli(explore + "'demo.lost_update,demo.abba*'", /*stdout_only=*/true);
  const Result b =
      RunCli(explore + "'demo.abba_deadlock?fixed,demo.lost_upd?te,demo.abba_deadlock'",
             /*stdout_only=*/true);
  ASSERT_EQ(a.exit_code, 0) << a.out;
  ASSERT_EQ(b.exit_code, 0) << b.out;
  const auto ja = nlohmann::json::parse(a.out);
  std::vector<std::string> names;
  for (const auto& s : ja["scenarios"]) names.push_back(s["name"]);
  EXPECT_THAT(names, ::testing::ElementsAre("demo.abba_deadlock", "demo.abba_deadlock_fixed",
                                            "demo.lost_update"));
  EXPECT_EQ(ja["trace_hash"], nlohmann::json::parse(b.out)["trace_hash"]);
  const Result one = RunCli("replay 'demo.lost_upd?te' --seed 1");
  EXPECT_NE(one.exit_code, 2) << one.out;
  EXPECT_THAT(one.out, HasSubstr("scenario=demo.lost_update seed=1"));
  const Result zoo = RunCli("zoo --mutations 'early-type-flip,create-before-*' --sweeps 1 "
                            "--seeds-max 1 --shrink-runs 1 --strategy random --json",
                            /*stdout_only=*/true);
  std::vector<std::string> mutations;
  const auto rows = nlohmann::json::parse(zoo.out)["rows"];
  for (const auto& row : rows) mutations.push_back(row["mutation"]);
  EXPECT_THAT(mutations, ::testing::ElementsAre("create-before-close", "early-type-flip"));
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"explore --scenario 'demo.*,nosuch'", "no scenario matches 'nosuch' (in 'demo.*,"},
           {"explore --scenario 'demo.lost_update,'", "no scenario matches '' (in"},
           {"bench sim --scenario 'scenario.?'", "no scenario matches 'scenario.?'"},
           {"replay 'demo.*' --seed 1", "programs (demo.abba_deadlock, "},
           {"zoo --mutations 'create-*,nosuch'",
            "'nosuch' (in 'create-*,nosuch') selects nothing"}}) {
    const Result r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(message)) << args;
  }
}

// Every `--json` output is one object naming its format and version (docs/USING.md, "JSON
// outputs"); `replay --json` reports the run and whether its repro file reproduced.
TEST_F(CliTest, EveryJsonOutputNamesItsFormatAndVersion) {
  const auto doc = [&](const std::string& args, const std::string& format, int exit_code) {
    const Result r = RunCli(args, /*stdout_only=*/true);
    EXPECT_EQ(r.exit_code, exit_code) << args << "\n" << r.out;
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(j.is_object()) << args << "\n" << r.out;
    if (!j.is_object()) return nlohmann::json::object();
    EXPECT_EQ(j["format"], format) << args;
    EXPECT_EQ(j["version"], 1) << args;
    return j;
  };
  const std::string report = dir_ + "/s.json";
  const auto sweep = doc("explore --scenario demo.abba_deadlock --seeds 30 --json --repro-dir " +
                             dir_ + " --json-out " + report,
                         "restoresim-sweep", 0);
  ASSERT_FALSE(sweep["failures"].empty());
  const std::string repro = sweep["failures"][0]["repro"];
  doc("merge " + report + " --json", "restoresim-sweep", 0);
  doc("scenarios --json", "restoresim-scenarios", 0);
  const auto replayed = doc("replay --json --repro " + repro, "restoresim-replay", 1);
  EXPECT_EQ(replayed["scenario"], "demo.abba_deadlock");
  EXPECT_EQ(replayed["outcome"], "deadlock");
  EXPECT_EQ(replayed["failure"]["kind"], "deadlock");
  EXPECT_TRUE(replayed["repro"]["reproduced"].get<bool>());
  EXPECT_EQ(replayed["trace_hash"], replayed["repro"]["expected_trace_hash"]);
  const auto passed = doc("replay demo.lost_update_fixed --seed 3 --json", "restoresim-replay", 0);
  EXPECT_EQ(passed["outcome"], "ok");
  EXPECT_TRUE(passed["repro"].is_null());
  EXPECT_TRUE(passed["failure"].is_null());
  doc("shrink " + repro + " --json --max-runs 20 --out " + dir_ + "/min.json",
      "restoresim-shrink", 0);
  std::ofstream(dir_ + "/a.properties") << "application.id=app\n";
  doc("config --json " + dir_ + "/a.properties", "restoresim-config", 0);
  doc("zoo --mutations create-before-close --sweeps 1 --seeds-max 1 --shrink-runs 1 "
      "--strategy random --json",
      "restoresim-zoo", 0);
  const Result both = RunCli("replay demo.lost_update --seed 1 --json --timeline -");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.out, HasSubstr("--json and --timeline - both write standard output"));
}

// `zoo --list`: one mutation name a line, one per `bug.*` program; the soak's error about an
// unknown mutation points to it.
TEST_F(CliTest, ZooListPrintsOneMutationNamePerLine) {
  const Result list = RunCli("zoo --list", /*stdout_only=*/true);
  ASSERT_EQ(list.exit_code, 0) << list.out;
  std::vector<std::string> names;
  std::istringstream lines(list.out);
  for (std::string line; std::getline(lines, line);) names.push_back(line);
  const auto programs =
      nlohmann::json::parse(RunCli("scenarios --json", /*stdout_only=*/true).out)["programs"];
  std::set<std::string> bugs;
  for (const auto& p : programs) {
    const std::string name = p["name"];
    if (name.starts_with("bug.")) bugs.insert(name);
  }
  EXPECT_EQ(names.size(), bugs.size());
  for (const std::string& name : names) {
    EXPECT_EQ(name.find_first_of(" \t"), std::string::npos) << name;
    std::string program = "bug." + name;
    std::replace(program.begin(), program.end(), '-', '_');
    EXPECT_TRUE(bugs.contains(program)) << name;
  }
  const Result soak = RunCli("soak --mutation no-such-mutation --duration 1s");
  EXPECT_EQ(soak.exit_code, 2);
  EXPECT_THAT(soak.out, HasSubstr("(restoresim zoo --list)"));
}

// The restore benchmark end to end over the fake broker, small: every restoration (both write
// paths, the bulk one forced by a low threshold; from scratch and from a checkpoint; repeated
// keys and tombstones) ends with the changelog's fold in its store, the ratios and the
// processing pair are reported, and the plot is written.
TEST_F(CliTest, RestoreBenchOverTheFakeBrokerChecksEveryStore) {
  const Result r = RunCli("bench restore --backend fake --records 20000 --key-space 8000 "
                          "--tombstones 0.05 --sizes 5000 --rounds 1 --bulk-min-records 4000 "
                          "--json --work-dir " + dir_ + "/work --svg " + dir_ + "/plot.svg");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["problems"].empty()) << j["problems"].dump();
  std::set<std::string> ids;
  for (const auto& c : j["cases"]) {
    ids.insert(c["id"].get<std::string>());
    ASSERT_EQ(c["rounds"].size(), 1u) << c["id"];
    const auto& round = c["rounds"][0];
    EXPECT_GT(round["records_per_second"].get<double>(), 0) << c["id"];
    if (c["id"].get<std::string>().starts_with("ours.") ||
        c["id"].get<std::string>().starts_with("limit.write") ||
        c["id"].get<std::string>().starts_with("limit.overlap")) {
      EXPECT_TRUE(round["contents_checked"].get<bool>()) << c["id"];
      EXPECT_TRUE(round["contents_ok"].get<bool>()) << c["id"] << ": " << round["note"];
    }
  }
  for (const char* id : {"limit.consume", "limit.write.writebatch", "limit.overlap.bulk",
                         "ours.scratch.default", "ours.scratch.writebatch",
                         "ours.checkpoint.default", "ours.size5000.default"}) {
    EXPECT_TRUE(ids.contains(id)) << id;
  }
  // The threshold sent the default path of the 20,000-record restoration through the bulk path.
  for (const auto& c : j["cases"]) {
    if (c["id"] == "ours.scratch.default") {
      EXPECT_THAT(c["rounds"][0]["note"].get<std::string>(), HasSubstr("bulk path"));
    }
  }
  EXPECT_FALSE(j["ratios"].empty());
  EXPECT_EQ(j["processing"]["rounds"].size(), 1u);
  EXPECT_GE(j["processing"]["rounds"][0]["first_processed_while_restoring_s"].get<double>(), 0);
  std::ifstream svg(dir_ + "/plot.svg");
  std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(text.starts_with("<svg")) << text.substr(0, 100);
  EXPECT_THAT(text, HasSubstr("</svg>"));
  // The run's own directory is removed after a good run; the one given is left.
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/work"));
}

// --guarantee exactly_once_v2 over the fake broker: the same records written transactionally
// (a commit marker every 250 records, a fifth of the transactions aborted, the last one too)
// are restored by ours on both paths under exactly_once_v2, every store ends with the fold of
// the committed records only, and the report compares them with the at-least-once run.
TEST_F(CliTest, RestoreBenchUnderExactlyOnceRestoresOnlyCommittedRecords) {
  const Result r = RunCli("bench restore --backend fake --guarantee exactly_once_v2 "
                          "--records 6000 --key-space 4000 --tombstones 0.05 --sizes 2000 "
                          "--rounds 1 --bulk-min-records 2000 --transaction-records 250 "
                          "--aborted-share 0.2 --json --svg '' --work-dir " + dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["problems"].empty()) << j["problems"].dump();
  // 24 committed transactions, 6 aborted (24 * 0.2 / 0.8), a marker after each.
  EXPECT_THAT(j["eos_changelog"].get<std::string>(),
              HasSubstr("6000 committed records in 24 transactions of up to 250, 6 aborted "
                        "transactions (1500 records, aborted share 0.2), 30 markers"));
  int eos_cases = 0;
  for (const auto& c : j["cases"]) {
    if (!c["id"].get<std::string>().starts_with("ours.eos.")) continue;
    ++eos_cases;
    const auto& round = c["rounds"][0];
    EXPECT_TRUE(round["contents_checked"].get<bool>()) << c["id"];
    EXPECT_TRUE(round["contents_ok"].get<bool>()) << c["id"] << ": " << round["note"];
    EXPECT_EQ(round["records"], 6000) << c["id"] << ": committed records only";
  }
  EXPECT_EQ(eos_cases, 2);
  std::set<std::string> ratios;
  for (const auto& ratio : j["ratios"]) ratios.insert(ratio["name"].get<std::string>());
  EXPECT_TRUE(ratios.contains("exactly_once_v2 / at-least-once, ours, standard path"));
}

// A broker that cannot start: a clear message, a non-zero exit, and no crash. The benchmark
// finds tools/kafka/broker under RESTORESIM_SOURCE_ROOT; here one that always fails.
TEST_F(CliTest, RestoreBenchSaysSoWhenItsBrokerCannotStart) {
  std::filesystem::create_directories(dir_ + "/src/tools/kafka");
  const std::string script = dir_ + "/src/tools/kafka/broker";
  std::ofstream(script) << "#!/bin/sh\necho 'broker: no java here' >&2\nexit 1\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  setenv("RESTORESIM_SOURCE_ROOT", (dir_ + "/src").c_str(), 1);
  setenv("RESTORESIM_BUILD_ROOT", (dir_ + "/build").c_str(), 1);
  const Result r =
      RunCli("bench restore --backend kafka --records 1000 --rounds 1 --work-dir " + dir_);
  unsetenv("RESTORESIM_SOURCE_ROOT");
  unsetenv("RESTORESIM_BUILD_ROOT");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("tools/kafka/broker start failed"));
}

// Issue 5's "done when": a deliberately broken ordering of the real runtime (the restore thread
// applies a round's CREATE before its CLOSE) is caught by the oracle in a sweep, replayed from
// its repro with a timeline, shrunk to a smaller failing repro of the same invariant, and the
// shrunk repro replays with its own timeline.
TEST_F(CliTest, BrokenOrderingIsCaughtReplayedShrunkAndDrawn) {
  const Result sweep = RunCli("explore --scenario bug.create_before_close --seeds 300 --json "
                              "--repros-max 1 --repro-dir " + dir_);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out;  // a planted bug, found: as expected
  const auto j = nlohmann::json::parse(sweep.out);
  ASSERT_GT(j["failures"].size(), 0u) << sweep.out;
  const auto& failure = j["failures"][0];
  EXPECT_THAT(failure.dump(), HasSubstr("[invariant:registration]"));
  const std::string repro = failure["repro"];

  const Result replay = RunCli("replay --repro " + repro + " --timeline " + dir_ + "/t.json");
  EXPECT_EQ(replay.exit_code, 1) << replay.out;
  EXPECT_THAT(replay.out, HasSubstr(": reproduced"));
  const auto trace = nlohmann::json::parse(std::ifstream(dir_ + "/t.json"));
  bool failure_event = false, task_marks = false, restore_counter = false;
  for (const auto& e : trace["traceEvents"]) {
    const std::string name = e.value("name", "");
    failure_event |= name.starts_with("FAILURE");
    task_marks |= e.value("cat", "") == "task";
    restore_counter |= e.value("ph", "") == "C" && name.starts_with("restore_remaining");
  }
  EXPECT_TRUE(failure_event);
  EXPECT_TRUE(task_marks) << "task lifecycle on the timeline";
  EXPECT_TRUE(restore_counter) << "restore progress on the timeline";

  const std::string shrunk = dir_ + "/min.json";
  const Result shrink = RunCli("shrink " + repro + " --json --max-runs 400 --out " + shrunk);
  ASSERT_EQ(shrink.exit_code, 0) << shrink.out;
  const auto s = nlohmann::json::parse(shrink.out);
  EXPECT_THAT(s["signature"].get<std::string>(), HasSubstr("invariant:registration"));
  // Preemptions come first in what "smaller" means; steps may grow a little when a data
  // event goes (the shrinker's order: preemptions, data events and sums, then steps).
  EXPECT_LE(s["after"]["preemptions"], s["before"]["preemptions"]);
  EXPECT_GT(s["runs"].get<uint64_t>(), 0u);

  const Result again = RunCli("replay --repro " + shrunk + " --timeline " + dir_ + "/min.trace");
  EXPECT_EQ(again.exit_code, 1) << again.out;
  EXPECT_THAT(again.out, HasSubstr("[invariant:registration]"));
  EXPECT_THAT(again.out, HasSubstr(": reproduced"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/min.trace"));
}

// A real Kafka Streams properties file loads: the settings taken are printed under Kafka's
// names, every ignored key is a warning; a bad value of a known key fails naming it.
// Issue 25: values above 2^64-1 were saturated to it (`--seed 99999999999999999999999999`
// replayed another seed; `bench --seeds` of 2^64 ran for ever).
TEST_F(CliTest, NumbersAbove64BitsAreOutOfRangeNotSaturated) {
  const std::pair<std::string, std::string> cases[] = {
      {"replay demo.lost_update --seed 99999999999999999999999999",
       "'99999999999999999999999999' (for --seed): out of range"},
      {"explore --seeds=18446744073709551616", "out of range (at most 18446744073709551615)"},
      {"bench sim --seeds 000018446744073709551616", "out of range"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.out;
    EXPECT_THAT(r.out, HasSubstr(message)) << args;
  }
  const Result max = RunCli("replay demo.lost_update --seed 18446744073709551615");
  EXPECT_THAT(max.out, ::testing::Not(HasSubstr("out of range"))) << "2^64-1 itself is a seed";
}

// Issue 25: a report written to a full device exited 0. Every command checks its output.
TEST_F(CliTest, OutputThatCannotBeWrittenIsAnError) {
  for (const std::string command :
       {"scenarios", "explore --scenario demo.lost_update --seeds 3 --json --repro-dir ''",
        "replay demo.lost_update --seed 0"}) {
    const Result r = restoresim::tools::testing::RunShell(Bin() + " " + command +
                                                          " 2>&1 >/dev/full");
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.out;
    EXPECT_THAT(r.out, HasSubstr("cannot write standard output")) << command;
  }
}

// Issue 25: `config` on a FIFO waited for a writer for ever.
// Issue 25: --repro-dir naming a regular file was found out only after the sweep.
TEST_F(CliTest, ARegularFileAsTheReproDirectoryIsRefusedBeforeTheWork) {
  const std::string file = dir_ + "/repros";
  std::ofstream(file) << "x";
  const Result r = RunCli("explore --scenario demo.lost_update --seeds 3 --quiet --repro-dir " +
                          file);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--repro-dir " + file + ": not a directory"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("runs,"))) << "refused before any run";
}

TEST_F(CliTest, ConfigRefusesAFifoAtOnce) {
  const std::string fifo = dir_ + "/streams.properties";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const Result r = RunCli("config " + fifo);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("not a regular file (a FIFO)"));
}

TEST_F(CliTest, ConfigLoadsAKafkaStreamsPropertiesFileAndWarnsAboutWhatItIgnores) {
  const std::string good = dir_ + "/streams.properties";
  std::ofstream(good) << "# word count\n"
                         "application.id=word-counts\n"
                         "bootstrap.servers=localhost:9092\n"
                         "restoresim.input.topic=words\n"
                         "default.key.serde="
                         "org.apache.kafka.common.serialization.Serdes$StringSerde\n"
                         "commit.interval.ms=1000\n"
                         "no.such.thing=1\n";
  const Result out = RunCli("config " + good, /*stdout_only=*/true);
  ASSERT_EQ(out.exit_code, 0) << out.out;
  EXPECT_THAT(out.out, HasSubstr("application.id=word-counts\n"));
  EXPECT_THAT(out.out, HasSubstr("commit.interval.ms=1000\n"));
  EXPECT_THAT(out.out, HasSubstr("task.timeout.ms=300000\n")) << "defaults shown too";
  const Result all = RunCli("config " + good);
  EXPECT_THAT(all.out,
              HasSubstr("warning: setting 'bootstrap.servers' is for Kafka Streams' clients"));
  EXPECT_THAT(all.out, HasSubstr("warning: setting 'default.key.serde' is Kafka Streams'"));
  EXPECT_THAT(all.out,
              HasSubstr("warning: setting 'no.such.thing' was supplied but isn't a known"));
  const Result json = RunCli("config --json " + good, /*stdout_only=*/true);
  ASSERT_EQ(json.exit_code, 0);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["settings"]["restoresim.input.topic"], "words");
  EXPECT_EQ(j["warnings"].size(), 3u);

  const std::string bad = dir_ + "/bad.properties";
  std::ofstream(bad) << "application.id=a\nrestoresim.input.topic=t\nnum.stream.threads=lots\n";
  const Result refused = RunCli("config " + bad);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.out, HasSubstr("num.stream.threads: expected an integer, got 'lots'"));
  std::ofstream(bad) << "application.id=\\u00zz\n";
  EXPECT_THAT(RunCli("config " + bad).out, HasSubstr("line 1: malformed \\uxxxx escape"));
}

// Issue 24: the text output's lines run as printed, from the folder the sweep ran in.
namespace {

// The text after `prefix` on the first line of `out` that holds it ("" when none).
std::string LineAfter(const std::string& out, const std::string& prefix) {
  const size_t at = out.find(prefix);
  if (at == std::string::npos) return "";
  const size_t begin = at + prefix.size();
  return out.substr(begin, out.find('\n', begin) - begin);
}

// A correct program failing on purpose: a step budget too small for it (an unexpected
// failure, "livelock").
constexpr const char* kUnexpected =
    "explore --scenario demo.lost_update_fixed --seeds 2 --steps-max 3 --jobs 1";

}  // namespace

TEST_F(CliTest, TextReplayLineRunsAsPrintedAndNextStepsFollowTheFirstUnexpectedFailure) {
  const std::string in_dir = "cd " + dir_ + " && ";
  const Result r = restoresim::tools::testing::RunShell(in_dir + Bin() + " " + kUnexpected +
                                                        " 2>&1");
  ASSERT_EQ(r.exit_code, 1) << r.out;
  // The binary as invoked (here its absolute path), not a bare `restoresim` PATH may not have.
  const std::string replay = LineAfter(r.out, "  replay: ");
  ASSERT_EQ(replay.rfind(Bin() + " replay demo.lost_update_fixed --seed 0", 0), 0u) << r.out;
  const Result replayed = restoresim::tools::testing::RunShell(in_dir + replay + " 2>&1");
  EXPECT_EQ(replayed.exit_code, 1) << replayed.out;  // the failure again
  EXPECT_THAT(replayed.out, HasSubstr("outcome: "));
  // Under the first unexpected failure only: its shrink and timeline lines, which run too.
  const std::string shrink = LineAfter(r.out, "  next:   ");
  ASSERT_EQ(shrink.rfind(Bin() + " shrink restoresim-repros/demo.lost_update_fixed-seed0", 0),
            0u) << r.out;
  EXPECT_EQ(r.out.find("  next:   ", r.out.find("  next:   ") + 1), std::string::npos) << r.out;
  // The line under `next:` (its indentation is also the table's padding).
  std::string timeline = LineAfter(r.out.substr(r.out.find("  next:   ")), "\n          ");
  timeline = timeline.substr(0, timeline.find("   #"));
  ASSERT_THAT(timeline, HasSubstr(" --timeline demo.lost_update_fixed-seed0.trace.json"));
  const Result opened = restoresim::tools::testing::RunShell(in_dir + timeline + " 2>&1");
  EXPECT_EQ(opened.exit_code, 1) << opened.out;
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/demo.lost_update_fixed-seed0.trace.json"));
  const Result shrunk = restoresim::tools::testing::RunShell(in_dir + shrink + " 2>&1");
  EXPECT_THAT(shrunk.out, HasSubstr("wrote restoresim-repros/demo.lost_update_fixed-seed0"))
      << shrunk.out;
  // The JSON keeps the machine-independent form.
  const Result j = restoresim::tools::testing::RunShell(in_dir + Bin() + " " + kUnexpected +
                                                        " --json 2>/dev/null");
  const auto report = nlohmann::json::parse(j.out);
  EXPECT_EQ(report["failures"][0]["replay"].get<std::string>().rfind("restoresim replay ", 0),
            0u);
}

TEST_F(CliTest, APlantedBugNotFoundWithinTheSeedsGivenIsSaidAndIsNotAFailure) {
  // demo.order_violation_d3 needs hundreds of pct:3 seeds; 3 do not find it.
  const Result r = RunCli("explore --scenario 'demo.order_violation_d3' --seeds 3 --jobs 1 "
                          "--repro-dir ''", /*stdout_only=*/true);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("not found"));
  EXPECT_THAT(r.out, HasSubstr("demo.order_violation_d3: not found within 3 seeds"));
  EXPECT_THAT(r.out, HasSubstr("verdict: every scenario behaved as expected"));
  EXPECT_THAT(r.out, HasSubstr(" runs/s "));
  const Result j = RunCli("explore --scenario 'demo.order_violation_d3' --seeds 3 --jobs 1 "
                          "--repro-dir '' --json", /*stdout_only=*/true);
  EXPECT_EQ(j.exit_code, 0);
  const auto report = nlohmann::json::parse(j.out);
  EXPECT_EQ(report["scenarios"][0]["verdict"], "not found");
  EXPECT_EQ(report["ok"], true);
}

// Issue 24: a production application's 30-key Kafka Streams properties file loads with
// warnings only; max.poll.records follows Kafka's precedence per consumer.
TEST_F(CliTest, AProductionKafkaStreamsPropertiesFileLoadsWithWarningsOnly) {
  const char* root = std::getenv("RESTORESIM_TESTDATA_ROOT");
  ASSERT_NE(root, nullptr) << "set by meson";
  const std::string file =
      std::string(root) + "/core/runtime/testdata/kafka-streams-production.properties";
  const Result r = RunCli("config --json " + file, /*stdout_only=*/true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["settings"]["application.id"], "orders-enrichment");
  EXPECT_EQ(j["settings"]["restoresim.input.topic"], "input") << "restoresim's default";
  EXPECT_EQ(j["settings"]["num.stream.threads"], "4");
  EXPECT_EQ(j["settings"]["processing.guarantee"], "exactly_once_v2");
  EXPECT_EQ(j["settings"]["main.consumer.max.poll.records"], "1000") << "consumer. over bare";
  EXPECT_EQ(j["settings"]["restore.consumer.max.poll.records"], "2000") << "its own prefix";
  for (const auto& w : j["warnings"]) {
    const std::string warning = w.get<std::string>();
    EXPECT_THAT(warning, ::testing::AnyOf(HasSubstr("is Kafka Streams' but not modelled"),
                                          HasSubstr("is for Kafka Streams' clients")))
        << "no key of a real file is unknown: " << warning;
  }
  // Each key of the file is either read or named by exactly one warning.
  std::ifstream in(file);
  size_t keys = 0, read_keys = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::string key = line.substr(0, line.find('='));
    ++keys;
    size_t naming = 0;
    for (const auto& w : j["warnings"]) {
      naming += w.get<std::string>().find("'" + key + "'") != std::string::npos;
    }
    // The consumers' max.poll.records is resolved from these (shown as main.consumer.*).
    const bool read = j["settings"].contains(key) || key == "max.poll.records" ||
                      key == "consumer.max.poll.records";
    EXPECT_EQ(naming + (read ? 1 : 0), 1u) << key;
    read_keys += read;
  }
  EXPECT_GE(keys, 30u);
  EXPECT_EQ(j["warnings"].size() + read_keys, keys) << "no warning about a key the file lacks";
  // Without application.id the error names the key.
  const std::string bad = dir_ + "/no-id.properties";
  std::ofstream(bad) << "bootstrap.servers=localhost:9092\n";
  const Result refused = RunCli("config " + bad);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.out, HasSubstr("application.id: missing"));
}

// Issue 25: a --steps-max above what a repro file holds (one choice a step, 2^26 choices) is
// refused before any run, not found out when the first failure could not be saved after the
// sweep; the largest that fits is accepted.
TEST_F(CliTest, StepsMaxAboveWhatAReproHoldsIsRefusedBeforeAnyRun) {
  for (const std::string command :
       {"explore --scenario 'bug.*' --seeds 100 --jobs 1 --repro-dir " + dir_,
        std::string("replay demo.abba_deadlock --seed 2"), std::string("bench sim --seeds 1")}) {
    const Result r = RunCli(command + " --steps-max 67108865");
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("--steps-max 67108865 is above 67108864: a repro file holds at "
                                 "most 67108864 choices"))
        << command;
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("scenario="))) << "no header: nothing ran";
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir_)) << "nothing run, nothing saved";
  const Result fits = RunCli("replay demo.abba_deadlock --seed 2 --steps-max 67108864");
  EXPECT_NE(fits.exit_code, 2) << fits.out;
}

// Issue 25: a repro file above the documented maximum (256 MiB) is refused before it is read,
// with its size and the limit (a 210 MB file once took 1.66 GB to read).
TEST_F(CliTest, AReproFileAboveTheMaximumIsRefusedBeforeItIsRead) {
  const std::string huge = dir_ + "/huge.json";
  std::ofstream(huge).close();
  ASSERT_EQ(truncate(huge.c_str(), (off_t{256} << 20) + 1), 0);  // sparse: no disk used
  for (const std::string command : {"replay --repro " + huge, "shrink " + huge}) {
    const Result r = RunCli(command);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("huge.json is 268435457 bytes (at most 268435456)")) << command;
  }
}

namespace {

// Issue 20: every command that runs work goes through one skeleton (command_run.h): options
// refused before any work, on standard error as "restoresim COMMAND: reason", exit 2, nothing
// on standard output and nothing written.
TEST_F(CliTest, EveryCommandRefusesBadOptionsTheSameWayBeforeAnyWork) {
  const std::string missing = dir_ + "/missing.json";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"explore", "explore --scenario 'demo.*' --seeds 3 --repro-dir " + dir_ + " --shard 3/2"},
      {"replay", "replay demo.abba_deadlock --seed 2 --ignore-schedule"},
      {"shrink", "shrink " + missing},
      {"merge", "merge --json-out " + dir_ + "/no/such/dir/m.json " + missing},
      {"bench sim", "bench sim --seeds 0"},
      {"bench restore", "bench restore --backend fake --records 0"},
      {"soak", "soak --duration 0s"}};
  for (const auto& [name, args] : cases) {
    const Result out = RunCli(args, /*stdout_only=*/true);
    EXPECT_EQ(out.exit_code, 2) << args;
    EXPECT_EQ(out.out, "") << args << ": nothing on standard output";
    const Result both = RunCli(args);
    EXPECT_TRUE(both.out.starts_with("restoresim " + name + ": ")) << args << "\n" << both.out;
    EXPECT_EQ(std::count(both.out.begin(), both.out.end(), '\n'), 1) << both.out;
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir_)) << "nothing run, nothing saved";
}

}  // namespace
