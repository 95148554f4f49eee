// The restoresim binary when it is stopped or starved: SIGINT and SIGTERM during a sweep stop it
// within a run, with the summary so far, every failure's replay line and repro file, no
// temporary files left, and exit 130; a worker thread that cannot start is a clear error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

std::string Bin() {
  const char* bin = std::getenv("RESTORESIM_BIN");
  return bin != nullptr ? bin : "build/tools/restoresim";
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CliInterruptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/restoresim_cli_interrupt_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `restoresim explore ARGS` with output to a file, sends `signal_number` once it has
  // swept for a while, and waits for it; returns the exit code (-1: killed or hung).
  int ExploreAndSignal(const std::string& args, int signal_number, double& seconds_to_stop) {
    // Until the header is printed (the binary is running its sweep; --json prints none: a
    // second), then a little longer.
    const bool json = args.find("--json") != std::string::npos;
    return RunAndSignal("explore " + args, json ? "" : "restoresim explore:", 1.5, signal_number,
                        seconds_to_stop);
  }

  // Runs `restoresim ARGS` with its output to a file; once `ready` appears in the output (at
  // most 60 s; "": at once), waits `delay_s` more, sends `signal_number`, and waits for the
  // process. Returns its exit code (-1: ended by a signal, or still running 120 s later).
  int RunAndSignal(const std::string& args, const std::string& ready, double delay_s,
                   int signal_number, double& seconds_to_stop) {
    const std::string out = dir_ + "/out.txt";
    const pid_t pid = fork();
    if (pid == 0) {
      const std::string command = "exec " + Bin() + " " + args + " >" + out + " 2>&1";
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (ReadAll(out).find(ready) == std::string::npos && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(delay_s));
    const auto signalled = Clock::now();
    kill(pid, signal_number);
    int status = 0;
    for (;;) {
      const pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid) break;
      if (Clock::now() - signalled > std::chrono::seconds(120)) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    seconds_to_stop = std::chrono::duration<double>(Clock::now() - signalled).count();
    output_ = ReadAll(out);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Runs `restoresim ARGS` to its end; its standard output and error.
  std::string Shell(const std::string& args) {
    const std::string out = dir_ + "/shell.txt";
    const int status = std::system((Bin() + " " + args + " >" + out + " 2>&1").c_str());
    (void)status;  // the callers check what was written
    return ReadAll(out);
  }

  // Files under dir_ whose name holds `part` (temporary files left behind, say).
  std::vector<std::string> FilesNamed(const std::string& part) {
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
      if (entry.path().filename().string().find(part) != std::string::npos) {
        found.push_back(entry.path().string());
      }
    }
    return found;
  }

  std::string dir_;
  std::string output_;
};

TEST_F(CliInterruptTest, SigintStopsTheSweepReportsAndSavesWhatItFound) {
  const std::string repros = dir_ + "/repros";
  double seconds = 0;
  // Planted bugs over far more seeds than the test waits for: failures are found, then Ctrl-C.
  const int code = ExploreAndSignal(
      "--scenario 'bug.*' --seeds 1000000 --strategy pct:3 --jobs 2 --repros-max 1 "
      "--repro-dir " + repros,
      SIGINT, seconds);
  ASSERT_EQ(code, 130) << output_;
  std::printf("stopped %.2f s after SIGINT (saving repros included)\n", seconds);
  EXPECT_THAT(output_, HasSubstr("interrupted by SIGINT after"));
  EXPECT_THAT(output_, HasSubstr("verdict: INTERRUPTED"));
  EXPECT_THAT(output_, HasSubstr("scenario "));  // the summary table
  EXPECT_THAT(output_, HasSubstr("found at seed"));
  EXPECT_THAT(output_, HasSubstr("restoresim replay bug."));
  size_t saved = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << "left behind: " << entry.path();
    if (entry.path().extension() == ".json") ++saved;
  }
  EXPECT_GT(saved, 0u) << "the failures found before the signal are saved as repros";
}

TEST_F(CliInterruptTest, SigtermInJsonModeGivesAValidPartialReport) {
  double seconds = 0;
  const int code = ExploreAndSignal(
      "--scenario 'demo.*' --seeds 100000000 --jobs 2 --json --repro-dir ''", SIGTERM, seconds);
  ASSERT_EQ(code, 130) << output_;
  EXPECT_THAT(output_, HasSubstr("\"interrupted\": \"interrupted by SIGTERM after"));
  EXPECT_THAT(output_, HasSubstr("\"runs\""));
}

