// The fake main consumer: group membership through the broker's GroupCoordinator, rebalance
// callbacks delivered inside Poll on the polling thread, and commits.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/sync/thread.h"
#include "core/util/check.h"
#include "fakes/fake_clients.h"

namespace restoresim::fakes {

FakeMainConsumer::FakeMainConsumer(FakeBroker& broker, std::string group,
                                   const ConsumerConfig& config)
    : broker_(broker),
      group_(std::move(group)),
      client_id_(config.client_id.empty() ? "consumer" : config.client_id),
      config_status_(ValidateConsumerConfig(config)),
      fetcher_(broker, config),
      assignor_(config.assignor),
      group_protocol_(config.group_protocol) {}

FakeMainConsumer::~FakeMainConsumer() {
  SimNoAbortScope no_abort;  // Close is a scheduling point; a destructor must not throw
  Close();
}

absl::Status FakeMainConsumer::Enter(std::string_view call) const {
  broker_.TransportPoint(client_id_, call);
  if (closed_) return ClosedError(call);
  return config_status_;
}

absl::Status FakeMainConsumer::CheckSubscribed(std::string_view call) const {
  if (!member_id_.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(fmt::format("{}: the consumer is not subscribed", call));
}

absl::Status FakeMainConsumer::Subscribe(const std::vector<std::string>& topics,
                                         RebalanceListener* listener) {
  if (absl::Status s = Enter("main.subscribe"); !s.ok()) return s;
  if (topics.empty()) return absl::InvalidArgumentError("subscribe: empty topic list");
  if (group_protocol_ == GroupProtocol::kStreams) {
    return absl::UnimplementedError(
        "subscribe: a streams-group member is FakeStreamsGroupConsumer, which "
        "FakeBroker::NewMainConsumer makes for GroupProtocol::kStreams");
  }
  if (!member_id_.empty()) {
    return absl::FailedPreconditionError(fmt::format(
        "subscribe: {} is already subscribed (the fake does not resubscribe)", member_id_));
  }
  MutexLock lock(broker_.mu_);
  if (absl::Status s = broker_.CheckTopics(topics); !s.ok()) return s;
  group_coordinator_ = &broker_.Group(group_);
  member_id_ = group_coordinator_->Join(client_id_, topics, assignor_, user_data_);
  listener_ = listener;
  fetcher_.JoinedGroup(group_, member_id_);
  broker_.changed_.NotifyAll();  // the other members have a generation to see
  return absl::OkStatus();
}

GroupCoordinator& FakeMainConsumer::Group() {
  RS_CHECK(group_coordinator_ != nullptr && !member_id_.empty(), "{} is not subscribed",
           client_id_);
  return *group_coordinator_;
}

absl::StatusOr<PollResult> FakeMainConsumer::Poll(TimeNs timeout_ns) {
  if (absl::Status s = Enter("main.poll"); !s.ok()) return s;
  if (absl::Status s = CheckSubscribed("poll"); !s.ok()) return s;
  if (in_callback_) {
    return absl::FailedPreconditionError("poll: called from a rebalance callback");
  }
  if (timeout_ns < 0) return absl::InvalidArgumentError("poll: negative timeout");
  const TimeNs deadline_ns = DeadlineAfter(broker_.clock_.NowNs(), timeout_ns);
  if (absl::Status s = broker_.Request("main.poll", timeout_ns, true); !s.ok()) return s;
  for (int round = 0; round < Fetcher::kPollRoundsMax; ++round) {
    DeliverRebalances();
    if (closed_) return ClosedError("poll (closed by a rebalance callback)");
    absl::StatusOr<PollResult> result = fetcher_.FetchUntil(deadline_ns);
    if (!result.ok() || result->RecordCount() > 0 || !result->out_of_range.empty()) return result;
    if (broker_.clock_.NowNs() >= deadline_ns) return result;
    // Stopped early with nothing: a rebalance arrived. Deliver it and fetch again.
  }
  return PollResult{};
}

void FakeMainConsumer::DeliverRebalances() {
  for (int round = 0; round < kDeliveryRoundsMax; ++round) {
    std::vector<RebalanceEvent> events;
    bool must_rejoin = false;
    {
      MutexLock lock(broker_.mu_);
      events = Group().TakeEvents(member_id_, &must_rejoin);
    }
    for (const RebalanceEvent& e : events) {
      if (closed_) return;  // a callback closed the consumer: it has left the group
      Apply(e);
    }
    if (!events.empty()) {
      // The callbacks returned (commits included): what this member gave up can move on.
      MutexLock lock(broker_.mu_);
      if (Group().Acknowledge(member_id_)) broker_.changed_.NotifyAll();
    }
    if (!must_rejoin || closed_) return;
    MutexLock lock(broker_.mu_);
    Group().Rejoin(member_id_);
    broker_.changed_.NotifyAll();
  }
}

void FakeMainConsumer::Apply(const RebalanceEvent& event) {
  for (const TopicPartition& tp : event.revoked) {
    RS_CHECK(fetcher_.IsAssigned(tp), "member {} told to give up {} which it does not own",
             member_id_, tp.ToString());
  }
  in_callback_ = true;
  if (event.kind == RebalanceEvent::Kind::kLost) {
    TraceMark("rebalance", "lost", event.generation);
    generation_ = -1;  // Kafka resets the member's generation when it is lost
    if (listener_ != nullptr) listener_->OnPartitionsLost(event.revoked);
    fetcher_.Remove(event.revoked);
    in_callback_ = false;
    return;
  }
  TraceMark("rebalance", "generation", event.generation);
  generation_ = event.generation;
  // Revoked partitions are still owned during the callback, so it may commit them.
  if (listener_ != nullptr && !event.revoked.empty()) listener_->OnPartitionsRevoked(event.revoked);
  if (closed_) {
    in_callback_ = false;
    return;
  }
  fetcher_.Remove(event.revoked);
  fetcher_.SetAssignment(event.assigned.partitions);
  if (listener_ != nullptr) listener_->OnPartitionsAssigned(event.assigned);
  in_callback_ = false;
}

ConsumerGroupMetadata FakeMainConsumer::GroupMetadata() const {
  broker_.TransportPoint(client_id_, "main.group_metadata");
  return ConsumerGroupMetadata{group_, generation_, member_id_};
}

std::vector<TopicPartition> FakeMainConsumer::Assignment() const {
  broker_.TransportPoint(client_id_, "main.assignment");
  return fetcher_.Assignment();
}

absl::Status FakeMainConsumer::Seek(const TopicPartition& partition, int64_t offset) {
  if (absl::Status s = Enter("main.seek"); !s.ok()) return s;
  return fetcher_.Seek(partition, offset);
}

absl::StatusOr<int64_t> FakeMainConsumer::Position(const TopicPartition& partition) {
  if (absl::Status s = Enter("main.position"); !s.ok()) return s;
  return fetcher_.Position(partition);
}

absl::Status FakeMainConsumer::Pause(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("main.pause"); !s.ok()) return s;
  return fetcher_.SetPaused(partitions, true);
}

absl::Status FakeMainConsumer::Resume(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("main.resume"); !s.ok()) return s;
  return fetcher_.SetPaused(partitions, false);
}

