// Built instead of kafka_backend.cc when meson did not find librdkafka.
#include "bench/backend.h"

namespace restoresim::bench {

bool HaveKafkaBackend() { return false; }

absl::StatusOr<std::unique_ptr<Backend>> NewKafkaBackend(const std::string&) {
  return absl::FailedPreconditionError(
      "restoresim was built without librdkafka (install librdkafka-dev and reconfigure)");
}

}  // namespace restoresim::bench
