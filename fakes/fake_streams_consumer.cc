// The fake main consumer of a streams group (fake_clients.h, FakeStreamsGroupConsumer): the
// shared StreamsGroupDriver over the broker's StreamsGroupCoordinator, and the broker's Fetcher.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "core/sync/thread.h"
#include "core/util/check.h"
#include "fakes/fake_clients.h"

namespace restoresim::fakes {

namespace kp = kafka_protocol;

absl::Status StreamsErrorToStatus(int16_t code, const std::optional<std::string>& message,
                                  std::string_view what) {
  const std::string text = fmt::format("{}: error {}: {}", what, code, message.value_or(""));
  switch (code) {
    case 0:
      return absl::OkStatus();
    case streams_errors::kCoordinatorLoadInProgress:
    case streams_errors::kCoordinatorNotAvailable:
    case streams_errors::kNotCoordinator:
      return absl::UnavailableError(text);
    case streams_errors::kUnknownMemberId:
    case streams_errors::kFencedMemberEpoch:
    case streams_errors::kStaleMemberEpoch:
      return absl::FailedPreconditionError(text);
    case streams_errors::kInvalidRequest:
      return absl::InvalidArgumentError(text);
    default:
      return absl::InternalError(text);
  }
}

FakeStreamsGroupConsumer::FakeStreamsGroupConsumer(FakeBroker& broker, std::string group,
                                                   const ConsumerConfig& config)
    : broker_(broker),
      group_(std::move(group)),
      client_id_(config.client_id.empty() ? "consumer" : config.client_id),
      config_(config),
      config_status_(ValidateConsumerConfig(config)),
      fetcher_(broker, config) {
  RS_CHECK(config.group_protocol == GroupProtocol::kStreams,
           "a streams-group consumer for the classic protocol");
}

FakeStreamsGroupConsumer::~FakeStreamsGroupConsumer() {
  SimNoAbortScope no_abort;  // Close is a scheduling point; a destructor must not throw
  Close();
}

absl::Status FakeStreamsGroupConsumer::Enter(std::string_view call) const {
  broker_.TransportPoint(client_id_, call);
  if (closed_) return ClosedError(call);
  return config_status_;
}

int64_t FakeStreamsGroupConsumer::NowMs() const { return broker_.clock_.NowNs() / kMillisecond; }

absl::StatusOr<kp::StreamsGroupHeartbeatResponse> FakeStreamsGroupConsumer::SendHeartbeat(
    const kp::StreamsGroupHeartbeatRequest& request) {
  return broker_.StreamsHeartbeat(group_, request);
}

void FakeStreamsGroupConsumer::CoordinatorMoved() {
  // One coordinator in the fake: the next heartbeat goes to it again (Kafka's client would run
  // FindCoordinator first).
  TraceMark("streams_group", "coordinator moved");
}

absl::Status FakeStreamsGroupConsumer::ErrorStatus(int16_t code,
                                                   const std::optional<std::string>& message,
                                                   std::string_view what) const {
  return StreamsErrorToStatus(code, message, what);
}

void FakeStreamsGroupConsumer::Say(std::string_view line) { TraceMark("streams_group", line); }

absl::Status FakeStreamsGroupConsumer::Subscribe(const std::vector<std::string>& topics,
                                                 RebalanceListener* listener) {
  if (absl::Status s = Enter("main.subscribe"); !s.ok()) return s;
  if (topics.size() != 1) {
    return absl::InvalidArgumentError(fmt::format(
        "subscribe: a streams-group member describes one subtopology reading one topic, not {}",
        topics.size()));
  }
  if (config_.process_id.empty() || config_.assignor != nullptr) {
    return absl::InvalidArgumentError(
        "subscribe: a streams-group member needs a process id and runs no client-side assignor");
  }
  if (driver_.started()) return absl::FailedPreconditionError("subscribe: already subscribed");
  {
    MutexLock lock(broker_.mu_);
    if (absl::Status s = broker_.CheckTopics(topics); !s.ok()) return s;
  }
  const std::string member_id = broker_.NewStreamsMemberId(client_id_);
  fetcher_.JoinedGroup(group_, member_id);  // positions from the group's committed offsets
  driver_.Start(
      StreamsGroupMember::Options{
          .group_id = group_,
          .member_id = member_id,
          .process_id = config_.process_id,
          .topology = StreamsGroupDriver::CountTopology(topics[0], config_.changelog_topics)},
      topics[0], listener);
  return absl::OkStatus();
}

absl::StatusOr<PollResult> FakeStreamsGroupConsumer::Poll(TimeNs timeout_ns) {
  if (absl::Status s = Enter("main.poll"); !s.ok()) return s;
  if (!driver_.started()) {
    return absl::FailedPreconditionError("poll: the consumer is not subscribed");
  }
  if (driver_.in_callback()) {
    return absl::FailedPreconditionError("poll: called from a rebalance callback");
  }
  if (timeout_ns < 0) return absl::InvalidArgumentError("poll: negative timeout");
  const TimeNs deadline_ns = DeadlineAfter(broker_.clock_.NowNs(), timeout_ns);
  if (absl::Status s = broker_.Request("main.poll", timeout_ns, true); !s.ok()) return s;
  for (int round = 0; round < Fetcher::kPollRoundsMax; ++round) {
    if (absl::Status s = driver_.Drive(); !s.ok()) return s;
    if (driver_.close_requested()) {
      CloseNow();
      return ClosedError("poll (closed by a rebalance callback)");
    }
    // Fetch until the next heartbeat is due at the latest, then heartbeat again.
    const int64_t next_ms = driver_.NextHeartbeatAtMs();
    const TimeNs until_ns =
        next_ms >= deadline_ns / kMillisecond ? deadline_ns : next_ms * kMillisecond;
    absl::StatusOr<PollResult> result = fetcher_.FetchUntil(std::max(until_ns, TimeNs{0}));
    if (!result.ok() || result->RecordCount() > 0 || !result->out_of_range.empty()) return result;
    if (broker_.clock_.NowNs() >= deadline_ns) return result;
  }
  return PollResult{};
}

std::vector<TopicPartition> FakeStreamsGroupConsumer::Assignment() const {
  broker_.TransportPoint(client_id_, "main.assignment");
  return closed_ ? std::vector<TopicPartition>{} : fetcher_.Assignment();
}

absl::Status FakeStreamsGroupConsumer::Seek(const TopicPartition& partition, int64_t offset) {
  if (absl::Status s = Enter("main.seek"); !s.ok()) return s;
  return fetcher_.Seek(partition, offset);
}

absl::StatusOr<int64_t> FakeStreamsGroupConsumer::Position(const TopicPartition& partition) {
  if (absl::Status s = Enter("main.position"); !s.ok()) return s;
  return fetcher_.Position(partition);
}

absl::Status FakeStreamsGroupConsumer::Pause(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("main.pause"); !s.ok()) return s;
  return fetcher_.SetPaused(partitions, true);
}

