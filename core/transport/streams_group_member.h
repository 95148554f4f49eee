// StreamsGroupMember: a member's side of a streams group (KIP-1071, issue 26) as Kafka's client
// keeps it. Kafka counterparts: StreamsMembershipManager (states, epochs, reconciliation) and the
// request side of StreamsGroupHeartbeatRequestManager (which fields a heartbeat carries, when it
// is due, which errors fence, which are fatal, which are retried). Pure: it builds heartbeat
// requests and takes their responses; the caller sends them (kafka/ has the connection) and runs
// what a reconciliation asks for (revoke, then assign) on the thread that owns the tasks.
//
// States, as Kafka's MemberState:
//
//   UNSUBSCRIBED --Join--> JOINING --response--> RECONCILING or STABLE
//   RECONCILING --StartReconciliation/FinishReconciliation--> ACKNOWLEDGING
//   ACKNOWLEDGING --heartbeat sent--> STABLE (or RECONCILING: a newer target arrived meanwhile)
//   STABLE --response with a new target--> RECONCILING
//   any in group --FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID--> FENCED --LostHandled--> JOINING
//   any in group --Leave--> PREPARE_LEAVING --LeaveRevoked--> LEAVING --heartbeat (epoch -1)-->
//   UNSUBSCRIBED
//   any --fatal error--> FATAL (no heartbeat again)
//
// A reconciliation is Kafka's: the active tasks owned and no longer targeted are revoked first
// (the caller commits and closes or suspends them), then the whole target is handed over (actives,
// standbys, warm-ups); only then does the member acknowledge it, by reporting it as owned in the
// next heartbeat, sent at once. The broker gives a member a task another member still owns only
// after that one acknowledged its revocation, so a member never waits on another.
//
// Heartbeats: at the interval the last response gave; at once while JOINING, ACKNOWLEDGING or
// LEAVING; after a retriable failure not before a backoff (100 ms doubling to 1 s, Kafka's
// retry.backoff.ms and retry.backoff.max.ms, without their jitter). A join carries the topology,
// the rebalance timeout, the process id, client tags and empty task lists; later heartbeats carry
// the task lists only when what was reconciled changed since the last one sent, and all of them
// again after any failure (Kafka's LastSentFields). Task offsets are not sent (Kafka 4.4's client
// does not send them either).
//
// Errors of a response (Kafka's onErrorResponse), as StreamsHeartbeatResult: NOT_COORDINATOR and
// COORDINATOR_NOT_AVAILABLE ask the caller to find the coordinator again and retry at once;
// COORDINATOR_LOAD_IN_PROGRESS retries after the backoff; FENCED_MEMBER_EPOCH and
// UNKNOWN_MEMBER_ID fence (every task lost, then a rejoin at epoch 0 with the same member id);
// TOPIC_AUTHORIZATION_FAILED is reported and the member stays as it is; every other error is
// fatal (the member is FATAL). The member only classifies: the caller turns a code into a status
// through the one error table (rdkafka::KafkaErrorToStatus, core/transport/rdkafka/).
//
// Thread-safety: none; one owner (the stream thread that polls).
#ifndef RESTORESIM_CORE_TRANSPORT_STREAMS_GROUP_MEMBER_H_
#define RESTORESIM_CORE_TRANSPORT_STREAMS_GROUP_MEMBER_H_

#include <compare>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/transport/kafka_protocol_messages.h"

namespace restoresim {

// A task as a streams group names it: its subtopology's id and its partition.
struct StreamsTaskId {
  std::string subtopology;
  int32_t partition = 0;
  auto operator<=>(const StreamsTaskId&) const = default;
  std::string ToString() const;
};
using StreamsTaskSet = std::set<StreamsTaskId>;

struct StreamsAssignment {
  StreamsTaskSet active;
  StreamsTaskSet standby;
  StreamsTaskSet warmup;
  // False while a status says the group cannot run yet (missing source or internal topics,
  // incorrectly partitioned topics, an assignment delayed): Kafka Streams then processes nothing.
  bool group_ready = true;
  bool operator==(const StreamsAssignment&) const = default;
};

enum class StreamsMemberState {
  kUnsubscribed,
  kJoining,
  kReconciling,
  kAcknowledging,
  kStable,
  kFenced,
  kPrepareLeaving,
  kLeaving,
  kFatal,
};
std::string_view StreamsMemberStateName(StreamsMemberState state);

// What a heartbeat's response asks of the caller.
enum class StreamsHeartbeatResult {
  kOk,
  kFindCoordinator,  // NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE: find it again, then retry
  kRetry,            // COORDINATOR_LOAD_IN_PROGRESS: retry after the backoff
  kFenced,           // FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID: tasks lost (lost_pending)
  kReported,         // TOPIC_AUTHORIZATION_FAILED: tell the user; the member goes on
  kFatal,            // anything else: the member is FATAL
};

// What the caller runs for one reconciliation, in this order: the active tasks to revoke (Kafka
// Streams' onTasksRevoked: commit, then close or suspend them), then the whole new assignment
// (onTasksAssigned).
struct StreamsReconciliation {
  StreamsTaskSet revoke;
  StreamsAssignment assign;
};

class StreamsGroupMember {
 public:
  struct Options {
    std::string group_id;
    std::string member_id;   // unique in the group, kept across rejoins (Kafka's: a UUID)
    std::string process_id;  // Kafka Streams' process id (its state directory's)
    std::optional<std::string> instance_id;  // a static member
    int32_t rebalance_timeout_ms = 300'000;  // Kafka: max.poll.interval.ms
    kafka_protocol::Topology topology;
    std::vector<kafka_protocol::KeyValue> client_tags;
  };
  explicit StreamsGroupMember(Options options);