TEST_F(CliInterruptTest, AWorkerThreadThatCannotStartIsAClearError) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizers reserve more address space than the limit below allows";
#endif
  // 256 threads of 8 MiB stacks do not fit in 600 MB of address space.
  const std::string command = "ulimit -v 600000; ulimit -s 8192; exec " + Bin() +
                              " explore --scenario 'demo.*' --seeds 200 --jobs 256 "
                              "--repro-dir '' --quiet >" + dir_ + "/out.txt 2>&1";
  const int status = std::system(("sh -c '" + command + "'").c_str());
  const std::string out = ReadAll(dir_ + "/out.txt");
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 2) << out;
  EXPECT_THAT(out, HasSubstr("could not start worker thread"));
  EXPECT_THAT(out, HasSubstr("try fewer --jobs"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("terminate called")));
}

// Issue 25: shrink stops within a batch of candidate runs, writes the smallest failing run it
// has found so far (it replays), says it was interrupted, and exits 130.
TEST_F(CliInterruptTest, SigintStopsShrinkAndWritesTheBestReproSoFar) {
  // A run that never ends: every condition-variable wait wakes spuriously, so the scenario
  // spins until its step budget (3,000,000 steps): a schedule of millions of choices, whose
  // shrinking takes minutes.
  const std::string repros = dir_ + "/repros";
  const std::string found =
      Shell("explore --scenario scenario.clone_restore --seeds 1 --spurious-per-mille 1000 "
            "--repros-max 1 --jobs 1 --quiet --repro-dir " + repros);
  const std::string repro = repros + "/scenario.clone_restore-seed0.json";
  ASSERT_TRUE(std::filesystem::exists(repro)) << found;
  const std::string out = dir_ + "/small.json";
  double seconds = 0;
  const int code = RunAndSignal("shrink " + repro + " --jobs 2 --max-runs 1000000 --out " + out,
                                "restoresim shrink:", 1.5, SIGINT, seconds);
  ASSERT_EQ(code, 130) << output_;
  std::printf("shrink stopped %.2f s after SIGINT\n", seconds);
  EXPECT_LT(seconds, 30) << output_;
  EXPECT_THAT(output_, HasSubstr("interrupted by SIGINT after"));
  EXPECT_THAT(output_, HasSubstr("more runs may shrink further"));
  EXPECT_TRUE(FilesNamed(".tmp").empty());
  // What was written is a whole repro of the same failure.
  const std::string replay = Shell("replay --repro " + out);
  EXPECT_THAT(replay, HasSubstr(": reproduced")) << replay;
}

// Issue 25: the zoo stops within a seed, prints the mutations decided so far and exits 130.
TEST_F(CliInterruptTest, SigtermStopsTheZooWithTheMutationsDecidedSoFar) {
  double seconds = 0;
  const int code = RunAndSignal(
      "zoo --strategy pct:3 --sweeps 1000 --seeds-max 20000 --budget-s 60 --jobs 2 --quiet",
      "restoresim zoo:", 2.0, SIGTERM, seconds);
  ASSERT_EQ(code, 130) << output_;
  std::printf("zoo stopped %.2f s after SIGTERM\n", seconds);
  EXPECT_LT(seconds, 30) << output_;
  EXPECT_THAT(output_, ::testing::ContainsRegex("interrupted by SIGTERM after [0-9]+ of [0-9]+ "
                                                "mutations"));
  EXPECT_THAT(output_, HasSubstr("caught by"));  // the table of those decided
  EXPECT_THAT(output_, HasSubstr("verdict: INTERRUPTED"));
}

// Issue 25: merge stops between shards and writes no report (no temporary file either).
TEST_F(CliInterruptTest, SigintStopsMergeWithoutWritingAReport) {
  // Eight shards, each padded with an array the reader skips over but must parse, so that
  // the merge takes seconds.
  std::string shards;
  for (int i = 0; i < 8; ++i) {
    const std::string path = dir_ + "/shard" + std::to_string(i) + ".json";
    const std::string report = Shell("explore --scenario 'demo.*' --seeds 80 --jobs 1 --shard " +
                                     std::to_string(i) + "/8 --repro-dir '' --json");
    ASSERT_EQ(report.rfind("{", 0), 0u) << report;
    std::ofstream file(path);
    file << report.substr(0, report.rfind('}')) << ", \"padding\": [0";
    std::string chunk;
    for (int k = 0; k < (1 << 20); ++k) chunk += ",0";
    for (int m = 0; m < 8; ++m) file << chunk;  // 8 Mi elements, 16 MB
    file << "]}\n";
    shards += " " + path;
  }
  const std::string merged = dir_ + "/merged.json";
  double seconds = 0;
  const int code = RunAndSignal("merge" + shards + " --json-out " + merged, "", 0.5, SIGINT,
                                seconds);
  ASSERT_EQ(code, 130) << output_;
  std::printf("merge stopped %.2f s after SIGINT\n", seconds);
  EXPECT_THAT(output_, HasSubstr("interrupted by SIGINT after reading"));
  EXPECT_THAT(output_, HasSubstr("no report written"));
  EXPECT_FALSE(std::filesystem::exists(merged));
  EXPECT_TRUE(FilesNamed(".tmp").empty());
}