absl::Status FakeStreamsGroupConsumer::Resume(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("main.resume"); !s.ok()) return s;
  return fetcher_.SetPaused(partitions, false);
}

absl::Status FakeStreamsGroupConsumer::CommitSync(
    const std::map<TopicPartition, int64_t>& offsets) {
  if (absl::Status s = Enter("main.commit_sync"); !s.ok()) return s;
  if (!driver_.started()) {
    return absl::FailedPreconditionError("commit: the consumer is not subscribed");
  }
  if (!driver_.fatal().ok()) return driver_.fatal();
  for (const auto& [tp, offset] : offsets) {
    if (offset < 0) {
      return absl::InvalidArgumentError(
          fmt::format("commit: negative offset {} for {}", offset, tp.ToString()));
    }
    if (!fetcher_.IsAssigned(tp)) {
      return absl::FailedPreconditionError(fmt::format(
          "commit: not owner: {} is not assigned to member {}", tp.ToString(), MemberId()));
    }
  }
  if (offsets.empty()) return absl::OkStatus();
  return broker_.StreamsCommit(group_, driver_.member().member_id(), driver_.member().epoch(),
                               offsets);
}

absl::StatusOr<std::map<TopicPartition, int64_t>> FakeStreamsGroupConsumer::Committed(
    const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("main.committed"); !s.ok()) return s;
  return broker_.FetchCommitted(group_, partitions);
}

std::string FakeStreamsGroupConsumer::MemberId() const {
  return driver_.MemberId(client_id_);
}

absl::Status FakeStreamsGroupConsumer::SetSubscriptionUserData(std::string user_data) {
  if (absl::Status s = Enter("main.set_user_data"); !s.ok()) return s;
  return StreamsGroupDriver::UserDataRefused(user_data.size());
}

absl::Status FakeStreamsGroupConsumer::EnforceRebalance() {
  if (absl::Status s = Enter("main.enforce_rebalance"); !s.ok()) return s;
  // The broker decides where tasks go; the member only asks where it stands (the driver).
  driver_.HeartbeatNow();
  return absl::OkStatus();
}

ConsumerGroupMetadata FakeStreamsGroupConsumer::GroupMetadata() const {
  broker_.TransportPoint(client_id_, "main.group_metadata");
  return driver_.Metadata(group_, closed_);
}

void FakeStreamsGroupConsumer::Close() {
  broker_.TransportPoint(client_id_, "main.close");
  if (closed_) return;
  if (driver_.in_callback()) {
    driver_.RequestClose();  // Poll finishes it once the callback returned
    return;
  }
  CloseNow();
}

void FakeStreamsGroupConsumer::CloseNow() {
  RS_CHECK(!closed_, "closed twice");
  closed_ = true;
  if (driver_.started()) {
    // Leave without callbacks (the port's Close): revoke nothing, then the leave heartbeat. A
    // backoff from a recent failure holds it back (as Kafka's); at most 1 s, waited out as the
    // rdkafka consumer does.
    driver_.PrepareLeave();
    StreamsGroupMember& member = driver_.member();
    const int64_t leave_at_ms = member.NextHeartbeatAtMs();
    if (member.state() == StreamsMemberState::kLeaving && leave_at_ms > NowMs() &&
        leave_at_ms - NowMs() <= 1000) {
      broker_.clock_.SleepUntil(leave_at_ms * kMillisecond);
    }
    if (member.HeartbeatDue(NowMs())) {
      absl::StatusOr<kp::StreamsGroupHeartbeatResponse> r =
          broker_.StreamsHeartbeat(group_, member.BuildHeartbeat(NowMs()));
      if (!r.ok()) Say("streams-group leave: " + r.status().ToString());
    }
  }
  fetcher_.Clear();
  RS_CHECK(fetcher_.Assignment().empty(), "partitions left after a close");
}

}  // namespace restoresim::fakes
