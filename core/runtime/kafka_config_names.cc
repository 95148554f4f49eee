#include "core/runtime/kafka_config_names.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace restoresim {
namespace {

// Kafka Streams 4.x settings (StreamsConfig) with no effect here, sorted for binary search.
constexpr std::array<std::string_view, 45> kUnmodelledStreams = {
    "application.server",
    "buffered.records.per.partition",
    "built.in.metrics.version",
    "cache.max.bytes.buffering",
    "client.id",
    "connections.max.idle.ms",
    "default.client.supplier",
    "default.deserialization.exception.handler",
    "default.dsl.store",
    "default.key.serde",
    "default.list.key.serde.inner",
    "default.list.key.serde.type",
    "default.list.value.serde.inner",
    "default.list.value.serde.type",
    "default.production.exception.handler",
    "default.timestamp.extractor",
    "default.value.serde",
    "deserialization.exception.handler",
    "dsl.store.suppliers.class",
    "enable.metrics.push",
    "log.summary.interval.ms",
    "max.task.idle.ms",
    "metadata.max.age.ms",
    "metric.reporters",
    "metrics.num.samples",
    "metrics.recording.level",
    "metrics.sample.window.ms",
    "processing.exception.handler",
    "processor.wrapper.class",
    "production.exception.handler",
    "rack.aware.assignment.non_overlap_cost",
    "rack.aware.assignment.strategy",
    "rack.aware.assignment.tags",
    "rack.aware.assignment.traffic_cost",
    "receive.buffer.bytes",
    "reconnect.backoff.max.ms",
    "reconnect.backoff.ms",
    "replication.factor",
    "request.timeout.ms",
    "retry.backoff.ms",
    "rocksdb.config.setter",
    "state.cleanup.delay.ms",
    "statestore.cache.max.bytes",
    "topology.optimization",
    "upgrade.from",
};

// Client settings Kafka Streams forwards to its consumers, producer and admin client when
// given bare (without a "consumer." or "producer." prefix): classed as client settings.
constexpr std::array<std::string_view, 45> kClientSettings = {
    "acks", "allow.auto.create.topics", "auto.commit.interval.ms", "auto.offset.reset",
    "batch.size", "bootstrap.servers", "buffer.memory", "check.crcs", "client.dns.lookup",
    "client.rack", "compression.type", "default.api.timeout.ms", "delivery.timeout.ms",
    "enable.auto.commit", "enable.idempotence", "fetch.max.bytes", "fetch.max.wait.ms",
    "fetch.min.bytes", "group.instance.id", "group.protocol", "heartbeat.interval.ms",
    "isolation.level", "linger.ms", "max.block.ms", "max.in.flight.requests.per.connection",
    "max.partition.fetch.bytes", "max.poll.interval.ms", "max.request.size", "retries",
    "sasl.jaas.config", "sasl.kerberos.service.name", "sasl.login.callback.handler.class",
    "sasl.mechanism", "security.protocol", "send.buffer.bytes", "session.timeout.ms",
    "socket.connection.setup.timeout.ms", "ssl.endpoint.identification.algorithm",
    "ssl.key.password", "ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.type",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.type",
};

constexpr std::array<std::string_view, 7> kClientPrefixes = {
    "admin.", "consumer.", "global.consumer.", "main.consumer.", "producer.",
    "restore.consumer.", "topic.",
};

}  // namespace

bool IsUnmodelledStreamsSetting(std::string_view key) {
  static_assert(std::is_sorted(kUnmodelledStreams.begin(), kUnmodelledStreams.end()));
  return std::binary_search(kUnmodelledStreams.begin(), kUnmodelledStreams.end(), key);
}

bool IsClientSetting(std::string_view key) {
  for (std::string_view prefix : kClientPrefixes) {
    if (key.size() > prefix.size() && key.substr(0, prefix.size()) == prefix) return true;
  }
  return std::find(kClientSettings.begin(), kClientSettings.end(), key) != kClientSettings.end();
}

std::string IgnoredSettingWarning(std::string_view key) {
  if (IsUnmodelledStreamsSetting(key)) {
    return fmt::format("setting '{}' is Kafka Streams' but not modelled by restoresim: ignored",
                       key);
  }
  if (IsClientSetting(key)) {
    return fmt::format("setting '{}' is for Kafka Streams' clients, not modelled by restoresim: "
                       "ignored",
                       key);
  }
  return fmt::format("setting '{}' was supplied but isn't a known config: ignored", key);
}

}  // namespace restoresim
