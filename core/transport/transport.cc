#include "core/transport/transport.h"

#include <fmt/format.h>

namespace restoresim {

std::string TopicPartition::ToString() const { return fmt::format("{}-{}", topic, partition); }

size_t PollResult::RecordCount() const {
  size_t n = 0;
  for (const PartitionRecords& p : partitions) n += p.records.size();
  return n;
}

bool IsRetryable(const absl::Status& status) {
  return status.code() == absl::StatusCode::kDeadlineExceeded ||
         status.code() == absl::StatusCode::kUnavailable;
}

}  // namespace restoresim