// Issue 25: bench sim (the scenarios' seeds per second) reports the rounds done and exits 130.
TEST_F(CliInterruptTest, SigintStopsBenchWithTheRoundsDoneSoFar) {
  double seconds = 0;
  const int code =
      RunAndSignal("bench sim --scenario 'demo.*' --seeds 200 --rounds 100000 --jobs 2",
                   "restoresim bench sim:", 2.0, SIGINT, seconds);
  ASSERT_EQ(code, 130) << output_;
  std::printf("bench stopped %.2f s after SIGINT\n", seconds);
  EXPECT_LT(seconds, 30) << output_;
  EXPECT_THAT(output_, HasSubstr("seeds/s on"));  // the table
  EXPECT_THAT(output_, HasSubstr("interrupted by SIGINT: the rows above are of the rounds"));
}

// Issue 25: the restore benchmark over the fake broker stops between cases, reports its whole
// rounds, removes its work directory, and exits 130.
TEST_F(CliInterruptTest, SigtermStopsTheRestoreBenchAndRemovesItsWorkDirectory) {
  const std::string work = dir_ + "/work";
  std::filesystem::create_directories(work);
  double seconds = 0;
  const int code = RunAndSignal("bench restore --backend fake --records 20000 "
                                "--process-records 2000 --rounds 30 --svg '' --work-dir " + work,
                                "restoresim bench restore: backend", 3.0, SIGTERM, seconds);
  ASSERT_EQ(code, 130) << output_;
  std::printf("restore bench stopped %.2f s after SIGTERM\n", seconds);
  EXPECT_LT(seconds, 30) << output_;
  EXPECT_THAT(output_, HasSubstr("interrupted: reporting the"));
  EXPECT_TRUE(std::filesystem::is_empty(work))
      << "left behind: " << std::filesystem::directory_iterator(work)->path();
}

// Issue 25: shrink and the zoo start their workers as explore does: a thread that cannot
// start is a clear error and exit 2, not "terminate called".
TEST_F(CliInterruptTest, ShrinkAndZooReportAWorkerThreadThatCannotStart) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizers reserve more address space than the limit below allows";
#endif
  const std::string repros = dir_ + "/repros";
  Shell("explore --scenario demo.order_violation_d3 --seeds 1000 --repros-max 1 --jobs 1 "
        "--json --repro-dir " + repros);
  std::string repro;
  for (const auto& entry : std::filesystem::directory_iterator(repros)) {
    repro = entry.path().string();
  }
  ASSERT_FALSE(repro.empty());
  for (const std::string& args :
       {"shrink " + repro + " --jobs 256 --out " + dir_ + "/min.json",
        std::string("zoo --strategy pct:3 --sweeps 1 --seeds-max 10 --jobs 256 --quiet")}) {
    // 256 threads of 8 MiB stacks do not fit in 600 MB of address space.
    const std::string command = "ulimit -v 600000; ulimit -s 8192; exec " + Bin() + " " + args +
                                " >" + dir_ + "/out.txt 2>&1";
    const int status = std::system(("sh -c '" + command + "'").c_str());
    const std::string out = ReadAll(dir_ + "/out.txt");
    ASSERT_TRUE(WIFEXITED(status)) << args << "\n" << out;
    EXPECT_EQ(WEXITSTATUS(status), 2) << args << "\n" << out;
    EXPECT_THAT(out, HasSubstr("could not start worker thread")) << args;
    EXPECT_THAT(out, HasSubstr("try fewer --jobs")) << args;
    EXPECT_THAT(out, ::testing::Not(HasSubstr("terminate called"))) << args;
  }
}

}  // namespace
