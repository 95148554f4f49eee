// A single-node Kafka cluster the benchmark starts for itself when no --bootstrap-servers is
// given: tools/kafka/broker under a cluster name of its own (bench-<pid>, so the test suite's
// clusters are left alone) in the build tree. It is stopped, and its directory removed, when
// the LocalBroker is destroyed, and also when the process is interrupted (SIGINT, SIGTERM,
// SIGHUP): the handler runs the stop command (fork and exec are async-signal-safe) and exits
// with 128 + the signal.
//
// Thread-safety: one LocalBroker per process, created and destroyed on one thread.
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
  static absl::StatusOr<std::unique_ptr<LocalBroker>> Start(const std::string& log_path);
  ~LocalBroker();
  LocalBroker(const LocalBroker&) = delete;
  LocalBroker& operator=(const LocalBroker&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  const std::string& cluster() const { return cluster_; }

 private:
  explicit LocalBroker(std::string cluster);
  void Stop();

  const std::string cluster_;
  std::string bootstrap_;
  bool stopped_ = false;
};

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_LOCAL_BROKER_H_
