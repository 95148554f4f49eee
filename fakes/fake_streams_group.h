// StreamsGroupCoordinator: one streams group (KIP-1071) of the fake broker, the coordinator's
// side of StreamsGroupHeartbeat. Kafka counterparts (4.4, group-coordinator): StreamsGroup and
// StreamsGroupMember (state), GroupMetadataManager.streamsGroupHeartbeat and streamsGroupLeave
// (the request), TargetAssignmentBuilder with the StickyTaskAssignor (fake_streams_assignor.h),
// CurrentAssignmentBuilder (reconciliation) and StreamsGroup.validateOffsetCommit. It takes and
// returns the codec's own structs (kafka_protocol_messages.h); no bytes.
//
// Epochs, as Kafka's: every change of membership (a join, a leave, a session that expired, a
// member's process id changing) bumps the group epoch; a heartbeat that sees the group epoch
// ahead of the target assignment's epoch recomputes the target with the sticky assignor
// (num_standby_replicas from the group's settings). Each member then moves toward its target at
// its own heartbeats (CurrentAssignmentBuilder): the active and standby tasks it must give up
// are asked back first (state UNREVOKED_TASKS: the member keeps its epoch, and the response's
// task lists leave them out), and until the member's heartbeat reports them no longer owned it
// gets nothing new; then it moves to the target's epoch and is given every targeted task that
// no other member still holds (an active task held by another member, or a standby held by
// another member of its process, is withheld: UNRELEASED_TASKS, given at a later heartbeat once
// released). An active task demoted to a standby on the same member is given as a standby at
// once (a recycle), and a standby promoted to active stays a standby until the active is given.
// The response carries the task lists when the member joins or its assignment changed.
//
// Joining (epoch 0) carries the topology: the first one sets the group's; an older topology
// epoch takes the group's (Kafka marks the member STALE_TOPOLOGY); any other difference is
// INVALID_REQUEST "Topology updates are not supported yet." (Kafka 4.4's maybeUpdateTopology).
// A subtopology's task count is the largest partition count of its source topics; a source
// topic the broker lacks gives the status MISSING_SOURCE_TOPICS and no tasks. A changelog topic
// the broker lacks is created (Kafka's InternalTopicManager, with the subtopology's task count),
// and the heartbeat that found it missing gets MISSING_INTERNAL_TOPICS and no tasks, as Kafka's
// does while it creates them; the topology becoming ready (or not) bumps the group epoch.
// Leaving: epoch -1 (or -2, a static member: the fake has none and treats it as -1) removes the
// member; its response echoes the epoch. Fencing: a member id the group does not know is
// UNKNOWN_MEMBER_ID; an epoch ahead of the member's, or behind it other than the previous
// epoch with owned tasks all still assigned (a lost response), is FENCED_MEMBER_EPOCH; neither
// changes the group. A member that sends no heartbeat for the session timeout is removed at the
// next call that looks at the clock (ExpireSessions: every heartbeat and commit runs it first),
// and its tasks go to the others.
//
// Offset commits (validateOffsetCommit): an epoch below 0 with no member is taken; an unknown
// member is UNKNOWN_MEMBER_ID; the member's epoch is taken; a newer one is STALE_MEMBER_EPOCH;
// an older one only for active tasks (assigned or pending revocation) given at or before it.
//
// Left out (documented in docs/DESIGN.md): warm-up tasks and the acceptable recovery lag, task
// offsets, static membership, client tags, endpoints, rack ids, the initial rebalance delay
// (Kafka's default 3 s; the test cluster sets 0), repartition topics, group size limits,
// the assignor's tie-breaks (by id here, by hash order in Kafka).
//
// Thread-safety: not thread-safe; the broker calls it under its mutex.
#ifndef RESTORESIM_FAKES_FAKE_STREAMS_GROUP_H_
#define RESTORESIM_FAKES_FAKE_STREAMS_GROUP_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/transport/kafka_protocol_messages.h"
#include "core/transport/streams_group_member.h"
#include "core/transport/transport.h"
#include "fakes/fake_streams_assignor.h"

namespace restoresim::fakes {

// The broker's streams-group settings (Kafka's group.streams.*), one set for every group.
struct StreamsGroupSettings {
  int32_t heartbeat_interval_ms = 5000;  // group.streams.heartbeat.interval.ms
  int32_t session_timeout_ms = 45000;    // group.streams.session.timeout.ms
  int32_t num_standby_replicas = 0;      // group.streams.num.standby.replicas
};

// Kafka's wire error codes the coordinator answers with (Errors.java).
namespace streams_errors {
inline constexpr int16_t kCoordinatorLoadInProgress = 14;
inline constexpr int16_t kCoordinatorNotAvailable = 15;
inline constexpr int16_t kNotCoordinator = 16;
inline constexpr int16_t kUnknownMemberId = 25;
inline constexpr int16_t kInvalidRequest = 42;
inline constexpr int16_t kFencedMemberEpoch = 110;
inline constexpr int16_t kStaleMemberEpoch = 113;
}  // namespace streams_errors

class StreamsGroupCoordinator {
 public:
  // A bound on the members (and so on the loops over them); past it a join stops the run.
  // Kafka refuses them with GROUP_MAX_SIZE_REACHED past group.streams.max.size.
  static constexpr size_t kMembersMax = 1000;

