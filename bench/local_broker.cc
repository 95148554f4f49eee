#include "bench/local_broker.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "bench/project_paths.h"

namespace restoresim::bench {
namespace {

// The stop command, prepared before any signal can arrive (a handler may not allocate).
struct StopCommand {
  std::string script, build, cluster;
  const char* argv[9] = {};
};
StopCommand* g_stop = nullptr;

void RunStop() {
  if (g_stop == nullptr) return;
  const pid_t child = fork();
  if (child == 0) {
    execv("/bin/bash", const_cast<char* const*>(g_stop->argv));
    _exit(127);
  }
  if (child > 0) {
    int status = 0;
    waitpid(child, &status, 0);
  }
}

void OnSignal(int signal) {
  RunStop();
  _exit(128 + signal);
}

void InstallStop(const std::string& cluster) {
  g_stop = new StopCommand{SourceRoot() + "/tools/kafka/broker", BuildRoot(), cluster};
  g_stop->argv[0] = "/bin/bash";
  g_stop->argv[1] = g_stop->script.c_str();
  g_stop->argv[2] = "--build";
  g_stop->argv[3] = g_stop->build.c_str();
  g_stop->argv[4] = "--cluster";
  g_stop->argv[5] = g_stop->cluster.c_str();
  g_stop->argv[6] = "stop";
  g_stop->argv[7] = nullptr;
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &action, nullptr);
}

void UninstallStop() {
  for (int s : {SIGINT, SIGTERM, SIGHUP}) signal(s, SIG_DFL);
  delete g_stop;
  g_stop = nullptr;
}

std::string BrokerCommand(const std::string& cluster, const std::string& verb) {
  return fmt::format("{} --build {} --cluster {} {}",
                     ShellQuote(SourceRoot() + "/tools/kafka/broker"), ShellQuote(BuildRoot()),
                     ShellQuote(cluster), verb);
}

}  // namespace

absl::StatusOr<std::unique_ptr<LocalBroker>> LocalBroker::Start(const std::string& log_path) {
  const std::string cluster = fmt::format("bench-{}", getpid());
  InstallStop(cluster);  // before the start: an interrupt during it stops what it started
  std::string out;
  const int rc = RunCommand(BrokerCommand(cluster, "--brokers 1 start"), log_path, &out);
  std::unique_ptr<LocalBroker> broker(new LocalBroker(cluster));  // stops it when it goes
  if (rc != 0) {
    return absl::UnavailableError(fmt::format(
        "tools/kafka/broker start failed (exit {}); its messages are in {}", rc, log_path));
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  const size_t last_line = out.rfind('\n');
  broker->bootstrap_ = last_line == std::string::npos ? out : out.substr(last_line + 1);
  if (broker->bootstrap_.empty()) return absl::UnavailableError("the broker printed no address");
  return broker;
}

LocalBroker::LocalBroker(std::string cluster) : cluster_(std::move(cluster)) {}

LocalBroker::~LocalBroker() { Stop(); }

void LocalBroker::Stop() {
  if (stopped_) return;
  stopped_ = true;
  RunStop();
  UninstallStop();
  std::error_code error;
  std::filesystem::remove_all(BuildRoot() + "/kafka/" + cluster_, error);
}

}  // namespace restoresim::bench
