// RuntimeConfig: the runtime's settings, named as Kafka Streams names them where a name
// exists, validated with messages that say which setting is wrong and why.
#ifndef RESTORESIM_CORE_RUNTIME_RUNTIME_CONFIG_H_
#define RESTORESIM_CORE_RUNTIME_RUNTIME_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace restoresim {

struct RuntimeConfig {
  std::string application_id;                       // application.id (required)
  std::string input_topic;                          // the topology's source topic (required)
  int32_t num_stream_threads = 1;                   // num.stream.threads
  int32_t num_standby_replicas = 0;                 // num.standby.replicas
  std::string state_dir = "/tmp/kafka-streams";     // state.dir
  std::string processing_guarantee = "at_least_once";  // processing.guarantee
  int64_t commit_interval_ms = 30000;               // commit.interval.ms
  int64_t poll_ms = 100;                            // poll.ms
  int32_t max_poll_records = 1000;                  // main.consumer.max.poll.records
  int32_t restore_max_poll_records = 1000;          // restore.consumer.max.poll.records
  int64_t checkpoint_interval_ms = 5000;            // how often the restore thread checkpoints
  // task.timeout.ms: how long retryable errors may hold a task back before it fails (0: the
  // first one fails it); Kafka's default, 5 minutes.
  int64_t task_timeout_ms = 300000;
  // Not a Kafka setting: the topology's name, for pause/resume (Runtime::PauseTopology; Kafka
  // names topologies only through its internal NamedTopology API). Empty: the unnamed topology.
  std::string topology_name;
  // Not a Kafka setting: the topology's stores (count_topology.h); empty means {"counts"}.
  std::vector<std::string> store_names;

  static constexpr int32_t kStreamThreadsMax = 64;

  bool exactly_once() const { return processing_guarantee == "exactly_once_v2"; }
  absl::Status Validate() const;
  // Builds a config from Kafka-style properties; unknown keys and bad values are errors.
  static absl::StatusOr<RuntimeConfig> FromProperties(
      const std::map<std::string, std::string>& properties);
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_RUNTIME_CONFIG_H_
