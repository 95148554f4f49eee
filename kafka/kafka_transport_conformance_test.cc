// The transport conformance suite (core/transport/transport_conformance.h), unchanged, against
// the librdkafka transport and the local single-node cluster whose address is in
// RESTORESIM_KAFKA_BOOTSTRAP (tools/test starts it). No faults are injected: a real broker's
// own retryable errors are what the suite's retries meet.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "core/port/system_clock.h"
#include "core/transport/rdkafka/rdkafka_transport.h"
#include "core/transport/transport_conformance.h"
#include "kafka/kafka_env.h"

namespace restoresim {
namespace {

class KafkaTransportTestEnv final : public TransportTestEnv {
 public:
  KafkaTransportTestEnv() : bootstrap_(kafka_test::Bootstrap(kafka_test::kBootstrapEnv)) {}

  std::string Describe() const override {
    return fmt::format("kafka at {} ({})", bootstrap_.ok() ? *bootstrap_ : "(no address)",
                       rdkafka::LibrdkafkaVersion());
  }

  void Run(std::function<void()> body) override {
    ASSERT_TRUE(bootstrap_.ok()) << bootstrap_.status();
    rdkafka::RdKafkaOptions options;
    options.bootstrap_servers = *bootstrap_;
    transport_ = std::make_unique<rdkafka::RdKafkaTransport>(options, clock());
    body();
    transport_.reset();
  }

  Transport& transport() override { return *transport_; }
  Clock& clock() override { return *SystemClock::Default(); }
  std::string UniqueTopic(std::string_view base) override {
    return kafka_test::UniqueName(base);
  }
  std::string UniqueGroup(std::string_view base) override {
    return kafka_test::UniqueName(fmt::format("group-{}", base));
  }
  bool faults_on() const override { return false; }

 private:
  const absl::StatusOr<std::string> bootstrap_;
  std::unique_ptr<rdkafka::RdKafkaTransport> transport_;
};

INSTANTIATE_TEST_SUITE_P(
    Kafka, TransportConformanceTest,
    ::testing::Values(TransportTestEnvFactory(
        []() { return std::make_unique<KafkaTransportTestEnv>(); })),
    [](const ::testing::TestParamInfo<TransportTestEnvFactory>&) { return std::string("kafka"); });

}  // namespace
}  // namespace restoresim
