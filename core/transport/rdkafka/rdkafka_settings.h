// Every librdkafka setting the transport uses, in one place, each with its reason
// (rdkafka_settings.cc holds the table). The clients build their configuration only from here.
//
// Thread-safety: stateless.
#ifndef RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_SETTINGS_H_
#define RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_SETTINGS_H_

#include <librdkafka/rdkafka.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/sync/clock.h"
#include "core/transport/transport.h"

namespace restoresim::rdkafka {

// What a user of RdKafkaTransport chooses; everything else is fixed by the table.
struct RdKafkaOptions {
  std::string bootstrap_servers;  // "host:port[,host:port...]"
  // Deadline of one blocking metadata, offset, commit or admin call.
  TimeNs request_timeout_ns = 10 * kSecond;
};

enum class ClientKind {
  kRestoreConsumer,
  kMainConsumer,
  kStreamsGroupConsumer,  // a main consumer under group.protocol streams: assigns by hand
  kAdmin,
  kAdminReadCommitted,  // the admin's second handle, for read_committed end offsets
  kProducer,
  kTransactionalProducer,
};

struct Setting {
  std::string name;
  std::string value;
  const char* reason;
};

// The settings of one client: the common ones, then those of its kind. `group` is the main
// consumer's group.id (empty for the other kinds); `transactional` is required for
// kTransactionalProducer only.
std::vector<Setting> SettingsFor(ClientKind kind, const RdKafkaOptions& options,
                                 const std::string& client_id, const ConsumerConfig* consumer,
                                 const std::string& group,
                                 const TransactionalProducerConfig* transactional = nullptr);

// A librdkafka configuration holding `settings` (kInvalidArgument naming the setting librdkafka
// refused). The caller owns the result until rd_kafka_new takes it.
absl::StatusOr<rd_kafka_conf_t*> NewConf(const std::vector<Setting>& settings);

}  // namespace restoresim::rdkafka

#endif  // RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_SETTINGS_H_