absl::Status FakeMainConsumer::CommitSync(const std::map<TopicPartition, int64_t>& offsets) {
  if (absl::Status s = Enter("main.commit_sync"); !s.ok()) return s;
  if (absl::Status s = CheckSubscribed("commit"); !s.ok()) return s;
  for (const auto& [tp, offset] : offsets) {
    if (offset < 0) {
      return absl::InvalidArgumentError(
          fmt::format("commit: negative offset {} for {}", offset, tp.ToString()));
    }
    if (!fetcher_.IsAssigned(tp)) {
      return absl::FailedPreconditionError(fmt::format(
          "commit: not owner: {} is not assigned to member {}", tp.ToString(), member_id_));
    }
  }
  const TimeNs timeout_ns = broker_.options_.request_timeout_ns;
  if (absl::Status s = broker_.Request("main.commit_sync", timeout_ns, false); !s.ok()) return s;
  MutexLock lock(broker_.mu_);
  GroupCoordinator& group = Group();
  if (!group.IsActive(member_id_)) {
    return absl::FailedPreconditionError(fmt::format(
        "commit: not owner: member {} is no longer in group {} (lost or left); poll to rejoin",
        member_id_, group_));
  }
  for (const auto& [tp, offset] : offsets) group.committed()[tp] = offset;
  return absl::OkStatus();
}

absl::StatusOr<std::map<TopicPartition, int64_t>> FakeMainConsumer::Committed(
    const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("main.committed"); !s.ok()) return s;
  return broker_.FetchCommitted(group_, partitions);
}

absl::Status FakeMainConsumer::SetSubscriptionUserData(std::string user_data) {
  if (absl::Status s = Enter("main.set_user_data"); !s.ok()) return s;
  user_data_ = std::move(user_data);
  if (member_id_.empty()) return absl::OkStatus();  // sent with the Subscribe
  MutexLock lock(broker_.mu_);
  // A lost member is still known to the group (it rejoins with this data).
  return Group().SetUserData(member_id_, user_data_);
}

absl::Status FakeMainConsumer::EnforceRebalance() {
  if (absl::Status s = Enter("main.enforce_rebalance"); !s.ok()) return s;
  if (absl::Status s = CheckSubscribed("enforce_rebalance"); !s.ok()) return s;
  MutexLock lock(broker_.mu_);
  GroupCoordinator& group = Group();
  // A lost member rejoins at its next poll, which rebalances anyway.
  if (!group.IsActive(member_id_)) return absl::OkStatus();
  absl::Status s = group.EnforceRebalance(member_id_);
  broker_.changed_.NotifyAll();
  return s;
}

void FakeMainConsumer::Close() {
  broker_.TransportPoint(client_id_, "main.close");
  if (closed_) return;
  closed_ = true;
  fetcher_.Clear();
  if (member_id_.empty()) return;
  MutexLock lock(broker_.mu_);
  Group().Leave(member_id_);
  broker_.changed_.NotifyAll();
}

}  // namespace restoresim::fakes
