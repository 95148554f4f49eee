#include "kafka/kafka_env.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>

namespace restoresim::kafka_test {

absl::StatusOr<std::string> Bootstrap(const char* env_var) {
  const char* value = std::getenv(env_var);
  if (value != nullptr && *value != '\0') return std::string(value);
  return absl::FailedPreconditionError(fmt::format(
      "{} is not set: the kafka suite runs against a local cluster. Run tools/test (it starts "
      "one), or start one with tools/kafka/broker start (and --cluster three --brokers 3 start "
      "for {}) and export {}=$(tools/kafka/broker bootstrap)",
      env_var, kBootstrap3Env, env_var));
}

std::string UniqueName(std::string_view base) {
  static const std::string run = fmt::format(
      "{}-{}", getpid(),
      std::chrono::duration_cast<std::chrono::seconds>(
          std::chrono::system_clock::now().time_since_epoch()).count() % 1'000'000);
  static std::atomic<int> next{0};
  return fmt::format("{}-{}-{}", base, run, next.fetch_add(1));
}

absl::Status KafkaCluster::RunScript(const std::string& args) {
  const char* tool = std::getenv("RESTORESIM_KAFKA_BROKER_TOOL");
  const char* build = std::getenv("RESTORESIM_KAFKA_BUILD_DIR");
  if (tool == nullptr || build == nullptr) {
    return absl::FailedPreconditionError(
        "RESTORESIM_KAFKA_BROKER_TOOL / RESTORESIM_KAFKA_BUILD_DIR not set (meson test sets "
        "them for the kafka suite)");
  }
  const std::string command =
      fmt::format("'{}' --build '{}' --cluster '{}' {} >&2", tool, build, name_, args);
  const int rc = std::system(command.c_str());
  if (rc != 0) return absl::InternalError(fmt::format("`{}` exited with {}", command, rc));
  return absl::OkStatus();
}

absl::Status KafkaCluster::StopNode(int node, bool kill) {
  return RunScript(fmt::format("stop-node {}{}", node, kill ? " --kill" : ""));
}

absl::Status KafkaCluster::StartNode(int node) {
  return RunScript(fmt::format("start-node {}", node));
}

}  // namespace restoresim::kafka_test
