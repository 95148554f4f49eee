#include "bench/local_broker.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "bench/project_paths.h"
#include "core/util/check.h"

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
  KillRunningCommand();  // the Kafka Streams peer, if one runs: not left behind on a dead broker
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

// The last line of what the script printed: the bootstrap address.
std::string LastLine(std::string out) {
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  const size_t last_line = out.rfind('\n');
  return last_line == std::string::npos ? out : out.substr(last_line + 1);
}

int CountNodes(const std::string& bootstrap) {
  return static_cast<int>(std::count(bootstrap.begin(), bootstrap.end(), ',')) + 1;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LocalBroker>> LocalBroker::Start(const std::string& log_path,
                                                                int brokers,
                                                                const std::string& prefix) {
  RS_CHECK(brokers >= 1, "a cluster of {} brokers", brokers);
  const std::string cluster = fmt::format("{}-{}", prefix, getpid());
  InstallStop(cluster);  // before the start: an interrupt during it stops what it started
  std::string out;
  const int rc = RunCommand(BrokerCommand(cluster, fmt::format("--brokers {} start", brokers)),
                            log_path, &out);
  // Stops it when it goes.
  std::unique_ptr<LocalBroker> broker(new LocalBroker(cluster, log_path, /*owned=*/true));
  if (rc != 0) {
    return absl::UnavailableError(fmt::format(
        "tools/kafka/broker start failed (exit {}); its messages are in {}", rc, log_path));
  }
  broker->bootstrap_ = LastLine(out);
  if (broker->bootstrap_.empty()) return absl::UnavailableError("the broker printed no address");
  broker->brokers_ = brokers;
  return broker;
}

absl::StatusOr<std::unique_ptr<LocalBroker>> LocalBroker::Attach(const std::string& cluster,
                                                                 const std::string& log_path) {
  std::unique_ptr<LocalBroker> broker(new LocalBroker(cluster, log_path, /*owned=*/false));
  std::string out;
  if (absl::Status s = broker->Run("status", &out); !s.ok()) {
    return absl::UnavailableError(fmt::format(
        "cluster '{}' of tools/kafka/broker is not running ({})", cluster,
        std::string(s.message())));
  }
  broker->bootstrap_ = LastLine(out);
  if (broker->bootstrap_.empty()) return absl::UnavailableError("the cluster printed no address");
  broker->brokers_ = CountNodes(broker->bootstrap_);
  return broker;
}

LocalBroker::LocalBroker(std::string cluster, std::string log_path, bool owned)
    : cluster_(std::move(cluster)), log_path_(std::move(log_path)), owned_(owned) {}

LocalBroker::~LocalBroker() { Stop(); }

absl::Status LocalBroker::Run(const std::string& verb, std::string* out) {
  const int rc = RunCommand(BrokerCommand(cluster_, verb), log_path_, out);
  if (rc == 0) return absl::OkStatus();
  return absl::UnavailableError(fmt::format("tools/kafka/broker --cluster {} {}: exit {} (its "
                                            "messages are in {})", cluster_, verb, rc, log_path_));
}

absl::Status LocalBroker::StopNode(int node, bool kill) {
  RS_CHECK(node >= 1 && node <= brokers_, "node {} of {}", node, brokers_);
  return Run(fmt::format("stop-node {}{}", node, kill ? " --kill" : ""));
}

absl::Status LocalBroker::StartNode(int node) {
  RS_CHECK(node >= 1 && node <= brokers_, "node {} of {}", node, brokers_);
  return Run(fmt::format("start-node {}", node));
}

void LocalBroker::Stop() {
  if (stopped_ || !owned_) return;
  stopped_ = true;
  RunStop();
  UninstallStop();
  std::error_code error;
  std::filesystem::remove_all(BuildRoot() + "/kafka/" + cluster_, error);
}

}  // namespace restoresim::bench
