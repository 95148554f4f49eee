// The fake broker's streams-group requests (fake_broker.h, "Streams groups"): the heartbeat with
// its faults, a member's commit, the committed-offset read the main consumers share, and the
// scenario observers of a streams group.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/sync/thread.h"
#include "core/util/check.h"
#include "fakes/fake_broker.h"

namespace restoresim::fakes {

namespace kp = kafka_protocol;

StreamsGroupCoordinator& FakeBroker::StreamsGroup(const std::string& group) {
  auto it = streams_groups_.find(group);
  if (it != streams_groups_.end()) return it->second;
  // The coordinator calls back only from broker methods that hold mu_.
  auto counter = [this](const std::string& topic) {
    mu_.AssertHeld();
    return PartitionCountLocked(topic);
  };
  auto create = [this](const std::string& topic, int32_t partitions) {
    mu_.AssertHeld();
    RS_CHECK(partitions > 0 && !topics_.contains(topic), "creating {} ({} partitions)", topic,
             partitions);
    AddTopicLocked(topic, partitions);
    TraceMark("streams_group", "internal topic created " + topic);
  };
  return streams_groups_.try_emplace(group, group, streams_settings_, counter, create)
      .first->second;
}

bool FakeBroker::CoordinatorGoneLocked(const std::string& group) const {
  auto it = coordinator_gone_until_.find(group);
  return it != coordinator_gone_until_.end() && clock_.NowNs() < it->second;
}

std::string FakeBroker::NewStreamsMemberId(const std::string& client_id) {
  MutexLock lock(mu_);
  return fmt::format("{}-streams-{}", client_id, next_streams_member_number_++);
}

absl::StatusOr<kp::StreamsGroupHeartbeatResponse> FakeBroker::StreamsHeartbeat(
    const std::string& group, const kp::StreamsGroupHeartbeatRequest& request) {
  RS_CHECK(request.group_id == group, "a heartbeat for {} sent to {}", request.group_id, group);
  // A timed-out heartbeat waits at most half a session: Kafka's defaults keep request.timeout.ms
  // (30 s) below the session (45 s), so one lost heartbeat does not fence the member; the test
  // cluster's 10 s session with a 30 s wait would fence it every time.
  const TimeNs timeout_ns = std::min(
      options_.request_timeout_ns,
      static_cast<TimeNs>(streams_settings_.session_timeout_ms) * kMillisecond / 2);
  if (absl::Status s = Request("main.streams_heartbeat", timeout_ns, false); !s.ok()) return s;
  int16_t injected = 0;
  TimeNs delay_ns = 0;
  if (faults_on_) {
    MutexLock lock(mu_);
    injected = injector_.StreamsHeartbeatError();
    if (injected == 0) delay_ns = injector_.StreamsHeartbeatDelay();
  }
  if (delay_ns > 0) clock_.SleepFor(delay_ns);  // it reaches the coordinator late
  MutexLock lock(mu_);
  if (injected == 0 && CoordinatorGoneLocked(group)) {
    injected = streams_errors::kCoordinatorNotAvailable;
  }
  if (injected != 0) {
    kp::StreamsGroupHeartbeatResponse r;
    r.error_code = injected;
    r.error_message = fmt::format("injected error {} for group {}", injected, group);
    return r;
  }
  kp::StreamsGroupHeartbeatResponse r =
      StreamsGroup(group).Heartbeat(request, clock_.NowNs() / kMillisecond);
  TraceMark("streams_group", "heartbeat", r.error_code != 0 ? -r.error_code : r.member_epoch);
  return r;
}

absl::Status FakeBroker::StreamsCommit(const std::string& group, const std::string& member_id,
                                       int32_t member_epoch,
                                       const std::map<TopicPartition, int64_t>& offsets) {
  if (absl::Status s = Request("main.commit_sync", options_.request_timeout_ns, false); !s.ok()) {
    return s;
  }
  MutexLock lock(mu_);
  if (CoordinatorGoneLocked(group)) {
    return InjectedError(absl::StatusCode::kUnavailable,
                         fmt::format("coordinator not available for group {}", group));
  }
  std::vector<TopicPartition> partitions;
  for (const auto& [tp, offset] : offsets) {
    if (absl::Status s = CheckPartition(tp); !s.ok()) return s;
    partitions.push_back(tp);
  }
  StreamsGroupCoordinator& streams = StreamsGroup(group);
  streams.ExpireSessions(clock_.NowNs() / kMillisecond);
  switch (streams.ValidateOffsetCommit(member_id, member_epoch, partitions)) {
    case 0:
      break;
    case streams_errors::kUnknownMemberId:
      return absl::FailedPreconditionError(fmt::format(
          "commit: UNKNOWN_MEMBER_ID: {} is not a member of streams group {}", member_id, group));
    default:
      return absl::FailedPreconditionError(fmt::format(
          "commit: STALE_MEMBER_EPOCH: epoch {} of {} in streams group {} is stale",
          member_epoch, member_id, group));
  }
  std::map<TopicPartition, int64_t>& committed = Group(group).committed();
  for (const auto& [tp, offset] : offsets) committed[tp] = offset;
  return absl::OkStatus();
}

absl::StatusOr<std::map<TopicPartition, int64_t>> FakeBroker::FetchCommitted(
    const std::string& group, const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Request("main.committed", options_.request_timeout_ns, false); !s.ok()) {
    return s;
  }
  MutexLock lock(mu_);
  if (CoordinatorGoneLocked(group)) {
    return InjectedError(absl::StatusCode::kUnavailable,
                         fmt::format("coordinator not available for group {}", group));
  }
  std::map<TopicPartition, int64_t> out;
  const auto& committed = Group(group).committed();
  for (const TopicPartition& tp : partitions) {
    if (absl::Status s = CheckPartition(tp); !s.ok()) return s;
    if (auto it = committed.find(tp); it != committed.end()) out[tp] = it->second;
  }
  return out;
}

std::vector<std::string> FakeBroker::StreamsMembers(const std::string& group) {
  MutexLock lock(mu_);
  auto it = streams_groups_.find(group);
  if (it == streams_groups_.end()) return {};
  it->second.ExpireSessions(clock_.NowNs() / kMillisecond);
  return it->second.member_ids();
}

std::optional<StreamsGroupCoordinator::MemberView> FakeBroker::StreamsMember(
    const std::string& group, const std::string& member_id) {
  MutexLock lock(mu_);
  auto it = streams_groups_.find(group);
  if (it == streams_groups_.end()) return std::nullopt;
  it->second.ExpireSessions(clock_.NowNs() / kMillisecond);
  return it->second.Member(member_id);
}

absl::Status FakeBroker::ExpireStreamsMember(const std::string& group,
                                             const std::string& member_id) {
  MutexLock lock(mu_);
  auto it = streams_groups_.find(group);
  if (it == streams_groups_.end() || !it->second.Expire(member_id)) {
    return absl::NotFoundError(fmt::format("no member {} in streams group {}", member_id, group));
  }
  TraceMark("fault", "streams member expired");
  return absl::OkStatus();
}

int32_t FakeBroker::StreamsGroupEpoch(const std::string& group) {
  MutexLock lock(mu_);
  auto it = streams_groups_.find(group);
  return it == streams_groups_.end() ? 0 : it->second.group_epoch();
}

}  // namespace restoresim::fakes
