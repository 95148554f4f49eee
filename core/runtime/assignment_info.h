// The Streams protocol's user data (Kafka Streams' SubscriptionInfo and AssignmentInfo, much
// simplified), encoded as text.
//
// SubscriptionInfo: what a member tells the group leader's assignor when it (re)joins — its
// process (a KafkaStreams instance: one client of the assignor, whose stream threads are its
// consumers) and its task offset sums (TaskManager.getTaskOffsetSums: per task it has state
// for, the sum of its changelog positions, or kLatestOffset for an active task that runs).
//   "process=a;offsets=0_0:-2,0_1:120"
// AssignmentInfo: what the leader attaches to each member's assignment: the tasks it runs as
// standbys (warm-ups included: Kafka sends them as standbys) and, for the member that is to
// trigger it, when the next probing rebalance is due (Kafka's nextRebalanceMs). Active tasks
// follow from the input partitions themselves.
//   "standby=0_1,0_3"  or  "standby=0_1;rebalance_at_ms=1500"
// An empty user_data means no standbys (what a broker's default assignor gives).
//
// Thread-safety: value types.
#ifndef RESTORESIM_CORE_RUNTIME_ASSIGNMENT_INFO_H_
#define RESTORESIM_CORE_RUNTIME_ASSIGNMENT_INFO_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "core/runtime/task_id.h"

namespace restoresim {

// Kafka's Task.LATEST_OFFSET: the offset sum of an active task that is running.
inline constexpr int64_t kLatestOffset = -2;

struct AssignmentInfo {
  std::set<TaskId> standby_tasks;
  // The clock's time (ms) at which this member triggers a probing rebalance; none: no follow-up.
  std::optional<int64_t> rebalance_at_ms;

  std::string Encode() const;
  static absl::StatusOr<AssignmentInfo> Decode(std::string_view user_data);
};

struct SubscriptionInfo {
  static constexpr size_t kTasksMax = 1 << 16;

  std::string process_id;                   // [a-zA-Z0-9._-]+
  std::map<TaskId, int64_t> task_offset_sums;  // >= 0, or kLatestOffset

  std::string Encode() const;
  static absl::StatusOr<SubscriptionInfo> Decode(std::string_view user_data);
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_ASSIGNMENT_INFO_H_
