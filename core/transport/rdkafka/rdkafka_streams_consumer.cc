// The main consumer of a streams group (KIP-1071, issue 26): the member's heartbeats and
// reconciliations run inside Poll on the polling thread, over the project's own connection to
// the group's coordinator, through the StreamsGroupDriver the fake broker's streams consumer
// shares; librdkafka only fetches, from partitions assigned by hand. Declared (with what differs
// from the classic consumer) in rdkafka_clients.h.
#include <fmt/format.h>

#include <algorithm>

#include "core/port/random.h"
#include "core/transport/rdkafka/rdkafka_clients.h"
#include "core/transport/rdkafka/rdkafka_errors.h"
#include "core/util/check.h"

namespace restoresim::rdkafka {

namespace kp = restoresim::kafka_protocol;

namespace {

// Kafka's member ids are UUIDs made at start-up; here the client id and 64 bits from the OS
// (real threads only: this adapter never runs in the simulator).
std::string NewMemberId(const std::string& client_id) {
  OsSeededRandom random;
  return fmt::format("{}-{:016x}", client_id.empty() ? "member" : client_id, random.Next64());
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
  if (driver_.started()) return absl::FailedPreconditionError("subscribe: already subscribed");
  absl::StatusOr<int32_t> count =
      PartitionCount(handle_.get(), topics[0], options_.request_timeout_ns);
  if (!count.ok()) return count.status();
  // Whether the broker offers streams groups: any broker of the bootstrap list says so
  // (ApiVersions). The group's coordinator is found by the first heartbeat, and found again
  // after the member's backoff while it is not available. Found on 2026-12-06: Subscribe asked
  // for the coordinator itself, once, and on a new cluster (no __consumer_offsets yet: the first
  // group to ask creates it, COORDINATOR_NOT_AVAILABLE meanwhile) the stream thread failed at
  // start (StreamsGroupFixture.AThreadGivenNothingStillRuns, first on a fresh cluster: 3 of 3).
  // Kafka's subscribe sends nothing.
  absl::StatusOr<KafkaProtocolConnection> any =
      KafkaProtocolConnection::Open(options_.bootstrap_servers, config_.client_id, clock_);
  if (!any.ok() && !IsRetryable(any.status())) return any.status();
  if (any.ok() && any->heartbeat_version() < 0) {
    return absl::UnimplementedError(
        "subscribe: restoresim.group.protocol=streams, but the broker offers no streams groups "
        "(no StreamsGroupHeartbeat in its ApiVersions: Kafka 4.2+, or 4.1 with streams.version "
        "1, has them); use restoresim.group.protocol=classic");
  }
  driver_.Start(
      StreamsGroupMember::Options{
          .group_id = group_,
          .member_id = NewMemberId(config_.client_id),
          .process_id = config_.process_id,
          .topology = StreamsGroupDriver::CountTopology(topics[0], config_.changelog_topics)},
      topics[0], listener);
  return absl::OkStatus();
}

absl::StatusOr<PollResult> RdKafkaStreamsGroupConsumer::Poll(TimeNs timeout_ns) {
  if (absl::Status s = Enter("main.poll"); !s.ok()) return s;
  if (driver_.in_callback()) {
    return absl::FailedPreconditionError("poll: called from a rebalance callback");
  }
  if (!driver_.started()) {
    return absl::FailedPreconditionError("poll: the consumer is not subscribed");
  }
  if (absl::Status s = driver_.Drive(); !s.ok()) return s;
  if (driver_.close_requested()) {
    CloseNow();
    return ClosedError("poll (closed by a rebalance callback)");
  }
  // Fetch until the next heartbeat is due at the latest.
  const int64_t until_heartbeat_ms = std::max<int64_t>(0, driver_.NextHeartbeatAtMs() - NowMs());
  const TimeNs wait_ns = until_heartbeat_ms >= timeout_ns / kMillisecond
                             ? timeout_ns
                             : until_heartbeat_ms * kMillisecond;
  return core_->Poll(wait_ns);
}

absl::StatusOr<kp::StreamsGroupHeartbeatResponse> RdKafkaStreamsGroupConsumer::SendHeartbeat(
    const kp::StreamsGroupHeartbeatRequest& request) {
  const absl::Status connected = Connect();
  absl::StatusOr<kp::StreamsGroupHeartbeatResponse> response =
      connected.ok() ? connection_->Heartbeat(request)
                     : absl::StatusOr<kp::StreamsGroupHeartbeatResponse>(connected);
  if (!response.ok()) connection_.reset();  // a new connection next time
  return response;
}

absl::Status RdKafkaStreamsGroupConsumer::ErrorStatus(int16_t code,
                                                      const std::optional<std::string>& message,
                                                      std::string_view what) const {
  return KafkaErrorToStatus(code, message, what);
}

void RdKafkaStreamsGroupConsumer::Say(std::string_view line) {
  fmt::print(stderr, "restoresim: {}\n", line);
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
  if (!driver_.started()) {
    return absl::FailedPreconditionError("commit: the consumer is not subscribed");
  }
  if (!driver_.fatal().ok()) return driver_.fatal();
  kp::OffsetCommitRequest request{.group_id = group_,
                                  .generation_id_or_member_epoch = driver_.member().epoch(),
                                  .member_id = driver_.member().member_id()};
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
  return driver_.MemberId(config_.client_id);
}

absl::Status RdKafkaStreamsGroupConsumer::SetSubscriptionUserData(std::string user_data) {
  if (absl::Status s = Enter("main.set_user_data"); !s.ok()) return s;
  return StreamsGroupDriver::UserDataRefused(user_data.size());
}

absl::Status RdKafkaStreamsGroupConsumer::EnforceRebalance() {
  if (absl::Status s = Enter("main.enforce_rebalance"); !s.ok()) return s;
  // The broker decides where tasks go; the member only asks where it stands (the driver).
  driver_.HeartbeatNow();
  return absl::OkStatus();
}

ConsumerGroupMetadata RdKafkaStreamsGroupConsumer::GroupMetadata() const {
  return driver_.Metadata(group_, closed_);
}

void RdKafkaStreamsGroupConsumer::Close() {
  if (closed_) return;
  if (driver_.in_callback()) {
    driver_.RequestClose();  // Poll finishes it once the callback returned
    return;
  }
  CloseNow();
}

void RdKafkaStreamsGroupConsumer::CloseNow() {
  closed_ = true;
  if (driver_.started()) {
    // Leave without callbacks (the port's Close): revoke nothing, then the leave heartbeat.
    driver_.PrepareLeave();
    StreamsGroupMember& member = driver_.member();
    // A backoff from a recent failure holds the leave back (as Kafka's); it is at most 1 s, so
    // it is waited out rather than leaving the others a session timeout to wait.
    const int64_t leave_at_ms = member.NextHeartbeatAtMs();
    if (member.state() == StreamsMemberState::kLeaving && leave_at_ms - NowMs() <= 1000) {
      clock_.SleepUntil(std::max<int64_t>(leave_at_ms, NowMs()) * kMillisecond);
    }
    if (member.HeartbeatDue(NowMs()) && Connect().ok()) {
      absl::StatusOr<kp::StreamsGroupHeartbeatResponse> r =
          connection_->Heartbeat(member.BuildHeartbeat(NowMs()));
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
