// What the `kafka` test suite needs from its surroundings: the bootstrap address of the local
// cluster that tools/test started (tools/kafka/broker), names no earlier run used, and control
// of the cluster's nodes (stop, kill, restart) for the failure tests.
//
// The suite never skips: a missing address or a cluster that does not answer fails the test
// with a message saying how to start one.
//
// Thread-safety: the functions may be called from any thread; a KafkaCluster from one.
#ifndef RESTORESIM_KAFKA_KAFKA_ENV_H_
#define RESTORESIM_KAFKA_KAFKA_ENV_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace restoresim::kafka_test {

// The single-node cluster ("single") and the 3-node cluster ("three") of tools/test.
inline constexpr const char* kBootstrapEnv = "RESTORESIM_KAFKA_BOOTSTRAP";
inline constexpr const char* kBootstrap3Env = "RESTORESIM_KAFKA_BOOTSTRAP3";

// The address in `env_var`, or an error that says how to get one.
absl::StatusOr<std::string> Bootstrap(const char* env_var);

// "<base>-<run>-<n>": unique in this process and across runs (the run part is the pid and the
// start time), valid as a Kafka topic or group name.
std::string UniqueName(std::string_view base);

// One cluster started by tools/kafka/broker, driven through that script.
class KafkaCluster {
 public:
  // `name`: the script's --cluster (tools/test starts "single" and "three").
  explicit KafkaCluster(std::string name) : name_(std::move(name)) {}

  // Stops node `node` (1-based): TERM (a clean shutdown) or, with kill, SIGKILL.
  absl::Status StopNode(int node, bool kill);
  // Starts it again; returns once it answers metadata requests.
  absl::Status StartNode(int node);

 private:
  absl::Status RunScript(const std::string& args);

  const std::string name_;
};

}  // namespace restoresim::kafka_test

#endif  // RESTORESIM_KAFKA_KAFKA_ENV_H_
