// The assignment info a group leader attaches to each member's assignment (Kafka Streams'
// AssignmentInfo, much simplified): which tasks the member runs as standbys. Active tasks
// follow from the input partitions themselves. Encoded as text in Assignment::user_data:
//   "standby=0_1,0_3"
// An empty user_data means no standbys (what a broker's default assignor gives).
#ifndef RESTORESIM_CORE_RUNTIME_ASSIGNMENT_INFO_H_
#define RESTORESIM_CORE_RUNTIME_ASSIGNMENT_INFO_H_

#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "core/runtime/task_id.h"

namespace restoresim {

struct AssignmentInfo {
  std::set<TaskId> standby_tasks;

  std::string Encode() const;
  static absl::StatusOr<AssignmentInfo> Decode(std::string_view user_data);
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_ASSIGNMENT_INFO_H_
