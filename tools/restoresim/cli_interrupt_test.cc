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
    const std::string out = dir_ + "/out.txt";
    const pid_t pid = fork();
    if (pid == 0) {
      const std::string command = "exec " + Bin() + " explore " + args + " >" + out + " 2>&1";
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Until the header is printed (the binary is running its sweep; --json prints none: a
    // second), then a little longer.
    const bool json = args.find("--json") != std::string::npos;
    const auto deadline = Clock::now() + std::chrono::seconds(json ? 1 : 60);
    while (ReadAll(out).find("restoresim explore:") == std::string::npos &&
           Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
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

}  // namespace
