// StreamsGroupAssignor: Kafka Streams' StreamsPartitionAssignor over the transport port's
// GroupAssignor. Each stream thread's main consumer offers one; the group runs the leader's:
//   1. decode every member's SubscriptionInfo (process id, task offset sums); members of one
//      process are the consumers (threads) of one client, its capacity their number; their
//      offset sums merge (a running active wins, else the largest);
//   2. the tasks are the partitions of the input topic; each task's end-offset sum is the sum
//      of its changelogs' end offsets (0 for a changelog not created yet), read from the
//      cluster view (Kafka: the leader's admin client);
//   3. AssignTasks (streams_assignor.h);
//   4. each client's actives, then standbys, go to its consumers: a task stays on the
//      consumer that reported state for it while that consumer has fewer than its share
//      (ceil(tasks / consumers)); the rest go to the consumer with the fewest, ties by
//      member id. (Kafka's assignTasksToThreads also balances by previous owner; simplified.)
//   5. each member's Assignment: the input partitions of its actives, and AssignmentInfo with
//      its standbys (warm-ups included); when a probing rebalance is needed, the leader's
//      carries rebalance_at_ms = now + probing.rebalance.interval.ms (Kafka's nextRebalanceMs).
// Bad subscription user data fails the assignment (kInvalidArgument naming the member): the
// group then keeps its default assignment for that generation (fake_group.h).
//
// Thread-safety: Assign may run on any thread (the group calls it under its broker's lock);
// it reads only its immutable config, the clock, and updates relaxed atomic counters.
#ifndef RESTORESIM_CORE_RUNTIME_STREAMS_GROUP_ASSIGNOR_H_
#define RESTORESIM_CORE_RUNTIME_STREAMS_GROUP_ASSIGNOR_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/runtime/streams_assignor.h"
#include "core/sync/clock.h"
#include "core/transport/transport.h"

namespace restoresim {

struct StreamsGroupAssignorConfig {
  std::string application_id;
  std::string input_topic;
  std::vector<std::string> store_names = {"counts"};  // the topology's stores (changelogs)
  TaskAssignorConfig tasks;
  int64_t probing_rebalance_interval_ms = 600000;  // probing.rebalance.interval.ms
};

class StreamsGroupAssignor final : public GroupAssignor {
 public:
  // Kafka Streams' assignor protocol name.
  static constexpr const char* kName = "stream";

  StreamsGroupAssignor(StreamsGroupAssignorConfig config, Clock& clock);

  std::string Name() const override { return kName; }
  absl::StatusOr<std::map<std::string, Assignment>> Assign(
      const std::string& leader_member_id,
      const std::map<std::string, GroupMemberSubscription>& members,
      const GroupAssignorContext& cluster) override;

  // Of the assignments this assignor computed (as a leader): how many, how many placed a
  // warm-up, and how many scheduled a probing rebalance. Any thread (relaxed atomics).
  int64_t assignments() const { return assignments_.load(std::memory_order_relaxed); }
  int64_t with_warmups() const { return with_warmups_.load(std::memory_order_relaxed); }
  int64_t probing_scheduled() const { return probing_.load(std::memory_order_relaxed); }

 private:
  const StreamsGroupAssignorConfig config_;
  Clock& clock_;
  std::atomic<int64_t> assignments_{0};
  std::atomic<int64_t> with_warmups_{0};
  std::atomic<int64_t> probing_{0};
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_STREAMS_GROUP_ASSIGNOR_H_
