// AssignStickyTasks: the fake broker's streams-group task assignor, a paraphrase of Kafka 4.4's
// StickyTaskAssignor (group-coordinator, streams/assignor/StickyTaskAssignor.java and
// ProcessState.java), the broker's default for streams groups (KIP-1071).
//
// Given the members (each with its process and the tasks it was last targeted with) and the
// topology (tasks per subtopology, which subtopologies keep state), it places:
//   - active tasks: first back on the member that had them active, while it is under its quota
//     (ceil(tasks / members), recomputed as members fill up), then on a member that had them as
//     a standby, then the rest, in subtopology and partition order, each on the least-loaded
//     process (tasks / members of the process) and there on its least-loaded member;
//   - standby tasks (num_standby_replicas per stateful task): back on the previous active owner,
//     then on a previous standby owner, while under the total quota, then on the least-loaded
//     process that does not hold the task; never two copies of a task on one process, so a
//     standby never shares a process with its active. Replicas without room are left out (Kafka
//     logs a warning).
// Where Kafka breaks ties by the order of its hash maps and priority queues (unspecified), the
// fake breaks them by id: processes by (load, process id), members by (task count, member id),
// previous standby owners in member id order. No warm-up tasks and no task offsets (Kafka ranks
// standby candidates by reported offsets; without offsets every candidate ties).
//
// Thread-safety: a pure function.
#ifndef RESTORESIM_FAKES_FAKE_STREAMS_ASSIGNOR_H_
#define RESTORESIM_FAKES_FAKE_STREAMS_ASSIGNOR_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "core/transport/streams_group_member.h"

namespace restoresim::fakes {

struct StreamsAssignorMember {
  std::string process_id;
  StreamsTaskSet previous_active;   // the member's target of the last assignment
  StreamsTaskSet previous_standby;
};

struct StreamsAssignorTopology {
  std::map<std::string, int32_t> partitions_by_subtopology;  // tasks of each subtopology
  std::set<std::string> stateful;                            // subtopologies with stores
};

struct StreamsTargetTasks {
  StreamsTaskSet active;
  StreamsTaskSet standby;
  bool operator==(const StreamsTargetTasks&) const = default;
};

// Every member gets an entry (possibly empty). REQUIRES: num_standby_replicas >= 0.
std::map<std::string, StreamsTargetTasks> AssignStickyTasks(
    const std::map<std::string, StreamsAssignorMember>& members,
    const StreamsAssignorTopology& topology, int32_t num_standby_replicas);

}  // namespace restoresim::fakes

#endif  // RESTORESIM_FAKES_FAKE_STREAMS_ASSIGNOR_H_
