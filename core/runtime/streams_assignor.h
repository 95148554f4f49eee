// The task assignment of Kafka Streams' high-availability assignor (HighAvailabilityTaskAssignor
// and TaskMovement, Kafka Streams 4.x), as a pure function: clients (KafkaStreams instances,
// by process id) with their capacity (stream threads) and task offset sums, and the changelog
// end-offset sum of every stateful task, in; per client its active tasks, standbys and
// warm-ups, and whether a probing rebalance is needed, out. Paraphrased from Kafka's sources:
//
//  lag       per client and task: kLatestOffset for a running active; the end-offset sum for
//            a task it has no state for, or whose offset sum exceeds the end (a corrupted
//            task, restored from scratch); otherwise end - offset sum.
//  caught up a running active, or 0 <= lag <= acceptable_recovery_lag.
//  1 actives round-robin over the clients in process-id order, then balanced over the
//            clients' threads (a task moves from the more to the less loaded per thread while
//            that lowers the skew).
//  2 standbys num_standby_replicas per task, each on the least loaded client (assigned tasks
//            per thread, ties by process id) that holds nothing of the task; fewer when there
//            are not enough other clients; then balanced the same way.
//  3 active movements: a task whose client is not caught up while a more caught-up client
//            exists moves (in order of fewest caught-up clients, then task id): to the least
//            loaded caught-up client holding a standby of it (they swap: the destination keeps
//            a standby); else to the least loaded caught-up client, the destination keeping a
//            warm-up while max_warmup_replicas last; else to the most caught-up client.
//  4 standby movements: a standby (not a warm-up) on a client that is not caught up moves to
//            a caught-up (else the most caught-up) client without the task; the old one stays
//            as a warm-up while warm-ups last (max_warmup_replicas is shared with step 3).
//  probing   needed when step 3 or 4 moved anything: after probing.rebalance.interval.ms the
//            leader rebalances again, and caught-up warm-ups then keep their tasks.
// Departure: Kafka iterates its movement queue in heap order (a PriorityQueue's iterator);
// here movements are taken in the queue's stated order. Stateless tasks, rack awareness and
// client tags are not modelled (every task of the count topology has state).
//
// Thread-safety: a pure function.
#ifndef RESTORESIM_CORE_RUNTIME_STREAMS_ASSIGNOR_H_
#define RESTORESIM_CORE_RUNTIME_STREAMS_ASSIGNOR_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "core/runtime/task_id.h"

namespace restoresim {

struct TaskAssignorConfig {
  int32_t num_standby_replicas = 0;          // num.standby.replicas
  int32_t max_warmup_replicas = 2;           // max.warmup.replicas
  int64_t acceptable_recovery_lag = 10000;   // acceptable.recovery.lag
};

struct AssignorClient {
  int32_t capacity = 1;                     // its stream threads (>= 1)
  std::map<TaskId, int64_t> offset_sums;    // kLatestOffset for a running active
};

struct ClientTasks {
  std::set<TaskId> actives;
  std::set<TaskId> standbys;  // warm-ups included (the member runs them as standbys)
  std::set<TaskId> warmups;   // the standbys that are warm-ups for a task moving here
};

struct TaskAssignment {
  std::map<std::string, ClientTasks> clients;  // every client, by process id
  int32_t active_movements = 0;   // actives kept off their balanced client (step 3)
  int32_t standby_movements = 0;  // standbys moved to a more caught-up client (step 4)
  bool probing_rebalance_needed() const { return active_movements + standby_movements > 0; }
};

// The lag of a client's task as defined above.
int64_t TaskLag(const AssignorClient& client, TaskId task, int64_t end_offset_sum);

// REQUIRES nothing: bad input (no clients, capacity < 1, negative settings) is an error.
absl::StatusOr<TaskAssignment> AssignTasks(const std::map<std::string, AssignorClient>& clients,
                                           const std::map<TaskId, int64_t>& end_offset_sums,
                                           const TaskAssignorConfig& config);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_STREAMS_ASSIGNOR_H_
