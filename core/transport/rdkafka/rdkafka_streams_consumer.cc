// The main consumer of a streams group (KIP-1071, issue 26): the member's heartbeats and
// reconciliations run inside Poll on the polling thread, over the project's own connection to
// the group's coordinator; librdkafka only fetches, from partitions assigned by hand. Declared
// (with what differs from the classic consumer) in rdkafka_clients.h.
#include <fmt/format.h>

#include <algorithm>

#include "core/port/random.h"
#include "core/transport/rdkafka/rdkafka_clients.h"
#include "core/transport/rdkafka/rdkafka_errors.h"
#include "core/util/check.h"

namespace restoresim::rdkafka {

namespace kp = restoresim::kafka_protocol;

namespace {

// The only subtopology the member describes: the count topology's (transport.h).
constexpr std::string_view kSubtopology = "0";
// Heartbeats one Poll may send back to back: a join, its reconciliation's acknowledgement, and
// a newer target that arrived meanwhile with its own.
constexpr int kHeartbeatsPerPollMax = 4;

// Kafka's member ids are UUIDs made at start-up; here the client id and 64 bits from the OS
// (real threads only: this adapter never runs in the simulator).
std::string NewMemberId(const std::string& client_id) {
  OsSeededRandom random;
  return fmt::format("{}-{:016x}", client_id.empty() ? "member" : client_id, random.Next64());
}

// What Kafka Streams describes for the changelog of an unwindowed, unversioned store: its
// UnwindowedUnversionedChangelogTopicConfig (compaction) over InternalTopicConfig's default
// overrides (message.timestamp.type), sorted by key as Kafka's heartbeat request manager sends
// them. The broker refuses a member whose
// topology is not equal, field for field and in order, to the group's at the same epoch
// (INVALID_REQUEST, "Topology updates are not supported yet": GroupMetadataManager's
// maybeUpdateTopology): found by the mixed application test (kafka_streams_runtime_test), where
// restoresim joined a group Kafka Streams had described first.
std::vector<kp::KeyValue> ChangelogTopicConfigs() {
  return {{"cleanup.policy", "compact"}, {"message.timestamp.type", "CreateTime"}};
}

}  // namespace

RdKafkaStreamsGroupConsumer::RdKafkaStreamsGroupConsumer(const std::vector<Setting>& settings,
                                                         const ConsumerConfig& config,
                                                         const RdKafkaOptions& options,
                                                         Clock& clock)
    : options_(options), config_(config), clock_(clock) {
  RS_CHECK(config.group_protocol == GroupProtocol::kStreams, "a streams-group consumer for "
           "the classic protocol");
  for (const Setting& setting : settings) {
    if (setting.name == "group.id") group_ = setting.value;
  }
  if (config.process_id.empty() || config.assignor != nullptr) {
    init_status_ = absl::InvalidArgumentError(
        "a streams-group member needs a process id and runs no client-side assignor");
    return;
  }
  absl::StatusOr<HandlePtr> handle = NewConsumerHandle(settings);
  if (!handle.ok()) {
    init_status_ = handle.status();
    return;
  }
  handle_ = std::move(*handle);
  core_ = std::make_unique<ConsumerCore>(handle_.get(), ConsumerCore::Mode::kManualGroup, config,
                                         options, clock);
}

RdKafkaStreamsGroupConsumer::~RdKafkaStreamsGroupConsumer() { Close(); }

absl::Status RdKafkaStreamsGroupConsumer::Enter(std::string_view call) const {
  if (closed_) return ClosedError(call);
  if (!init_status_.ok()) return init_status_;
  return absl::OkStatus();
}

int64_t RdKafkaStreamsGroupConsumer::NowMs() const { return clock_.NowNs() / kMillisecond; }

absl::Status RdKafkaStreamsGroupConsumer::Connect() {
  if (connection_.has_value()) return absl::OkStatus();
  // One FindCoordinator attempt: a coordinator still moving is retried after the member's
  // backoff, from the next poll, rather than for up to a minute inside this one.
  absl::StatusOr<KafkaProtocolConnection> c = KafkaProtocolConnection::OpenToCoordinator(
      options_.bootstrap_servers, group_, config_.client_id, clock_, /*retry=*/false);
  if (!c.ok()) return c.status();
  connection_.emplace(*std::move(c));
  return absl::OkStatus();
}

absl::Status RdKafkaStreamsGroupConsumer::Subscribe(const std::vector<std::string>& topics,
                                                    RebalanceListener* listener) {
  if (absl::Status s = Enter("main.subscribe"); !s.ok()) return s;
  if (topics.size() != 1) {
    return absl::InvalidArgumentError(fmt::format(
        "subscribe: a streams-group member describes one subtopology reading one topic, not {}",
        topics.size()));
  }
  if (member_ != nullptr) return absl::FailedPreconditionError("subscribe: already subscribed");
  absl::StatusOr<int32_t> count =
      PartitionCount(handle_.get(), topics[0], options_.request_timeout_ns);
  if (!count.ok()) return count.status();
  if (absl::Status s = Connect(); !s.ok()) return s;
  if (connection_->heartbeat_version() < 0) {
    connection_.reset();
    return absl::UnimplementedError(
        "subscribe: restoresim.group.protocol=streams, but the broker offers no streams groups "
        "(no StreamsGroupHeartbeat in its ApiVersions: Kafka 4.2+, or 4.1 with streams.version "
        "1, has them); use restoresim.group.protocol=classic");
  }
  kp::Subtopology subtopology{.subtopology_id = std::string(kSubtopology),
                              .source_topics = topics};
  for (const std::string& changelog : config_.changelog_topics) {
    // As Kafka Streams (StreamThread's StreamsRebalanceData): no partition count (the broker
    // refuses one for a changelog: STREAMS_INVALID_TOPOLOGY), replication.factor (-1: the
    // broker's default), and the changelog's configs.
    subtopology.state_changelog_topics.push_back(kp::TopicInfo{
        .name = changelog, .replication_factor = -1, .topic_configs = ChangelogTopicConfigs()});
  }
  source_topic_ = topics[0];
  member_ = std::make_unique<StreamsGroupMember>(StreamsGroupMember::Options{
      .group_id = group_,
      .member_id = NewMemberId(config_.client_id),
      .process_id = config_.process_id,
      .topology = kp::Topology{.epoch = 0, .subtopologies = {subtopology}}});
  member_->Join();
  listener_ = listener;
  return absl::OkStatus();
}

absl::StatusOr<PollResult> RdKafkaStreamsGroupConsumer::Poll(TimeNs timeout_ns) {
  if (absl::Status s = Enter("main.poll"); !s.ok()) return s;
  if (in_callback_) return absl::FailedPreconditionError("poll: called from a rebalance callback");
  if (member_ == nullptr) {
    return absl::FailedPreconditionError("poll: the consumer is not subscribed");
  }
  if (!fatal_.ok()) return fatal_;
  if (absl::Status s = Drive(); !s.ok()) return s;
  if (close_requested_) {
    CloseNow();
    return ClosedError("poll (closed by a rebalance callback)");
  }
  // Fetch until the next heartbeat is due at the latest.
  const int64_t until_heartbeat_ms = std::max<int64_t>(0, member_->NextHeartbeatAtMs() - NowMs());
  const TimeNs wait_ns = until_heartbeat_ms >= timeout_ns / kMillisecond
                             ? timeout_ns
                             : until_heartbeat_ms * kMillisecond;
  return core_->Poll(wait_ns);
}

absl::Status RdKafkaStreamsGroupConsumer::Drive() {
  for (int sent = 0; sent < kHeartbeatsPerPollMax && !close_requested_; ++sent) {
    if (!member_->HeartbeatDue(NowMs())) break;
    if (absl::Status s = SendHeartbeat(); !s.ok()) return s;
    if (member_->lost_pending()) HandleLost();
    if (absl::Status s = Reconcile(); !s.ok()) return s;
    if (!connection_.has_value()) break;  // lost or moved: found again at the next poll
  }
  return absl::OkStatus();
}

absl::Status RdKafkaStreamsGroupConsumer::SendHeartbeat() {
  RS_CHECK(member_->HeartbeatDue(NowMs()), "a heartbeat sent before it was due");
  // Built first, so that a connection that cannot be made fails this request (retried after
  // the member's backoff, every field again). Found by
  // KafkaFailureTest.AStreamsMemberFollowsItsCoordinatorWhenThatBrokerIsKilled: a failed connect
  // reported a failed request while none was in flight (the member's check stopped the process).
  const kp::StreamsGroupHeartbeatRequest request = member_->BuildHeartbeat(NowMs());
  const absl::Status connected = Connect();
  absl::StatusOr<kp::StreamsGroupHeartbeatResponse> response =
      connected.ok() ? connection_->Heartbeat(request)
                     : absl::StatusOr<kp::StreamsGroupHeartbeatResponse>(connected);
  if (!response.ok()) {
    // No connection, a lost one, or a response that does not decode: a new connection next
    // time, after the member's backoff; the session timeout fences a member that stays away,
    // and the next heartbeat then learns it. Said once per run of failures.
    if (!heartbeat_failing_) {
      fmt::print(stderr, "restoresim: streams-group member {}: heartbeat failed, retrying: {}\n",
                 member_->member_id(), response.status().ToString());
    }
    heartbeat_failing_ = true;
    connection_.reset();
    member_->OnRequestFailed(NowMs());
    return absl::OkStatus();
  }
  heartbeat_failing_ = false;
  switch (member_->OnResponse(*response, NowMs())) {
    case StreamsHeartbeatResult::kFindCoordinator:
      connection_.reset();  // FindCoordinator again before the next one
      return absl::OkStatus();
    case StreamsHeartbeatResult::kReported:
      fmt::print(stderr, "restoresim: streams-group member {}: {}\n", member_->member_id(),
                 KafkaErrorToStatus(response->error_code, response->error_message,
                                    "heartbeat").ToString());
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
absl::Status RdKafkaStreamsGroupConsumer::FatalStatus(
    const kp::StreamsGroupHeartbeatResponse& response) const {
  const absl::Status s = KafkaErrorToStatus(response.error_code, response.error_message,
                                            "streams-group heartbeat of " + member_->member_id());
  if (s.ok()) {
    return absl::DataLossError(
        fmt::format("streams-group heartbeat of {}: an inconsistent response (epoch {}): the "
                    "member is fatal", member_->member_id(), response.member_epoch));
  }
  if (!IsRetryable(s)) return s;
  return absl::InternalError(fmt::format("the member is fatal: {}", s.ToString()));
}

void RdKafkaStreamsGroupConsumer::HandleLost() {
  RS_CHECK(member_->lost_pending(), "lost handled while not fenced");
  const std::vector<TopicPartition> lost = core_->Assignment();
  if (listener_ != nullptr && !lost.empty()) {
    in_callback_ = true;
    listener_->OnPartitionsLost(lost);
    in_callback_ = false;
  }
  core_->Remove(lost);
  member_->LostHandled();
  assigned_since_join_ = false;
  RS_CHECK(core_->Assignment().empty(), "partitions left after a loss");
}

absl::StatusOr<std::vector<TopicPartition>> RdKafkaStreamsGroupConsumer::InputsOf(
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

absl::Status RdKafkaStreamsGroupConsumer::Reconcile() {
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
  std::erase_if(*revoked, [&](const TopicPartition& tp) { return !core_->IsAssigned(tp); });
  in_callback_ = true;
  if (listener_ != nullptr && !revoked->empty()) listener_->OnPartitionsRevoked(*revoked);
  core_->Remove(*revoked);  // after the callback: it may commit them
  std::vector<TopicPartition> gained;
  for (const TopicPartition& tp : *active) {
    if (!core_->IsAssigned(tp)) gained.push_back(tp);
  }
  core_->Add(gained);  // each starts at the group's committed offset (kManualGroup)
  RS_CHECK(core_->Assignment() == *active, "the assignment is not the target's actives");
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
void RdKafkaStreamsGroupConsumer::MaybeAssignNothing() {
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

std::vector<TopicPartition> RdKafkaStreamsGroupConsumer::Assignment() const {
  return core_ == nullptr || closed_ ? std::vector<TopicPartition>{} : core_->Assignment();
}

absl::Status RdKafkaStreamsGroupConsumer::Seek(const TopicPartition& partition, int64_t offset) {
  if (absl::Status s = Enter("main.seek"); !s.ok()) return s;
  return core_->Seek(partition, offset);
}

absl::StatusOr<int64_t> RdKafkaStreamsGroupConsumer::Position(const TopicPartition& partition) {
  if (absl::Status s = Enter("main.position"); !s.ok()) return s;
  return core_->Position(partition);
}

absl::Status RdKafkaStreamsGroupConsumer::Pause(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("main.pause"); !s.ok()) return s;
  return core_->SetPaused(partitions, true);
}

absl::Status RdKafkaStreamsGroupConsumer::Resume(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("main.resume"); !s.ok()) return s;
  return core_->SetPaused(partitions, false);
}

absl::Status RdKafkaStreamsGroupConsumer::CommitSync(
    const std::map<TopicPartition, int64_t>& offsets) {
  if (absl::Status s = Enter("main.commit_sync"); !s.ok()) return s;
  if (member_ == nullptr) {
    return absl::FailedPreconditionError("commit: the consumer is not subscribed");
  }
  if (!fatal_.ok()) return fatal_;
  kp::OffsetCommitRequest request{.group_id = group_,
                                  .generation_id_or_member_epoch = member_->epoch(),
                                  .member_id = member_->member_id()};
  if (absl::Status s = core_->CheckCommit(offsets, MemberId()); !s.ok()) return s;
  for (const auto& [tp, offset] : offsets) {
    if (request.topics.empty() || request.topics.back().name != tp.topic) {
      request.topics.push_back(kp::OffsetCommitTopic{.name = tp.topic});
    }
    request.topics.back().partitions.push_back(
        kp::OffsetCommitPartition{.partition_index = tp.partition, .committed_offset = offset});
  }
  if (request.topics.empty()) return absl::OkStatus();
  if (absl::Status s = Connect(); !s.ok()) return s;
  absl::StatusOr<kp::OffsetCommitResponse> response = connection_->OffsetCommit(request);
  if (!response.ok()) {
    connection_.reset();
    return response.status();
  }
  size_t answered = 0;
  for (const kp::OffsetCommitTopicResult& topic : response->topics) {
    for (const kp::OffsetCommitPartitionResult& p : topic.partitions) {
      ++answered;
      const TopicPartition tp{topic.name, p.partition_index};
      if (p.error_code == 15 /* COORDINATOR_NOT_AVAILABLE */ ||
          p.error_code == 16 /* NOT_COORDINATOR */) {
        connection_.reset();  // the next request finds the coordinator again
      }
      if (absl::Status s = KafkaErrorToStatus(p.error_code, std::nullopt,
                                              fmt::format("commit of {}", tp.ToString()));
          !s.ok()) {
        return s;
      }
    }
  }
  if (answered != offsets.size()) {
    return absl::DataLossError(fmt::format(
        "commit: the coordinator answered for {} partitions of {}", answered, offsets.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<TopicPartition, int64_t>> RdKafkaStreamsGroupConsumer::Committed(
    const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("main.committed"); !s.ok()) return s;
  // librdkafka's offset fetch (no member id, epoch -1) is answered by a streams group.
  return core_->Committed(partitions);
}

std::string RdKafkaStreamsGroupConsumer::MemberId() const {
  return member_ == nullptr ? config_.client_id : member_->member_id();
}

absl::Status RdKafkaStreamsGroupConsumer::SetSubscriptionUserData(std::string user_data) {
  if (absl::Status s = Enter("main.set_user_data"); !s.ok()) return s;
  return absl::UnimplementedError(fmt::format(
      "set subscription user data ({} bytes): a streams group's member sends none; the "
      "broker assigns tasks", user_data.size()));
}

absl::Status RdKafkaStreamsGroupConsumer::EnforceRebalance() {
  if (absl::Status s = Enter("main.enforce_rebalance"); !s.ok()) return s;
  return absl::UnimplementedError(
      "enforce rebalance: in a streams group the broker decides when tasks move");
}

ConsumerGroupMetadata RdKafkaStreamsGroupConsumer::GroupMetadata() const {
  // As Kafka's consumer under the streams protocol: the member id and epoch (the
  // TxnOffsetCommit's generation), so that the coordinator can fence a zombie's offsets.
  if (member_ == nullptr || closed_) return ConsumerGroupMetadata{group_, -1, "", ""};
  return ConsumerGroupMetadata{group_, member_->epoch(), member_->member_id(), ""};
}

void RdKafkaStreamsGroupConsumer::Close() {
  if (closed_) return;
  if (in_callback_) {
    close_requested_ = true;  // Poll finishes it once the callback returned
    return;
  }
  CloseNow();
}

void RdKafkaStreamsGroupConsumer::CloseNow() {
  closed_ = true;
  if (member_ != nullptr) {
    // Leave without callbacks (the port's Close): revoke nothing, then the leave heartbeat.
    member_->Leave();
    if (member_->state() == StreamsMemberState::kPrepareLeaving) member_->LeaveRevoked();
    // A backoff from a recent failure holds the leave back (as Kafka's); it is at most 1 s, so
    // it is waited out rather than leaving the others a session timeout to wait.
    const int64_t leave_at_ms = member_->NextHeartbeatAtMs();
    if (member_->state() == StreamsMemberState::kLeaving && leave_at_ms - NowMs() <= 1000) {
      clock_.SleepUntil(std::max<int64_t>(leave_at_ms, NowMs()) * kMillisecond);
    }
    if (member_->HeartbeatDue(NowMs()) && Connect().ok()) {
      absl::StatusOr<kp::StreamsGroupHeartbeatResponse> r =
          connection_->Heartbeat(member_->BuildHeartbeat(NowMs()));
      if (!r.ok()) {
        fmt::print(stderr, "restoresim: streams-group leave: {}\n", r.status().ToString());
      }
    }
  }
  connection_.reset();
  if (core_ != nullptr) core_->UnassignAll();
  core_.reset();
  if (handle_ != nullptr) {
    absl::Status s = ToStatus(rd_kafka_consumer_close(handle_.get()), "close");
    if (!s.ok()) fmt::print(stderr, "restoresim: main consumer: {}\n", s.ToString());
  }
  handle_.reset();
}

}  // namespace restoresim::rdkafka
