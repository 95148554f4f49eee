// RuntimeConfig: the runtime's settings, named as Kafka Streams names them where a name
// exists, validated with messages that say which setting is wrong and why.
#ifndef RESTORESIM_CORE_RUNTIME_RUNTIME_CONFIG_H_
#define RESTORESIM_CORE_RUNTIME_RUNTIME_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace restoresim {

struct RuntimeConfig {
  std::string application_id;                       // application.id (required)
  // The topology's source topic: restoresim.input.topic (Kafka Streams has no such setting;
  // a topology names its sources in code), "input" unless set.
  std::string input_topic;
  int32_t num_stream_threads = 1;                   // num.stream.threads
  int32_t num_standby_replicas = 0;                 // num.standby.replicas
  // state.dir: <state_dir>/<application.id> holds the lock, the process id
  // (kafka-streams-process-metadata, core/runtime/process_file.h) and a directory per task.
  std::string state_dir = "/tmp/kafka-streams";     // state.dir
  std::string processing_guarantee = "at_least_once";  // processing.guarantee
  int64_t commit_interval_ms = 30000;               // commit.interval.ms
  int64_t poll_ms = 100;                            // poll.ms
  int32_t max_poll_records = 1000;                  // main.consumer.max.poll.records
  int32_t restore_max_poll_records = 1000;          // restore.consumer.max.poll.records
  // task.timeout.ms: how long retryable errors may hold a task back before it fails (0: the
  // first one fails it); Kafka's default, 5 minutes.
  int64_t task_timeout_ms = 300000;
  // The Streams assignor's settings (HighAvailabilityTaskAssignor), Kafka's defaults.
  int32_t max_warmup_replicas = 2;                  // max.warmup.replicas (>= 1)
  int64_t acceptable_recovery_lag = 10000;          // acceptable.recovery.lag (>= 0)
  int64_t probing_rebalance_interval_ms = 600000;   // probing.rebalance.interval.ms (>= 60 s)
  // Not a Kafka setting (restoresim.group.assignor): "streams" runs Kafka Streams' assignor
  // on the group leader (standbys, warm-ups, probing rebalances; needs a backend that runs
  // client-side assignors: the fake broker, not librdkafka); "default" (the default) leaves
  // the assignment to the group (round-robin, or a scenario's), as before.
  std::string group_assignor = "default";
  // Not under Kafka's name (Kafka Streams' group.protocol, 4.1+): "classic" (the default) joins
  // the application's group as a consumer group; "streams" joins it as a streams group
  // (KIP-1071), whose broker-side coordinator places active, standby and warm-up tasks (the
  // group's num.standby.replicas is a broker setting then: group.streams.num.standby.replicas).
  // Needs a broker with streams groups (Kafka 4.2+; the fake broker has none yet) and the
  // default assignor.
  std::string group_protocol = "classic";
  // Not a Kafka setting: the topology's name, for pause/resume (Runtime::PauseTopology; Kafka
  // names topologies only through its internal NamedTopology API). Empty: the unnamed topology.
  std::string topology_name;
  // Not a Kafka setting: the topology's stores (count_topology.h); empty means {"counts"}.
  std::vector<std::string> store_names;
  // Not a Kafka setting (Kafka fixes it at 10 000: kCheckpointOffsetDeltaMin): an unforced
  // checkpoint — the restore thread's every commit.interval.ms, a running task's commit under
  // at-least-once — is written only once a task's stores moved more than this many records
  // since its last one. Simulations lower it so changelogs of tens of records checkpoint.
  int64_t checkpoint_offset_delta_min = 10'000;
  // Not a Kafka setting (restoresim.restore.share.while.processing.percent, 1..100): while a
  // stream thread's tasks have input to process, its restore thread restores at most this
  // share of the time (restore_thread.h, YieldToProcessing), so that restoring other tasks
  // takes less from processing on few cores. 100: no limit, as Kafka Streams' state updater
  // (it has none). Kafka's nearest analogue is the StreamThread before the state updater
  // (KIP-869), which restored one batch of restore.consumer.max.poll.records per loop between
  // processing, so processing had the thread between batches.
  int32_t restore_share_while_processing_percent = 10;

  static constexpr int32_t kStreamThreadsMax = 64;

  bool exactly_once() const { return processing_guarantee == "exactly_once_v2"; }
  bool streams_assignor() const { return group_assignor == "streams"; }
  bool streams_group() const { return group_protocol == "streams"; }
  absl::Status Validate() const;
  // Builds a config from Kafka Streams properties: Kafka Streams' settings under their names,
  // restoresim's own under "restoresim." with defaults, and the consumers' max.poll.records
  // with Kafka's precedence (bare < "consumer." < "main.consumer." / "restore.consumer.").
  // A missing application.id or a bad value of a known key is an error naming the key; a key
  // restoresim does not know — Kafka Streams' settings it does not
  // model, settings for Kafka Streams' clients, unknown names — is ignored with a warning in
  // `warnings` (when not null), as Kafka logs unused configs, so a real Kafka Streams
  // properties file loads.
  static absl::StatusOr<RuntimeConfig> FromProperties(
      const std::map<std::string, std::string>& properties,
      std::vector<std::string>* warnings = nullptr);
  // Every setting FromProperties reads, under its key, with this config's value as text (in
  // the order `restoresim config` prints them): FromProperties of it gives this config back.
  std::vector<std::pair<std::string, std::string>> ToProperties() const;
  // FromProperties over the text of a Java properties file (core/util/java_properties.h).
  static absl::StatusOr<RuntimeConfig> FromPropertiesText(std::string_view text,
                                                          std::vector<std::string>* warnings);
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_RUNTIME_CONFIG_H_
