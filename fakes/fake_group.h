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
// Leader's assignor (Kafka's group protocol with a ConsumerPartitionAssignor, e.g. Kafka
// Streams'): when every active member joined offering an assignor (ConsumerConfig::assignor)
// of the same name, each generation is computed by the assignor of the leader — the active
// member that joined first — over every member's subscription: its topics, the user data it
// last set (SetUserData) and what it owns. EnforceRebalance starts a generation too (Kafka's
// enforceRebalance; a probing rebalance). Departure: the assignor runs at once, with the user
// data each member last set, rather than after every member rejoined with fresh data. An
// assignor error (or an assignment naming unknown members or partitions, or a partition
// twice) keeps that generation on the default assignor; last_assignor_error() says why.
//
// Cooperative, as Kafka's incremental protocol: a partition moving from member X to member Y is
// given to Y only once X has handled its revocation (polled, run its callback, committed) —
// until then Y's assignment leaves it out, and a follow-up generation grants it (one generation
// every member takes part in, as in Kafka: each is told its assignment again, changed or not).
// No partition is ever owned by two active members at once. A lost member holds nothing back:
// it is fenced.
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
#include <optional>
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
  // `end_offset` answers a partition's end offset for assignors (null: every one unknown).
  using EndOffsetReader = std::function<std::optional<int64_t>(const TopicPartition&)>;
  GroupCoordinator(std::string group, PartitionCounter partition_count,
                   EndOffsetReader end_offset = nullptr);

  // Adds a member subscribed to `topics`, offering `assignor` (null: none) with subscription
  // `user_data`; returns its id "<client_id>-<n>".
  std::string Join(const std::string& client_id, const std::vector<std::string>& topics,
                   GroupAssignor* assignor = nullptr, std::string user_data = "");
  // The member's subscription user data from now on (what the next assignor run reads).
  absl::Status SetUserData(const std::string& member_id, std::string user_data);
  // A new generation now (Kafka's enforceRebalance), unless in manual mode.
  absl::Status EnforceRebalance(const std::string& member_id);
  // Why the last assignor run fell back to the default assignor (OK: it did not).
  const absl::Status& last_assignor_error() const { return last_assignor_error_; }
  // Whether generations are computed by the leader's assignor now.
  bool UsesLeaderAssignor() const;
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
    bool unacknowledged = false;  // took events whose callbacks have not returned yet
    std::vector<RebalanceEvent> pending;
    bool lost = false;  // awaiting its lost event's delivery and rejoin
    GroupAssignor* assignor = nullptr;  // offered at Join (not owned)
    std::string user_data;              // its subscription's, as last set
  };

  // A new generation with the given assignment per active member (absent: empty).
  void InstallGeneration(const std::map<std::string, Assignment>& assignments);
  void AssignRoundRobin();
  // Runs the leader's assignor; false (last_assignor_error_ set) when it failed or its
  // assignment is invalid.
  bool AssignWithLeader();
  absl::Status ValidateAssignment(const std::map<std::string, Assignment>& assignments) const;
  void MembershipChanged();
  void Push(Member& member, RebalanceEvent event);
  // Whether an active member other than `member_id` still holds `tp`.
  bool HeldByOther(const TopicPartition& tp, const std::string& member_id) const;
  // Grants held-back partitions that are free now, as follow-up generations.
  bool ReleaseHeld();

  const std::string group_;
  PartitionCounter partition_count_;
  EndOffsetReader end_offset_;
  absl::Status last_assignor_error_;
  std::map<std::string, Member> members_;  // every member not yet left, lost ones included
  std::vector<std::string> join_order_;    // active members
  std::map<TopicPartition, int64_t> committed_;
  int32_t generation_ = 0;
  int64_t next_member_number_ = 1;
  bool manual_ = false;
};

}  // namespace restoresim::fakes

#endif  // RESTORESIM_FAKES_FAKE_GROUP_H_
