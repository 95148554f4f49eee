#include "core/transport/subscription_state.h"

#include <fmt/format.h>

namespace restoresim {

absl::Status NotAssignedError(const TopicPartition& partition, std::string_view call) {
  return absl::FailedPreconditionError(
      fmt::format("{}: partition {} is not assigned to this consumer", call, partition.ToString()));
}

absl::Status NegativeSeekError(const TopicPartition& partition, int64_t offset) {
  return absl::InvalidArgumentError(
      fmt::format("seek: negative offset {} for {}", offset, partition.ToString()));
}

absl::Status NoPositionError(const TopicPartition& partition) {
  return absl::FailedPreconditionError(fmt::format(
      "no position for {} and auto_offset_reset is none: seek it first", partition.ToString()));
}

}  // namespace restoresim
