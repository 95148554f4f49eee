// RdKafkaTransport: the transport port (core/transport/transport.h) over librdkafka, for runs
// against a real Kafka cluster on OS threads with the system clock. Each client it creates
// owns one librdkafka handle configured from rdkafka_settings.h; errors become the port's
// statuses in rdkafka_errors.h; the clients' departures from Kafka's own behaviour, made to
// keep the port's semantics, are listed in rdkafka_clients.h.
//
// Thread-safety: the transport may create clients from any thread; each client is used by one
// thread at a time. Not for the simulator: librdkafka runs its own threads on the wall clock
// (the constructor checks that no simulation runs on this thread).
#ifndef RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_TRANSPORT_H_
#define RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_TRANSPORT_H_

#include <memory>
#include <string>

#include "core/sync/clock.h"
#include "core/transport/rdkafka/rdkafka_settings.h"
#include "core/transport/transport.h"

namespace restoresim::rdkafka {

class RdKafkaTransport final : public Transport {
 public:
  // `clock` is the real world's (SystemClock): poll deadlines are measured on it.
  RdKafkaTransport(RdKafkaOptions options, Clock& clock);

  std::unique_ptr<RestoreConsumer> NewRestoreConsumer(const ConsumerConfig& config) override;
  std::unique_ptr<MainConsumer> NewMainConsumer(const std::string& group,
                                                const ConsumerConfig& config) override;
  std::unique_ptr<Admin> NewAdmin(const std::string& client_id) override;
  std::unique_ptr<Producer> NewProducer(const std::string& client_id) override;
  std::unique_ptr<TransactionalProducer> NewTransactionalProducer(
      const TransactionalProducerConfig& config) override;

  const RdKafkaOptions& options() const { return options_; }

 private:
  const RdKafkaOptions options_;
  Clock& clock_;
};

// "librdkafka 2.0.2", for logs and reports.
std::string LibrdkafkaVersion();

}  // namespace restoresim::rdkafka

#endif  // RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_TRANSPORT_H_
