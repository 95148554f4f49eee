#include "core/transport/streams_group_member.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "core/util/check.h"

namespace restoresim {
namespace {

namespace kp = kafka_protocol;
using State = StreamsMemberState;

// Kafka's wire error codes the member tells apart (Errors.java).
constexpr int16_t kCoordinatorLoadInProgress = 14;
constexpr int16_t kCoordinatorNotAvailable = 15;
constexpr int16_t kNotCoordinator = 16;
constexpr int16_t kTopicAuthorizationFailed = 29;
constexpr int16_t kUnknownMemberId = 25;
constexpr int16_t kFencedMemberEpoch = 110;

constexpr int32_t kLeaveEpoch = -1;
constexpr int32_t kLeaveStaticEpoch = -2;
constexpr int64_t kBackoffMs = 100;      // retry.backoff.ms
constexpr int64_t kBackoffMaxMs = 1000;  // retry.backoff.max.ms
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

StreamsTaskSet ToTasks(const std::vector<kp::TaskIds>& ids) {
  StreamsTaskSet out;
  for (const kp::TaskIds& t : ids) {
    for (int32_t p : t.partitions) out.insert({t.subtopology_id, p});
  }
  return out;
}

// Grouped by subtopology in id order, partitions ascending (Kafka groups them the same way).
std::vector<kp::TaskIds> ToTaskIds(const StreamsTaskSet& tasks) {
  std::vector<kp::TaskIds> out;
  for (const StreamsTaskId& t : tasks) {
    if (out.empty() || out.back().subtopology_id != t.subtopology) {
      out.push_back({.subtopology_id = t.subtopology, .partitions = {}});
    }
    out.back().partitions.push_back(t.partition);
  }
  return out;
}

// Kafka's isGroupReady: a status naming topics the group lacks, or a delayed assignment.
bool GroupReady(const std::vector<kp::StreamsGroupStatus>& statuses) {
  return std::none_of(statuses.begin(), statuses.end(), [](const kp::StreamsGroupStatus& s) {
    using Code = kp::StreamsGroupStatusCode;
    const auto code = static_cast<Code>(s.status_code);
    return code == Code::kMissingSourceTopics || code == Code::kMissingInternalTopics ||
           code == Code::kIncorrectlyPartitionedTopics || s.status_code == 5;  // ASSIGNMENT_DELAYED
  });
}

// Kafka's MemberState.getPreviousValidStates, as a table of allowed moves.
bool Allowed(State from, State to) {
  static const std::map<State, std::set<State>> kFrom = {
      {State::kJoining, {State::kFenced, State::kUnsubscribed}},
      {State::kReconciling, {State::kStable, State::kJoining, State::kAcknowledging,
                             State::kReconciling}},
      {State::kAcknowledging, {State::kReconciling}},
      {State::kStable, {State::kJoining, State::kAcknowledging, State::kReconciling}},
      {State::kFenced, {State::kJoining, State::kStable, State::kAcknowledging,
                        State::kReconciling}},
      {State::kPrepareLeaving, {State::kJoining, State::kStable, State::kReconciling,
                                State::kAcknowledging, State::kUnsubscribed}},
      {State::kLeaving, {State::kPrepareLeaving}},
      {State::kUnsubscribed, {State::kPrepareLeaving, State::kLeaving, State::kFenced}},
      {State::kFatal, {State::kJoining, State::kStable, State::kAcknowledging,
                       State::kReconciling, State::kPrepareLeaving, State::kLeaving,
                       State::kUnsubscribed}},
  };
  auto it = kFrom.find(to);
  return it != kFrom.end() && it->second.contains(from);
}

}  // namespace

std::string StreamsTaskId::ToString() const { return fmt::format("{}_{}", subtopology, partition); }

std::string_view StreamsMemberStateName(StreamsMemberState state) {
  switch (state) {
    case State::kUnsubscribed: return "UNSUBSCRIBED";
    case State::kJoining: return "JOINING";
    case State::kReconciling: return "RECONCILING";
    case State::kAcknowledging: return "ACKNOWLEDGING";
    case State::kStable: return "STABLE";
    case State::kFenced: return "FENCED";
    case State::kPrepareLeaving: return "PREPARE_LEAVING";
    case State::kLeaving: return "LEAVING";
    case State::kFatal: return "FATAL";
  }
  return "?";
}

StreamsGroupMember::StreamsGroupMember(Options options) : options_(std::move(options)) {
  RS_CHECK(!options_.group_id.empty() && !options_.member_id.empty(),
           "a streams group member needs a group id and a member id");
  RS_CHECK(options_.rebalance_timeout_ms > 0, "rebalance timeout {}",
           options_.rebalance_timeout_ms);
}

bool StreamsGroupMember::shutdown_requested_by_group() const {
  return std::any_of(statuses_.begin(), statuses_.end(), [](const kp::StreamsGroupStatus& s) {
    return s.status_code == static_cast<int8_t>(kp::StreamsGroupStatusCode::kShutdownApplication);
  });
}

// Kafka's isNotInGroup, negated: the member heartbeats.
bool StreamsGroupMember::InGroup() const {
  return state_ != State::kUnsubscribed && state_ != State::kFenced && state_ != State::kFatal;
}

// Kafka's canHandleNewAssignment.
bool StreamsGroupMember::TakesAssignments() const {
  return state_ == State::kJoining || state_ == State::kReconciling ||
         state_ == State::kAcknowledging || state_ == State::kStable;
}

void StreamsGroupMember::TransitionTo(StreamsMemberState next) {
  RS_CHECK(state_ == next || Allowed(state_, next), "streams member {}: {} -> {} is not a move",
           options_.member_id, StreamsMemberStateName(state_), StreamsMemberStateName(next));
  state_ = next;
}

void StreamsGroupMember::Join() {
  RS_CHECK(state_ == State::kUnsubscribed, "join from {}", StreamsMemberStateName(state_));
  epoch_ = 0;
  current_ = {};
  TransitionTo(State::kJoining);
}

bool StreamsGroupMember::HeartbeatDue(int64_t now_ms) const {
  if (in_flight_ || !InGroup()) return false;
  return now_ms >= NextHeartbeatAtMs();
}

int64_t StreamsGroupMember::NextHeartbeatAtMs() const {
  if (in_flight_ || !InGroup()) return kNever;
  const bool urgent = state_ == State::kJoining || state_ == State::kAcknowledging ||
                      state_ == State::kLeaving;
  // A backoff holds even an urgent heartbeat back (Kafka's canSendRequest).
  if (urgent && backoff_ms_ == 0) return 0;
  return next_heartbeat_ms_;
}

void StreamsGroupMember::HeartbeatNow() {
  if (!InGroup()) return;
  if (backoff_ms_ == 0) next_heartbeat_ms_ = 0;
  RS_CHECK(backoff_ms_ > 0 || in_flight_ || NextHeartbeatAtMs() == 0,
           "a heartbeat asked now is not due now ({})", StreamsMemberStateName(state_));
}

kp::StreamsGroupHeartbeatRequest StreamsGroupMember::BuildHeartbeat(int64_t now_ms) {
  RS_CHECK(HeartbeatDue(now_ms), "heartbeat built while none is due ({}, in flight {})",
           StreamsMemberStateName(state_), in_flight_);
  kp::StreamsGroupHeartbeatRequest req{.group_id = options_.group_id,
                                       .member_id = options_.member_id,
                                       .member_epoch = epoch_,
                                       .endpoint_information_epoch = endpoint_information_epoch_,
                                       .instance_id = options_.instance_id};
  if (state_ == State::kJoining) {
    req.topology = options_.topology;
    req.rebalance_timeout_ms = options_.rebalance_timeout_ms;
    req.process_id = options_.process_id;
    req.client_tags = options_.client_tags;
    req.active_tasks = req.standby_tasks = req.warmup_tasks = std::vector<kp::TaskIds>{};
    last_sent_.reset();
  } else if (!last_sent_.has_value() || *last_sent_ != current_) {
    req.active_tasks = ToTaskIds(current_.active);
    req.standby_tasks = ToTaskIds(current_.standby);
    req.warmup_tasks = ToTaskIds(current_.warmup);
    last_sent_ = current_;
  }
  in_flight_ = true;
  next_heartbeat_ms_ = now_ms + heartbeat_interval_ms_;
  // Kafka's onHeartbeatRequestGenerated.
  if (state_ == State::kAcknowledging) {
    TransitionTo(has_target_ && target_ != current_ ? State::kReconciling : State::kStable);
  } else if (state_ == State::kLeaving) {
    TransitionTo(State::kUnsubscribed);
    in_flight_ = false;  // the leave is sent once; its response changes nothing
  }
  return req;
}

StreamsHeartbeatResult StreamsGroupMember::OnResponse(const kp::StreamsGroupHeartbeatResponse& r,
                                                      int64_t now_ms) {
  in_flight_ = false;
  // The leave is sent once, and done whatever its answer (Kafka completes it on either).
  if (state_ == State::kUnsubscribed) return StreamsHeartbeatResult::kOk;
  if (r.error_code != 0) return OnError(r.error_code, now_ms);
  backoff_ms_ = 0;
  heartbeat_interval_ms_ = std::max(r.heartbeat_interval_ms, 0);
  next_heartbeat_ms_ = now_ms + heartbeat_interval_ms_;
  endpoint_information_epoch_ = r.endpoint_information_epoch;
  if (r.status.has_value()) statuses_ = *r.status;
  // Not a member any more (leaving, fenced, fatal), or an epoch that is no answer: nothing to
  // take (Kafka's onHeartbeatSuccess).
  if (!InGroup() || state_ == State::kLeaving || r.member_epoch < 0) {
    return StreamsHeartbeatResult::kOk;
  }
  epoch_ = r.member_epoch;
  if (!TakesAssignments()) return StreamsHeartbeatResult::kOk;
  const bool given = r.active_tasks.has_value();
  if (given != r.standby_tasks.has_value() || given != r.warmup_tasks.has_value()) {
    // Kafka's client throws on it: the three lists are all null or all set.
    TransitionTo(State::kFatal);
    return StreamsHeartbeatResult::kFatal;
  }
  const bool ready = GroupReady(statuses_);
  if (given) {
    ProcessTarget({ToTasks(*r.active_tasks), ToTasks(*r.standby_tasks),
                   ToTasks(*r.warmup_tasks), ready});
  } else if (has_target_ && ready != target_.group_ready) {
    StreamsAssignment t = target_;
    t.group_ready = ready;
    ProcessTarget(std::move(t));
  }
  return StreamsHeartbeatResult::kOk;
}

// Kafka's processAssignmentReceived.
void StreamsGroupMember::ProcessTarget(StreamsAssignment target) {
  RS_CHECK(TakesAssignments(), "a target taken while {}", StreamsMemberStateName(state_));
  target_ = std::move(target);
  has_target_ = true;
  if (target_ != current_) {
    TransitionTo(State::kReconciling);  // from ACKNOWLEDGING too: the next one acknowledges both
  } else if (state_ == State::kReconciling || state_ == State::kJoining) {
    TransitionTo(State::kStable);
  }
}

StreamsHeartbeatResult StreamsGroupMember::OnError(int16_t code, int64_t now_ms) {
  last_sent_.reset();  // everything again next time (Kafka's heartbeatState.reset)
  switch (code) {
    case kNotCoordinator:
    case kCoordinatorNotAvailable:
      backoff_ms_ = 0;  // at once, once the coordinator is found again
      next_heartbeat_ms_ = now_ms;
      return StreamsHeartbeatResult::kFindCoordinator;
    case kCoordinatorLoadInProgress:
      Backoff(now_ms);
      return StreamsHeartbeatResult::kRetry;
    case kFencedMemberEpoch:
    case kUnknownMemberId:
      Fence();
      backoff_ms_ = 0;
      next_heartbeat_ms_ = now_ms;
      return StreamsHeartbeatResult::kFenced;
    case kTopicAuthorizationFailed:
      Backoff(now_ms);
      return StreamsHeartbeatResult::kReported;
    default:
      if (state_ != State::kFatal) TransitionTo(State::kFatal);
      return StreamsHeartbeatResult::kFatal;
  }
}

void StreamsGroupMember::OnRequestFailed(int64_t now_ms) {
  RS_CHECK(in_flight_, "a request failed with none in flight");
  in_flight_ = false;
  last_sent_.reset();
  Backoff(now_ms);
}

void StreamsGroupMember::Backoff(int64_t now_ms) {
  backoff_ms_ = backoff_ms_ == 0 ? kBackoffMs : std::min(backoff_ms_ * 2, kBackoffMaxMs);
  next_heartbeat_ms_ = now_ms + backoff_ms_;
}

// Kafka's onFenced.
void StreamsGroupMember::Fence() {
  if (state_ == State::kPrepareLeaving || state_ == State::kLeaving) {
    epoch_ = kLeaveEpoch;
    current_ = target_ = {};
    has_target_ = false;
    TransitionTo(State::kUnsubscribed);
    return;
  }
  if (state_ == State::kUnsubscribed || state_ == State::kFatal) return;
  TransitionTo(State::kFenced);
  epoch_ = 0;
  reconciling_.reset();  // a reconciliation running now is dropped when it finishes
}

std::optional<StreamsReconciliation> StreamsGroupMember::StartReconciliation() {
  if (state_ != State::kReconciling || reconciliation_running_ || target_ == current_) {
    return std::nullopt;
  }
  reconciliation_running_ = true;
  reconciling_ = target_;
  StreamsReconciliation r{.revoke = {}, .assign = target_};
  std::set_difference(current_.active.begin(), current_.active.end(), target_.active.begin(),
                      target_.active.end(), std::inserter(r.revoke, r.revoke.end()));
  return r;
}

void StreamsGroupMember::FinishReconciliation(bool ok) {
  RS_CHECK(reconciliation_running_, "a reconciliation finished that was not started");
  reconciliation_running_ = false;
  std::optional<StreamsAssignment> applied = std::exchange(reconciling_, std::nullopt);
  // Dropped: it failed, or the member left RECONCILING meanwhile, or was fenced and rejoined
  // (Kafka's maybeAbortReconciliation).
  if (!ok || !applied.has_value() || state_ != State::kReconciling) return;
  current_ = *std::move(applied);
  TransitionTo(State::kAcknowledging);
}

void StreamsGroupMember::LostHandled() {
  RS_CHECK(state_ == State::kFenced, "lost handled while {}", StreamsMemberStateName(state_));
  current_ = target_ = {};
  has_target_ = false;
  last_sent_.reset();
  reconciling_.reset();
  TransitionTo(State::kJoining);
}

void StreamsGroupMember::Leave() {
  if (state_ == State::kFenced) {  // Kafka's leaveGroup from FENCED: out at once
    current_ = target_ = {};
    has_target_ = false;
    TransitionTo(State::kUnsubscribed);
    return;
  }
  if (!InGroup() || state_ == State::kLeaving || state_ == State::kPrepareLeaving) return;
  TransitionTo(State::kPrepareLeaving);
}

StreamsTaskSet StreamsGroupMember::LeaveRevocation() const {
  RS_CHECK(state_ == State::kPrepareLeaving, "leave revocation while {}",
           StreamsMemberStateName(state_));
  return current_.active;
}

void StreamsGroupMember::LeaveRevoked() {
  RS_CHECK(state_ == State::kPrepareLeaving, "leave revoked while {}",
           StreamsMemberStateName(state_));
  current_ = target_ = {};
  has_target_ = false;
  reconciling_.reset();
  epoch_ = options_.instance_id.has_value() ? kLeaveStaticEpoch : kLeaveEpoch;
  TransitionTo(State::kLeaving);
}

}  // namespace restoresim
