// A local Kafka cluster driven through tools/kafka/broker: the benchmark's single node, which it
// starts for itself when no --bootstrap-servers is given, and the soak's three nodes, whose
// nodes it kills and restarts.
//
// Start: a cluster under a name of its own (<prefix>-<pid>, so the test suite's clusters are
// left alone) in the build tree. It is stopped, and its directory removed, when the LocalBroker
// is destroyed, and also when the process is interrupted (SIGINT, SIGTERM, SIGHUP): the handler
// runs the stop command (fork and exec are async-signal-safe) and exits with 128 + the signal.
// Attach: a cluster the script already started (tools/test's "three"), left running at the end.
//
// Thread-safety: one started LocalBroker per process, created and destroyed on one thread;
// StopNode/StartNode from one thread at a time.
#ifndef RESTORESIM_BENCH_LOCAL_BROKER_H_
#define RESTORESIM_BENCH_LOCAL_BROKER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace restoresim::bench {

class LocalBroker {
 public:
  // Fetches the broker's jars (once, cached), starts the node and waits until it answers.
  // `log_path`: where the script's messages go.
  static absl::StatusOr<std::unique_ptr<LocalBroker>> Start(const std::string& log_path,
                                                            int brokers = 1,
                                                            const std::string& prefix = "bench");
  // A running cluster of the script (its --cluster name); UNAVAILABLE when it is not running.
  static absl::StatusOr<std::unique_ptr<LocalBroker>> Attach(const std::string& cluster,
                                                             const std::string& log_path);
  ~LocalBroker();
  LocalBroker(const LocalBroker&) = delete;
  LocalBroker& operator=(const LocalBroker&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  const std::string& cluster() const { return cluster_; }
  int brokers() const { return brokers_; }

  // Stops node `node` (1-based): TERM (a clean shutdown) or, with kill, SIGKILL.
  absl::Status StopNode(int node, bool kill);
  // Starts it again; returns once every node answers.
  absl::Status StartNode(int node);

 private:
  LocalBroker(std::string cluster, std::string log_path, bool owned);
  void Stop();
  absl::Status Run(const std::string& verb, std::string* out = nullptr);

  const std::string cluster_;
  const std::string log_path_;
  const bool owned_;  // started here: stopped and removed at the end
  std::string bootstrap_;
  int brokers_ = 1;
  bool stopped_ = false;
};

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_LOCAL_BROKER_H_