  StreamsMemberState state() const { return state_; }
  int32_t epoch() const { return epoch_; }
  // The interval the last response gave (0 before the first).
  int32_t heartbeat_interval_ms() const { return heartbeat_interval_ms_; }
  const std::string& member_id() const { return options_.member_id; }
  // What the member has reconciled (and reports as owned).
  const StreamsAssignment& current() const { return current_; }
  // The statuses of the last successful response (missing topics, shutdown application, ...).
  const std::vector<kafka_protocol::StreamsGroupStatus>& statuses() const { return statuses_; }
  // A status of the last response asked every member to shut down (SHUTDOWN_APPLICATION).
  bool shutdown_requested_by_group() const;

  // UNSUBSCRIBED -> JOINING: the next heartbeat joins (epoch 0, with the topology).
  void Join();
  // Whether a heartbeat is to be sent at `now_ms` (none while one is in flight).
  bool HeartbeatDue(int64_t now_ms) const;
  // When the next heartbeat is due (INT64_MAX: none until something changes).
  int64_t NextHeartbeatAtMs() const;
  // The next heartbeat is due at once (a backoff still holds it back): the caller suspects the
  // group moved on without it (a commit refused for its epoch or membership) and learns where
  // it stands from the response instead of after its interval.
  void HeartbeatNow();
  // The heartbeat to send now. REQUIRES: HeartbeatDue(now_ms). Moves ACKNOWLEDGING on (to STABLE,
  // or to RECONCILING when a newer target is waiting) and LEAVING to UNSUBSCRIBED.
  kafka_protocol::StreamsGroupHeartbeatRequest BuildHeartbeat(int64_t now_ms);
  // The response to the heartbeat last built (see the header's error list).
  StreamsHeartbeatResult OnResponse(const kafka_protocol::StreamsGroupHeartbeatResponse& response,
                                    int64_t now_ms);
  // The request failed without a response (connection lost, timeout): retried after the backoff,
  // every field sent again.
  void OnRequestFailed(int64_t now_ms);

  // A reconciliation to run, if the member is RECONCILING and none is running.
  std::optional<StreamsReconciliation> StartReconciliation();
  // The callbacks of the reconciliation started last returned; `ok` false: one failed, nothing
  // is acknowledged and the next StartReconciliation tries again. A reconciliation the member
  // left RECONCILING during (fenced, leaving) is dropped.
  void FinishReconciliation(bool ok);

  // FENCED: every task is lost (Kafka Streams' onAllTasksLost: closed dirty). The caller runs
  // that, then LostHandled rejoins.
  bool lost_pending() const { return state_ == StreamsMemberState::kFenced; }
  void LostHandled();

  // Leaves the group: PREPARE_LEAVING; the caller revokes LeaveRevocation() (the actives it owns),
  // then LeaveRevoked() makes the next heartbeat the leave (epoch -1, or -2 for a static member).
  void Leave();
  StreamsTaskSet LeaveRevocation() const;
  void LeaveRevoked();

 private:
  void TransitionTo(StreamsMemberState next);
  void ProcessTarget(StreamsAssignment target);
  StreamsHeartbeatResult OnError(int16_t error_code, int64_t now_ms);
  void Fence();
  void Backoff(int64_t now_ms);
  bool InGroup() const;
  bool TakesAssignments() const;

  const Options options_;
  StreamsMemberState state_ = StreamsMemberState::kUnsubscribed;
  int32_t epoch_ = 0;
  int32_t endpoint_information_epoch_ = -1;
  int32_t heartbeat_interval_ms_ = 0;
  StreamsAssignment target_;
  StreamsAssignment current_;
  bool has_target_ = false;
  std::optional<StreamsAssignment> last_sent_;  // the task lists last sent (Kafka's LastSentFields)
  std::optional<StreamsAssignment> reconciling_;  // what the running one applies (none: dropped)
  bool reconciliation_running_ = false;
  bool in_flight_ = false;
  int64_t next_heartbeat_ms_ = 0;
  int64_t backoff_ms_ = 0;  // 0: no failure since the last success
  std::vector<kafka_protocol::StreamsGroupStatus> statuses_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_TRANSPORT_STREAMS_GROUP_MEMBER_H_
