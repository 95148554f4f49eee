// GroupCoordinator: one consumer group of the fake broker — membership, generations, the
// rebalance events each member has yet to see, and committed offsets.
//
// Default assignor (what a real broker with a round-robin, cooperative assignor does, so the
// transport conformance suite holds for Kafka too): on every membership change a new
// generation assigns every partition of the subscribed topics round-robin over the members in
// join order (skipping members not subscribed to a partition's topic). Each member is then told,
// at its next poll: revoked = old - new (when not empty), then assigned = its whole new
// assignment. In manual mode membership changes assign nothing; scenarios install generations
// with Rebalance (per-member user_data included).
//
// Cooperative, as Kafka's incremental protocol: a partition moving from member X to member Y is
// given to Y only once X has handled its revocation (polled, run its callback, committed) —
// until then Y's assignment leaves it out, and a follow-up generation grants it (one generation
// every member takes part in, as in Kafka: each is told its assignment again, changed or not).
// No partition is ever owned by two active members at once. A lost member holds nothing back: it is fenced.
//
// A lost member (LoseMember) leaves the membership at once; its partitions are reported lost at
// its next poll, after which it rejoins (same member id) with an empty assignment until the next
// generation — which, with the default assignor, the rejoin itself starts.
//
// Thread-safety: not thread-safe; the broker calls it under its mutex.
#ifndef RESTORESIM_FAKES_FAKE_GROUP_H_
#define RESTORESIM_FAKES_FAKE_GROUP_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/transport/transport.h"

namespace restoresim::fakes {

// What a member is told at its next poll.
struct RebalanceEvent {
  enum class Kind { kGeneration, kLost };
  Kind kind = Kind::kGeneration;
  int32_t generation = 0;
  std::vector<TopicPartition> revoked;  // kGeneration: old - new; kLost: every owned partition
  Assignment assigned;                  // kGeneration only: the whole new assignment
};

class GroupCoordinator {
 public:
  // Events a member may have pending; a scenario that rebalances more often than the member
  // polls past this is broken, and is told so.
  static constexpr size_t kPendingEventsMax = 256;

  // `partition_count` answers how many partitions a topic has (0: unknown).
  using PartitionCounter = std::function<int32_t(const std::string& topic)>;
  GroupCoordinator(std::string group, PartitionCounter partition_count);

  // Adds a member subscribed to `topics`; returns its id "<client_id>-<n>".
  std::string Join(const std::string& client_id, const std::vector<std::string>& topics);
  // Removes a member (Close). Unknown ids are ignored: closing twice is harmless.
  void Leave(const std::string& member_id);
  // Re-adds a lost member after it saw its lost partitions.
  void Rejoin(const std::string& member_id);

  absl::Status Rebalance(const std::map<std::string, Assignment>& assignments);
  absl::Status Lose(const std::string& member_id);
  void set_manual(bool manual) { manual_ = manual; }

  // The member's pending events, oldest first; clears them. Sets *must_rejoin when a lost event
  // is among them.
  std::vector<RebalanceEvent> TakeEvents(const std::string& member_id, bool* must_rejoin);
  // The member has applied the events it took (its callbacks returned): partitions it gave up
  // may now go to their new owners. Returns whether another member got a follow-up generation.
  bool Acknowledge(const std::string& member_id);
  bool HasEvents(const std::string& member_id) const;
  // Whether every member has taken and acknowledged every event and active members hold all
  // they were assigned (nothing held back): until then a member's view of its assignment (and
  // so its stream thread's wanted tasks) may be older than the latest generation.
  bool Settled() const;
  // Whether `member_id` is in the current membership (not lost, not left).
  bool IsActive(const std::string& member_id) const;

  std::vector<std::string> members() const { return join_order_; }
  int32_t generation() const { return generation_; }
  std::map<TopicPartition, int64_t>& committed() { return committed_; }
  const std::map<TopicPartition, int64_t>& committed() const { return committed_; }

 private:
  struct Member {
    std::string client_id;
    std::vector<std::string> topics;    // sorted
    std::vector<TopicPartition> owned;  // sorted; as of the latest generation
    Assignment target;                  // the latest assignment asked for (may be held back)
    std::vector<TopicPartition> taken;      // what the member owns after the events it took
    std::vector<TopicPartition> delivered;  // ... and has acknowledged: what it really holds
    std::vector<RebalanceEvent> pending;
    bool lost = false;  // awaiting its lost event's delivery and rejoin
  };

  // A new generation with the given assignment per active member (absent: empty).
  void InstallGeneration(const std::map<std::string, Assignment>& assignments);
  void AssignRoundRobin();
  void MembershipChanged();
  void Push(Member& member, RebalanceEvent event);
  // Whether an active member other than `member_id` still holds `tp`.
  bool HeldByOther(const TopicPartition& tp, const std::string& member_id) const;
  // Grants held-back partitions that are free now, as follow-up generations.
  bool ReleaseHeld();

  const std::string group_;
  PartitionCounter partition_count_;
  std::map<std::string, Member> members_;  // every member not yet left, lost ones included
  std::vector<std::string> join_order_;    // active members
  std::map<TopicPartition, int64_t> committed_;
  int32_t generation_ = 0;
  int64_t next_member_number_ = 1;
  bool manual_ = false;
};

}  // namespace restoresim::fakes

#endif  // RESTORESIM_FAKES_FAKE_GROUP_H_
