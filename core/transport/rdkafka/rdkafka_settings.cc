#include "core/transport/rdkafka/rdkafka_settings.h"

#include <fmt/format.h>

namespace restoresim::rdkafka {
namespace {

const char* ResetName(OffsetReset reset) {
  switch (reset) {
    case OffsetReset::kEarliest:
      return "earliest";
    case OffsetReset::kLatest:
      return "latest";
    case OffsetReset::kNone:
      break;
  }
  return "error";
}

void Common(std::vector<Setting>& s, const RdKafkaOptions& options, const std::string& client_id) {
  s.push_back({"bootstrap.servers", options.bootstrap_servers, "the cluster to talk to"});
  s.push_back({"client.id", client_id.empty() ? "restoresim" : client_id,
               "names the client in broker logs and in librdkafka's own log lines"});
  s.push_back({"reconnect.backoff.ms", "50",
               "a restarted broker is reached again within a fraction of a second"});
  s.push_back({"reconnect.backoff.max.ms", "1000",
               "caps the reconnect backoff (default 10 s) so a broker restart or a leader "
               "kill costs seconds, not tens of seconds"});
  s.push_back({"topic.metadata.refresh.fast.interval.ms", "100",
               "while a leader is unknown (failover), metadata is re-asked this often"});
  s.push_back({"log.connection.close", "false",
               "idle connections closed by the broker are normal, not worth a log line"});
}

void Consumer(std::vector<Setting>& s, const ConsumerConfig& config) {
  s.push_back({"enable.auto.commit", "false", "the runtime commits explicitly (CommitSync)"});
  s.push_back({"enable.auto.offset.store", "false", "no implicit offset bookkeeping either"});
  s.push_back({"enable.partition.eof", "true",
               "the adapter's position follows an end-of-partition event's offset: the port's "
               "position passes control records (transaction markers) and, under "
               "read_committed, aborted records, as Kafka's Java consumer's does; the port has "
               "no end-of-partition events of its own"});
  s.push_back({"auto.offset.reset", ResetName(config.auto_offset_reset),
               "the port's auto_offset_reset; 'error' turns an out-of-range position into an "
               "event the adapter reports as PollResult::out_of_range (Kafka's reset=none)"});
  s.push_back({"isolation.level",
               config.isolation_level == IsolationLevel::kReadCommitted ? "read_committed"
                                                                         : "read_uncommitted",
               "the port's isolation_level: what fetches return, and where SeekToEnd goes"});
  s.push_back({"allow.auto.create.topics", "false",
               "a subscription or fetch never creates a topic as a side effect"});
  // librdkafka 2.0.2 stops fetching a partition whose local queue exceeds queued.min.messages
  // (default 100,000) and re-checks only about once a second, which caps a consumer slower than
  // the fetcher near 120k records/s (fetch.queue.backoff.ms, the fix, arrived in 2.2).
  s.push_back({"queued.min.messages", "2000000",
               "above a second of restore throughput: see the comment above"});
  s.push_back({"queued.max.messages.kbytes", "1048576",
               "1 GiB of prefetch per client, above a second of restore throughput"});
  s.push_back({"fetch.wait.max.ms", "100",
               "a fetch in flight delays a seek's effect by up to this long (default 500)"});
  s.push_back({"max.partition.fetch.bytes", "4194304",
               "fewer round trips while restoring a large changelog (default 1 MiB)"});
}

}  // namespace

std::vector<Setting> SettingsFor(ClientKind kind, const RdKafkaOptions& options,
                                 const std::string& client_id, const ConsumerConfig* consumer,
                                 const std::string& group,
                                 const TransactionalProducerConfig* transactional) {
  std::vector<Setting> s;
  Common(s, options, client_id);
  switch (kind) {
    case ClientKind::kRestoreConsumer:
      Consumer(s, *consumer);
      // librdkafka's assign() needs a consumer-group handle; this group is never joined (no
      // subscribe) and never committed to: it only makes assign() legal.
      s.push_back({"group.id", fmt::format("{}-restore-no-group", client_id),
                   "required by librdkafka's assign(); never joined"});
      break;
    case ClientKind::kMainConsumer:
      Consumer(s, *consumer);
      s.push_back({"group.id", group, "the application's group (application.id)"});
      s.push_back({"partition.assignment.strategy", "cooperative-sticky",
                   "incremental cooperative rebalancing, as Kafka Streams uses: a member keeps "
                   "what does not move, and revokes before the partition is assigned elsewhere"});
      s.push_back({"session.timeout.ms", "10000",
                   "a member that died leaves the group in 10 s (default 45 s)"});
      s.push_back({"heartbeat.interval.ms", "1000",
                   "well under a third of the session timeout, as Kafka asks"});
      break;
    case ClientKind::kStreamsGroupConsumer:
      Consumer(s, *consumer);
      s.push_back({"group.id", group,
                   "the streams group (application.id): its committed offsets are where "
                   "partitions start; they are assigned by hand, never subscribed"});
      break;
    case ClientKind::kAdmin:
    case ClientKind::kAdminReadCommitted:
      // A consumer-type handle that never assigns or subscribes: admin requests, metadata and
      // ListOffsets (offsets_for_times) with the consumer's isolation level.
      if (kind == ClientKind::kAdmin) {
        s.push_back({"isolation.level", "read_uncommitted",
                     "EndOffsets is the high watermark (read-uncommitted)"});
      } else {
        s.push_back({"isolation.level", "read_committed",
                     "EndOffsetsFor(read_committed) is the last stable offset"});
      }
      s.push_back({"allow.auto.create.topics", "false",
                   "asking for an unknown topic's metadata never creates it"});
      break;
    case ClientKind::kTransactionalProducer:
      s.push_back({"transactional.id", transactional->transactional_id,
                   "the identity the coordinator fences by (implies enable.idempotence)"});
      s.push_back({"transaction.timeout.ms",
                   fmt::format("{}", transactional->transaction_timeout_ns / kMillisecond),
                   "the port's transaction_timeout_ns: the broker aborts a transaction open "
                   "longer"});
      s.push_back({"linger.ms", "5", "batches a burst of changelog writes"});
      break;
    case ClientKind::kProducer:
      s.push_back({"enable.idempotence", "true",
                   "retries (leader failover, broker restart) neither duplicate nor reorder "
                   "changelog records; implies acks=all"});
      s.push_back({"linger.ms", "5", "batches a burst of changelog writes"});
      s.push_back({"message.timeout.ms", "120000",
                   "a record not acknowledged in 2 minutes fails its Flush (default 5 min)"});
      break;
  }
  return s;
}

absl::StatusOr<rd_kafka_conf_t*> NewConf(const std::vector<Setting>& settings) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[512];
  for (const Setting& setting : settings) {
    if (rd_kafka_conf_set(conf, setting.name.c_str(), setting.value.c_str(), error,
                          sizeof(error)) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return absl::InvalidArgumentError(
          fmt::format("librdkafka setting {}={}: {}", setting.name, setting.value, error));
    }
  }
  return conf;
}

}  // namespace restoresim::rdkafka
