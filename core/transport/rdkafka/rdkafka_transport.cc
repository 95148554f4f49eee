#include "core/transport/rdkafka/rdkafka_transport.h"

#include <fmt/format.h>

#include "core/transport/rdkafka/rdkafka_clients.h"
#include "core/util/check.h"
#include "core/util/sim_hooks.h"

namespace restoresim::rdkafka {

RdKafkaTransport::RdKafkaTransport(RdKafkaOptions options, Clock& clock)
    : options_(std::move(options)), clock_(clock) {
  RS_CHECK(CurrentSim() == nullptr,
           "the librdkafka transport runs on OS threads and the wall clock, not the simulator");
  RS_CHECK(!options_.bootstrap_servers.empty(), "RdKafkaTransport without bootstrap servers");
}

std::unique_ptr<RestoreConsumer> RdKafkaTransport::NewRestoreConsumer(
    const ConsumerConfig& config) {
  return std::make_unique<RdKafkaRestoreConsumer>(
      SettingsFor(ClientKind::kRestoreConsumer, options_, config.client_id, &config, ""), config,
      options_, clock_);
}

std::unique_ptr<MainConsumer> RdKafkaTransport::NewMainConsumer(const std::string& group,
                                                                const ConsumerConfig& config) {
  if (config.group_protocol == GroupProtocol::kStreams) {
    return std::make_unique<RdKafkaStreamsGroupConsumer>(
        SettingsFor(ClientKind::kStreamsGroupConsumer, options_, config.client_id, &config, group),
        config, options_, clock_);
  }
  return std::make_unique<RdKafkaMainConsumer>(
      SettingsFor(ClientKind::kMainConsumer, options_, config.client_id, &config, group), config,
      options_, clock_);
}

std::unique_ptr<Admin> RdKafkaTransport::NewAdmin(const std::string& client_id) {
  return std::make_unique<RdKafkaAdmin>(
      SettingsFor(ClientKind::kAdmin, options_, client_id, nullptr, ""),
      SettingsFor(ClientKind::kAdminReadCommitted, options_, client_id + "-read-committed",
                  nullptr, ""),
      options_, client_id, clock_);
}

std::unique_ptr<Producer> RdKafkaTransport::NewProducer(const std::string& client_id) {
  return std::make_unique<RdKafkaProducer>(
      SettingsFor(ClientKind::kProducer, options_, client_id, nullptr, ""), options_);
}

std::unique_ptr<TransactionalProducer> RdKafkaTransport::NewTransactionalProducer(
    const TransactionalProducerConfig& config) {
  return std::make_unique<RdKafkaTransactionalProducer>(
      SettingsFor(ClientKind::kTransactionalProducer, options_, config.client_id, nullptr, "",
                  &config),
      options_);
}

std::string LibrdkafkaVersion() { return fmt::format("librdkafka {}", rd_kafka_version_str()); }

}  // namespace restoresim::rdkafka