  // `partition_count` answers how many partitions a topic has (0: unknown).
  using PartitionCounter = std::function<int32_t(const std::string& topic)>;
  // `create_topic` creates an internal (changelog) topic the broker lacks.
  using TopicCreator = std::function<void(const std::string& topic, int32_t partitions)>;
  StreamsGroupCoordinator(std::string group_id, StreamsGroupSettings settings,
                          PartitionCounter partition_count, TopicCreator create_topic);

  // One heartbeat at `now_ms` on the broker's clock (sessions that expired are removed first).
  kafka_protocol::StreamsGroupHeartbeatResponse Heartbeat(
      const kafka_protocol::StreamsGroupHeartbeatRequest& request, int64_t now_ms);
  // Removes the members whose session timed out by `now_ms`; returns their ids.
  std::vector<std::string> ExpireSessions(int64_t now_ms);
  // Removes `member_id` now, as its session timing out would (a scripted fencing); false for a
  // member the group does not have.
  bool Expire(const std::string& member_id);
  // An OffsetCommit's check: 0, or UNKNOWN_MEMBER_ID / STALE_MEMBER_EPOCH.
  int16_t ValidateOffsetCommit(const std::string& member_id, int32_t member_epoch,
                               const std::vector<TopicPartition>& partitions) const;

  // What a member is, as StreamsGroupDescribe would show it.
  struct MemberView {
    int32_t epoch = 0;
    std::string process_id;
    std::string state;  // STABLE, UNREVOKED_TASKS, UNRELEASED_TASKS
    StreamsTaskSet active, standby;  // assigned (given)
    StreamsTaskSet revoking_active, revoking_standby;
    StreamsTargetTasks target;
  };
  std::optional<MemberView> Member(const std::string& member_id) const;
  std::vector<std::string> member_ids() const;
  int32_t group_epoch() const { return group_epoch_; }
  int32_t target_epoch() const { return target_epoch_; }
  // Every member STABLE at the target epoch, holding its whole target.
  bool Settled() const;
  bool empty() const { return members_.empty(); }

 private:
  enum class State { kStable, kUnrevokedTasks, kUnreleasedTasks };
  // Kafka's TasksTupleWithEpochs without warm-ups: actives carry the epoch they were given at.
  struct Tasks {
    std::map<StreamsTaskId, int32_t> active;
    StreamsTaskSet standby;
    bool empty() const { return active.empty() && standby.empty(); }
    bool operator==(const Tasks&) const = default;
  };
  struct MemberState {
    std::string process_id;
    int32_t epoch = 0;
    int32_t previous_epoch = -1;
    State state = State::kStable;
    Tasks assigned;
    Tasks revoking;
    int64_t session_deadline_ms = 0;
  };
  using Owned = std::optional<StreamsAssignment>;  // the request's task lists (none: unsent)

  kafka_protocol::StreamsGroupHeartbeatResponse Error(int16_t code, std::string message) const;
  kafka_protocol::StreamsGroupHeartbeatResponse Leave(
      const kafka_protocol::StreamsGroupHeartbeatRequest& request);
  // The member a heartbeat is for, created on a join; an error code otherwise.
  // *recompute: the membership changed (a join, a new process id).
  int16_t FindOrJoin(const kafka_protocol::StreamsGroupHeartbeatRequest& request,
                     const Owned& owned, bool* recompute, std::string* error);
  int16_t CheckTopology(const std::optional<kafka_protocol::Topology>& topology,
                        std::string* error) const;
  void RemoveMember(const std::string& member_id);
  // The tasks of the group's topology (none while not ready), and the statuses it gives
  // (missing source or internal topics; the internal ones are created).
  StreamsAssignorTopology ConfiguredTopology(
      std::vector<kafka_protocol::StreamsGroupStatus>* statuses, bool* ready);
  // Bumps the group epoch once if `recompute` or the topology's readiness changed (Kafka's one
  // bump per heartbeat), then recomputes the target if the group epoch is ahead of it.
  void MaybeComputeTarget(bool recompute,
                          std::vector<kafka_protocol::StreamsGroupStatus>* statuses);
  // CurrentAssignmentBuilder.build, for `member_id`.
  void Reconcile(const std::string& member_id, const Owned& owned);
  void NextAssignment(const std::string& member_id, int32_t epoch, const Owned& owned);
  bool HeldBackActive(const std::string& member_id, const StreamsTaskId& task) const;
  bool HeldBackStandby(const std::string& member_id, const StreamsTaskId& task) const;
  static bool NotReleased(const Tasks& revoking, const Owned& owned);
  // RS_CHECKs what every reconciliation keeps: an active task is held (assigned or being
  // revoked) by one member at most, and no member is past the target's epoch.
  void CheckInvariants() const;

  const std::string group_id_;
  const StreamsGroupSettings settings_;
  PartitionCounter partition_count_;
  TopicCreator create_topic_;
  std::optional<kafka_protocol::Topology> topology_;
  bool topology_ready_ = false;  // as of the last heartbeat (Kafka's validated topology epoch)
  std::map<std::string, MemberState> members_;
  std::map<std::string, StreamsTargetTasks> target_;
  int32_t group_epoch_ = 0;
  int32_t target_epoch_ = 0;
};

}  // namespace restoresim::fakes

#endif  // RESTORESIM_FAKES_FAKE_STREAMS_GROUP_H_
