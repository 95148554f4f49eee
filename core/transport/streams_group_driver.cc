#include "core/transport/streams_group_driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "core/util/check.h"

namespace restoresim {

namespace kp = kafka_protocol;

kp::Topology StreamsGroupDriver::CountTopology(const std::string& source_topic,
                                               const std::vector<std::string>& changelogs) {
  kp::Subtopology subtopology{.subtopology_id = std::string(kSubtopology),
                              .source_topics = {source_topic}};
  for (const std::string& changelog : changelogs) {
    // As Kafka Streams (StreamThread's StreamsRebalanceData): no partition count (the broker
    // refuses one for a changelog: STREAMS_INVALID_TOPOLOGY), replication.factor -1 (the
    // broker's default), and the configs of an unwindowed, unversioned store's changelog
    // (UnwindowedUnversionedChangelogTopicConfig over InternalTopicConfig's defaults), sorted by
    // key as Kafka's heartbeat request manager sends them. The broker refuses a member whose
    // topology is not equal, field for field and in order, to the group's at the same epoch
    // (INVALID_REQUEST, "Topology updates are not supported yet"): found by the mixed
    // application test (kafka_streams_runtime_test), where restoresim joined a group Kafka
    // Streams had described first.
    subtopology.state_changelog_topics.push_back(kp::TopicInfo{
        .name = changelog,
        .replication_factor = -1,
        .topic_configs = {{"cleanup.policy", "compact"},
                          {"message.timestamp.type", "CreateTime"}}});
  }
  return kp::Topology{.epoch = 0, .subtopologies = {subtopology}};
}

void StreamsGroupDriver::Start(StreamsGroupMember::Options options, std::string source_topic,
                               RebalanceListener* listener) {
  RS_CHECK(member_ == nullptr, "a streams-group driver started twice");
  member_ = std::make_unique<StreamsGroupMember>(std::move(options));
  source_topic_ = std::move(source_topic);
  listener_ = listener;
  member_->Join();
  RS_CHECK(member_->state() == StreamsMemberState::kJoining, "joined into {}",
           StreamsMemberStateName(member_->state()));
}

int64_t StreamsGroupDriver::NextHeartbeatAtMs() const {
  return member_ == nullptr ? std::numeric_limits<int64_t>::max() : member_->NextHeartbeatAtMs();
}

absl::Status StreamsGroupDriver::Drive() {
  RS_CHECK(member_ != nullptr && !in_callback_, "a drive before Start or from a callback");
  if (!fatal_.ok()) return fatal_;
  for (int sent = 0; sent < kHeartbeatsPerDriveMax && !close_requested_; ++sent) {
    if (!member_->HeartbeatDue(host_.NowMs())) break;
    bool go_on = true;
    if (absl::Status s = SendHeartbeat(&go_on); !s.ok()) return s;
    if (member_->lost_pending()) HandleLost();
    if (absl::Status s = Reconcile(); !s.ok()) return s;
    if (!go_on) break;  // lost or moved: found again at the next poll
  }
  return ActOnStatuses();
}

absl::Status StreamsGroupDriver::ActOnStatuses() {
  using Code = kp::StreamsGroupStatusCode;
  std::optional<std::string> missing;
  for (const kp::StreamsGroupStatus& s : member_->statuses()) {
    if (s.status_code == static_cast<int8_t>(Code::kShutdownApplication)) {
      fatal_ = absl::AbortedError(fmt::format(
          "the streams group asked every member to shut down (SHUTDOWN_APPLICATION): {}",
          s.status_detail));
      return fatal_;
    }
    if (s.status_code == static_cast<int8_t>(Code::kIncorrectlyPartitionedTopics)) {
      return absl::InvalidArgumentError(
          fmt::format("the streams group's topics are incorrectly partitioned: {}",
                      s.status_detail));
    }
    if (s.status_code == static_cast<int8_t>(Code::kMissingSourceTopics)) {
      missing = s.status_detail;
    }
  }
  if (!missing.has_value()) {
    missing_topics_since_ms_.reset();
    return absl::OkStatus();
  }
  // Kafka: two heartbeat intervals, so that at least one more heartbeat is sent before failing.
  const int64_t now_ms = host_.NowMs();
  const int64_t timeout_ms = 2 * int64_t{member_->heartbeat_interval_ms()};
  if (!missing_topics_since_ms_.has_value()) {
    missing_topics_since_ms_ = now_ms;
    host_.Say(fmt::format("streams-group member {}: source topics missing ({}); failing in {} ms "
                          "unless they appear", member_->member_id(), *missing, timeout_ms));
  }
  RS_CHECK(now_ms >= *missing_topics_since_ms_, "the clock went back");
  if (now_ms - *missing_topics_since_ms_ < timeout_ms) return absl::OkStatus();
  return absl::NotFoundError(fmt::format(
      "the streams group's source topics are missing for {} ms: {}",
      now_ms - *missing_topics_since_ms_, *missing));
}

absl::Status StreamsGroupDriver::SendHeartbeat(bool* go_on) {
  RS_CHECK(member_->HeartbeatDue(host_.NowMs()), "a heartbeat sent before it was due");
  // Built first, so that a connection that cannot be made fails this request (retried after
  // the member's backoff, every field again). Found by
  // KafkaFailureTest.AStreamsMemberFollowsItsCoordinatorWhenThatBrokerIsKilled: a failed connect
  // reported a failed request while none was in flight (the member's check stopped the process).
  const kp::StreamsGroupHeartbeatRequest request = member_->BuildHeartbeat(host_.NowMs());
  absl::StatusOr<kp::StreamsGroupHeartbeatResponse> response = host_.SendHeartbeat(request);
  if (!response.ok()) {
    // No connection, a lost one, or a response that does not decode: the host reconnects, after
    // the member's backoff; the session timeout fences a member that stays away, and the next
    // heartbeat then learns it. Said once per run of failures.
    if (!heartbeat_failing_) {
      host_.Say(fmt::format("streams-group member {}: heartbeat failed, retrying: {}",
                            member_->member_id(), response.status().ToString()));
    }
    heartbeat_failing_ = true;
    member_->OnRequestFailed(host_.NowMs());
    *go_on = false;
    return absl::OkStatus();
  }
  heartbeat_failing_ = false;
  switch (member_->OnResponse(*response, host_.NowMs())) {
    case StreamsHeartbeatResult::kFindCoordinator:
      host_.CoordinatorMoved();  // FindCoordinator again before the next one
      *go_on = false;
      return absl::OkStatus();
    case StreamsHeartbeatResult::kReported:
      host_.Say(fmt::format("streams-group member {}: {}", member_->member_id(),
                            host_.ErrorStatus(response->error_code, response->error_message,
                                              "heartbeat").ToString()));
      return absl::OkStatus();
    case StreamsHeartbeatResult::kFatal:
      RS_CHECK(member_->state() == StreamsMemberState::kFatal, "a fatal result, member {}",
               StreamsMemberStateName(member_->state()));
      fatal_ = FatalStatus(*response);
      return fatal_;
    default:
      return absl::OkStatus();  // kOk, kRetry (the member's backoff), kFenced (lost_pending)
  }
}

// Every later Poll and CommitSync fails with it: a FATAL member sends no heartbeat again, so it
// must not go on fetching and processing tasks the broker will give to others. Never retryable
// (the stream thread would wait on it), and an error even when the response had no error code
// (its task lists neither all null nor all set, which Kafka's client refuses too). Found by
// review on 2026-12-06: a fatal code the table calls retryable (REQUEST_TIMED_OUT) or none
// failed no poll at all, and the member went on as a zombie.
absl::Status StreamsGroupDriver::FatalStatus(
    const kp::StreamsGroupHeartbeatResponse& response) const {
  const absl::Status s = host_.ErrorStatus(response.error_code, response.error_message,
                                           "streams-group heartbeat of " + member_->member_id());
  if (s.ok()) {
    return absl::DataLossError(
        fmt::format("streams-group heartbeat of {}: an inconsistent response (epoch {}): the "
                    "member is fatal", member_->member_id(), response.member_epoch));
  }
  if (!IsRetryable(s)) return s;
  return absl::InternalError(fmt::format("the member is fatal: {}", s.ToString()));
}

void StreamsGroupDriver::HandleLost() {
  RS_CHECK(member_->lost_pending(), "lost handled while not fenced");
  const std::vector<TopicPartition> lost = host_.Fetching();
  if (listener_ != nullptr && !lost.empty()) {
    in_callback_ = true;
    listener_->OnPartitionsLost(lost);
    in_callback_ = false;
  }
  host_.RemoveFetching(lost);
  member_->LostHandled();
  assigned_since_join_ = false;
  RS_CHECK(host_.Fetching().empty(), "partitions left after a loss");
}

absl::StatusOr<std::vector<TopicPartition>> StreamsGroupDriver::InputsOf(
    const StreamsTaskSet& tasks) const {
  std::vector<TopicPartition> out;
  for (const StreamsTaskId& task : tasks) {
    if (task.subtopology != kSubtopology || task.partition < 0) {
      return absl::DataLossError(fmt::format(
          "the streams group assigned task {}, which the member's topology (subtopology {} "
          "only) does not have", task.ToString(), kSubtopology));
    }
    out.push_back(TopicPartition{source_topic_, task.partition});
  }
  return out;
}

absl::Status StreamsGroupDriver::Reconcile() {
  std::optional<StreamsReconciliation> r = member_->StartReconciliation();
  if (!r.has_value()) {
    MaybeAssignNothing();
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<TopicPartition>> revoked = InputsOf(r->revoke);
  absl::StatusOr<std::vector<TopicPartition>> active = InputsOf(r->assign.active);
  StreamsTaskSet standby_tasks = r->assign.standby;
  standby_tasks.insert(r->assign.warmup.begin(), r->assign.warmup.end());  // Kafka: standbys
  absl::StatusOr<std::vector<TopicPartition>> standby = InputsOf(standby_tasks);
  for (const absl::Status& s : {revoked.status(), active.status(), standby.status()}) {
    if (!s.ok()) {
      member_->FinishReconciliation(false);
      return s;
    }
  }
  std::erase_if(*revoked, [&](const TopicPartition& tp) { return !host_.IsFetching(tp); });
  in_callback_ = true;
  if (listener_ != nullptr && !revoked->empty()) listener_->OnPartitionsRevoked(*revoked);
  host_.RemoveFetching(*revoked);  // after the callback: it may commit them
  std::vector<TopicPartition> gained;
  for (const TopicPartition& tp : *active) {
    if (!host_.IsFetching(tp)) gained.push_back(tp);
  }
  host_.AddFetching(gained);  // each starts at the group's committed offset
  RS_CHECK(host_.Fetching() == *active, "the assignment is not the target's actives");
  // A Close from the revocation callback: no further callback (the port's Close runs none).
  if (listener_ != nullptr && !close_requested_) {
    listener_->OnPartitionsAssigned(
        restoresim::Assignment{.partitions = *active, .standby_partitions = *standby});
  }
  in_callback_ = false;
  assigned_since_join_ = true;
  member_->FinishReconciliation(true);
  return absl::OkStatus();
}

// The port promises OnPartitionsAssigned for every generation the member takes part in, even an
// empty one; the member reconciles only a target that differs from what it holds, so a join (or
// a rejoin after a fencing) given nothing would otherwise call nothing, and a stream thread
// without tasks would stay STARTING (its standbys from before a fencing kept). Read in review on
// 2026-12-06; on Kafka 4.4 a first join is always reconciled (its first response says
// ASSIGNMENT_DELAYED), so the path left is a rejoin after a fencing given nothing.
void StreamsGroupDriver::MaybeAssignNothing() {
  if (assigned_since_join_ || member_->state() != StreamsMemberState::kStable) return;
  const StreamsAssignment& held = member_->current();
  RS_CHECK(held.active.empty() && held.standby.empty() && held.warmup.empty(),
           "a stable member with tasks it was never assigned: {} actives", held.active.size());
  assigned_since_join_ = true;
  if (listener_ == nullptr) return;
  in_callback_ = true;
  listener_->OnPartitionsAssigned(restoresim::Assignment{});
  in_callback_ = false;
}

ConsumerGroupMetadata StreamsGroupDriver::Metadata(const std::string& group, bool closed) const {
  if (member_ == nullptr || closed) return ConsumerGroupMetadata{group, -1, "", ""};
  return ConsumerGroupMetadata{group, member_->epoch(), member_->member_id(), ""};
}

std::string StreamsGroupDriver::MemberId(const std::string& fallback) const {
  return member_ == nullptr ? fallback : member_->member_id();
}

absl::Status StreamsGroupDriver::UserDataRefused(size_t bytes) {
  return absl::UnimplementedError(fmt::format(
      "set subscription user data ({} bytes): a streams group's member sends none; the "
      "broker assigns tasks", bytes));
}

void StreamsGroupDriver::HeartbeatNow() {
  if (member_ == nullptr) return;
  member_->HeartbeatNow();
}

void StreamsGroupDriver::PrepareLeave() {
  if (member_ == nullptr) return;
  member_->Leave();
  if (member_->state() == StreamsMemberState::kPrepareLeaving) member_->LeaveRevoked();
  RS_CHECK(member_->state() == StreamsMemberState::kLeaving ||
               member_->state() == StreamsMemberState::kUnsubscribed ||
               member_->state() == StreamsMemberState::kFatal,
           "a leave ends {}", StreamsMemberStateName(member_->state()));
}

}  // namespace restoresim
