#include "fakes/fake_streams_group.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/util/check.h"

namespace restoresim::fakes {
namespace {

namespace kp = kafka_protocol;
namespace err = streams_errors;

constexpr int32_t kJoinEpoch = 0;
constexpr int32_t kLeaveEpoch = -1;
constexpr int32_t kLeaveStaticEpoch = -2;

StreamsTaskSet ToTasks(const std::vector<kp::TaskIds>& ids) {
  StreamsTaskSet out;
  for (const kp::TaskIds& t : ids) {
    for (int32_t p : t.partitions) out.insert({t.subtopology_id, p});
  }
  return out;
}

template <typename Tasks>
std::vector<kp::TaskIds> ToTaskIds(const Tasks& tasks) {
  std::vector<kp::TaskIds> out;
  for (const auto& entry : tasks) {
    const StreamsTaskId& t = [&]() -> const StreamsTaskId& {
      if constexpr (std::is_same_v<Tasks, StreamsTaskSet>) {
        return entry;
      } else {
        return entry.first;
      }
    }();
    if (out.empty() || out.back().subtopology_id != t.subtopology) {
      out.push_back({.subtopology_id = t.subtopology, .partitions = {}});
    }
    out.back().partitions.push_back(t.partition);
  }
  return out;
}

StreamsTaskSet Keys(const std::map<StreamsTaskId, int32_t>& tasks) {
  StreamsTaskSet out;
  for (const auto& [t, epoch] : tasks) out.insert(t);
  return out;
}

bool Intersects(const StreamsTaskSet& a, const StreamsTaskSet& b) {
  return std::any_of(a.begin(), a.end(), [&](const StreamsTaskId& t) { return b.contains(t); });
}

}  // namespace

StreamsGroupCoordinator::StreamsGroupCoordinator(std::string group_id,
                                                 StreamsGroupSettings settings,
                                                 PartitionCounter partition_count,
                                                 TopicCreator create_topic)
    : group_id_(std::move(group_id)),
      settings_(settings),
      partition_count_(std::move(partition_count)),
      create_topic_(std::move(create_topic)) {
  RS_CHECK(settings_.heartbeat_interval_ms > 0 && settings_.session_timeout_ms > 0,
           "streams group settings: heartbeat {} ms, session {} ms",
           settings_.heartbeat_interval_ms, settings_.session_timeout_ms);
  RS_CHECK_GE(settings_.num_standby_replicas, 0);
}

kp::StreamsGroupHeartbeatResponse StreamsGroupCoordinator::Error(int16_t code,
                                                                 std::string message) const {
  RS_CHECK(code != 0, "an error response without an error");
  kp::StreamsGroupHeartbeatResponse r;
  r.error_code = code;
  r.error_message = std::move(message);
  return r;
}

kp::StreamsGroupHeartbeatResponse StreamsGroupCoordinator::Heartbeat(
    const kp::StreamsGroupHeartbeatRequest& request, int64_t now_ms) {
  ExpireSessions(now_ms);
  if (request.member_id.empty()) return Error(err::kInvalidRequest, "MemberId can't be empty.");
  if (request.member_epoch < kLeaveStaticEpoch) {
    return Error(err::kInvalidRequest, fmt::format("MemberEpoch {} is invalid.",
                                                   request.member_epoch));
  }
  if (request.member_epoch == kLeaveEpoch || request.member_epoch == kLeaveStaticEpoch) {
    return Leave(request);
  }
  Owned owned;
  if (request.active_tasks.has_value() && request.standby_tasks.has_value() &&
      request.warmup_tasks.has_value()) {
    owned = StreamsAssignment{ToTasks(*request.active_tasks), ToTasks(*request.standby_tasks),
                              ToTasks(*request.warmup_tasks)};
  }
  std::string error;
  bool recompute = false;
  if (int16_t code = FindOrJoin(request, owned, &recompute, &error); code != 0) {
    return Error(code, error);
  }
  MemberState& member = members_.at(request.member_id);
  member.session_deadline_ms = now_ms + settings_.session_timeout_ms;
  const Tasks before = member.assigned;
  kp::StreamsGroupHeartbeatResponse r;
  r.status = std::vector<kp::StreamsGroupStatus>{};
  MaybeComputeTarget(recompute, &*r.status);
  Reconcile(request.member_id, owned);
  r.member_id = request.member_id;
  r.member_epoch = member.epoch;
  r.heartbeat_interval_ms = settings_.heartbeat_interval_ms;
  if (request.member_epoch == kJoinEpoch || member.assigned != before) {
    r.active_tasks = ToTaskIds(member.assigned.active);
    r.standby_tasks = ToTaskIds(member.assigned.standby);
    r.warmup_tasks = std::vector<kp::TaskIds>{};
  }
  CheckInvariants();
  return r;
}

void StreamsGroupCoordinator::CheckInvariants() const {
  std::map<StreamsTaskId, std::string> holder;
  for (const auto& [id, m] : members_) {
    RS_CHECK(m.epoch <= target_epoch_, "member {} at epoch {} past the target's {}", id, m.epoch,
             target_epoch_);
    for (const Tasks* tasks : {&m.assigned, &m.revoking}) {
      for (const auto& [task, given_at] : tasks->active) {
        auto [it, first] = holder.emplace(task, id);
        RS_CHECK(first || it->second == id, "active {} held by {} and {}", task.ToString(),
                 it->second, id);
      }
    }
  }
}

kp::StreamsGroupHeartbeatResponse StreamsGroupCoordinator::Leave(
    const kp::StreamsGroupHeartbeatRequest& request) {
  if (!members_.contains(request.member_id)) {
    return Error(err::kUnknownMemberId,
                 fmt::format("Member {} is not a member of group {}.", request.member_id,
                             group_id_));
  }
  RemoveMember(request.member_id);
  kp::StreamsGroupHeartbeatResponse r;
  r.member_id = request.member_id;
  r.member_epoch = request.member_epoch;
  return r;
}

int16_t StreamsGroupCoordinator::CheckTopology(const std::optional<kp::Topology>& topology,
                                               std::string* error) const {
  if (!topology.has_value()) {
    *error = "Topology must be set when joining.";
    return err::kInvalidRequest;
  }
  // Kafka's maybeUpdateTopology: the first sets it, an older epoch takes the group's, any other
  // difference is refused.
  if (!topology_.has_value() || topology_->epoch > topology->epoch || *topology_ == *topology) {
    return 0;
  }
  *error = "Topology updates are not supported yet.";
  return err::kInvalidRequest;
}

int16_t StreamsGroupCoordinator::FindOrJoin(const kp::StreamsGroupHeartbeatRequest& request,
                                            const Owned& owned, bool* recompute,
                                            std::string* error) {
  if (request.member_epoch == kJoinEpoch) {
    if (!request.process_id.has_value() || request.rebalance_timeout_ms <= 0) {
      *error = "ProcessId and RebalanceTimeoutMs must be set when joining.";
      return err::kInvalidRequest;
    }
    if (int16_t code = CheckTopology(request.topology, error); code != 0) return code;
    RS_CHECK(members_.size() < kMembersMax, "streams group {} past {} members", group_id_,
             kMembersMax);
    if (!topology_.has_value()) topology_ = request.topology;
    auto [it, created] = members_.try_emplace(request.member_id);
    if (created || it->second.process_id != *request.process_id) {
      it->second.process_id = *request.process_id;
      *recompute = true;  // the membership changed: a new target (Kafka's RECOMPUTE)
    }
    return 0;
  }
  auto it = members_.find(request.member_id);
  if (it == members_.end()) {
    *error = fmt::format("Member {} is not a member of group {}.", request.member_id, group_id_);
    return err::kUnknownMemberId;
  }
  const MemberState& m = it->second;
  // Kafka's throwIfStreamsGroupMemberEpochIsInvalid: the previous epoch is taken when the
  // member owns nothing it was not given (the response that moved it on may have been lost).
  bool fenced = request.member_epoch > m.epoch;
  if (request.member_epoch < m.epoch) {
    fenced = request.member_epoch != m.previous_epoch || !owned.has_value() ||
             !std::includes(m.assigned.standby.begin(), m.assigned.standby.end(),
                            owned->standby.begin(), owned->standby.end()) ||
             std::any_of(owned->active.begin(), owned->active.end(),
                         [&](const StreamsTaskId& t) { return !m.assigned.active.contains(t); });
  }
  if (fenced) {
    *error = fmt::format("The streams group member has epoch {}, the coordinator {}.",
                         request.member_epoch, m.epoch);
    return err::kFencedMemberEpoch;
  }
  return 0;
}

void StreamsGroupCoordinator::RemoveMember(const std::string& member_id) {
  RS_CHECK(members_.erase(member_id) == 1, "removing {}, not a member", member_id);
  target_.erase(member_id);
  ++group_epoch_;  // Kafka's streamsGroupFenceMember bumps the group epoch
  RS_CHECK(group_epoch_ > target_epoch_, "a removal that does not move the group epoch");
}

std::vector<std::string> StreamsGroupCoordinator::ExpireSessions(int64_t now_ms) {
  std::vector<std::string> expired;
  for (const auto& [id, m] : members_) {
    if (now_ms > m.session_deadline_ms) expired.push_back(id);
  }
  for (const std::string& id : expired) RemoveMember(id);
  return expired;
}

bool StreamsGroupCoordinator::Expire(const std::string& member_id) {
  if (!members_.contains(member_id)) return false;
  RemoveMember(member_id);
  return true;
}

StreamsAssignorTopology StreamsGroupCoordinator::ConfiguredTopology(
    std::vector<kp::StreamsGroupStatus>* statuses, bool* ready) {
  *ready = false;
  StreamsAssignorTopology out;
  if (!topology_.has_value()) return out;
  std::vector<std::string> missing, created;
  for (const kp::Subtopology& sub : topology_->subtopologies) {
    int32_t partitions = 0;
    for (const std::string& topic : sub.source_topics) {
      const int32_t count = partition_count_(topic);
      if (count == 0) missing.push_back(topic);
      partitions = std::max(partitions, count);
    }
    out.partitions_by_subtopology[sub.subtopology_id] = partitions;
    if (!sub.state_changelog_topics.empty()) out.stateful.insert(sub.subtopology_id);
    for (const kp::TopicInfo& changelog : sub.state_changelog_topics) {
      if (partitions == 0 || partition_count_(changelog.name) != 0) continue;
      create_topic_(changelog.name, partitions);  // Kafka creates it after this heartbeat
      created.push_back(changelog.name);
    }
  }
  using Code = kp::StreamsGroupStatusCode;
  if (!missing.empty()) {
    std::sort(missing.begin(), missing.end());
    statuses->push_back(kp::StreamsGroupStatus{
        .status_code = static_cast<int8_t>(Code::kMissingSourceTopics),
        .status_detail = fmt::format("Source topics {} are missing.", fmt::join(missing, ", "))});
    return {};  // not ready: no tasks
  }
  if (!created.empty()) {
    statuses->push_back(kp::StreamsGroupStatus{
        .status_code = static_cast<int8_t>(Code::kMissingInternalTopics),
        .status_detail = fmt::format("Internal topics are missing: [{}]",
                                     fmt::join(created, ", "))});
    return {};
  }
  *ready = true;
  return out;
}

void StreamsGroupCoordinator::MaybeComputeTarget(bool recompute,
                                                 std::vector<kp::StreamsGroupStatus>* statuses) {
  bool ready = false;
  const StreamsAssignorTopology topology = ConfiguredTopology(statuses, &ready);
  if (ready != topology_ready_) {
    topology_ready_ = ready;
    recompute = true;  // Kafka's: the validated topology epoch changed
  }
  if (recompute) ++group_epoch_;
  if (group_epoch_ <= target_epoch_) return;
  std::map<std::string, StreamsAssignorMember> input;
  for (const auto& [id, m] : members_) {
    StreamsAssignorMember& in = input[id];
    in.process_id = m.process_id;
    if (auto t = target_.find(id); t != target_.end()) {
      in.previous_active = t->second.active;
      in.previous_standby = t->second.standby;
    }
  }
  target_ = AssignStickyTasks(input, topology, settings_.num_standby_replicas);
  target_epoch_ = group_epoch_;
  RS_CHECK(target_.size() == members_.size(), "a target for {} of {} members", target_.size(),
           members_.size());
}

bool StreamsGroupCoordinator::NotReleased(const Tasks& revoking, const Owned& owned) {
  // Kafka's hasNotReleased: without a report of owned tasks nothing is proven released.
  return !owned.has_value() || Intersects(Keys(revoking.active), owned->active) ||
         Intersects(revoking.standby, owned->standby);
}

void StreamsGroupCoordinator::Reconcile(const std::string& member_id, const Owned& owned) {
  const MemberState& m = members_.at(member_id);
  switch (m.state) {
    case State::kStable:
      if (m.epoch != target_epoch_) NextAssignment(member_id, m.epoch, owned);
      break;
    case State::kUnrevokedTasks:
      if (!NotReleased(m.revoking, owned)) NextAssignment(member_id, m.epoch + 1, owned);
      break;
    case State::kUnreleasedTasks:
      NextAssignment(member_id, m.epoch, owned);
      break;
  }
}

// Kafka's isUnreleasedActiveTask: a member (this one's revocation included) still holds it
// active, or another member of this process holds it as a standby.
bool StreamsGroupCoordinator::HeldBackActive(const std::string& member_id,
                                             const StreamsTaskId& task) const {
  const MemberState& me = members_.at(member_id);
  for (const auto& [id, m] : members_) {
    if (m.assigned.active.contains(task) || m.revoking.active.contains(task)) return true;
    if (id != member_id && m.process_id == me.process_id &&
        (m.assigned.standby.contains(task) || m.revoking.standby.contains(task))) {
      return true;
    }
  }
  return false;
}

// Kafka's isUnreleasedStandbyTask: another member of this process runs it active, or a member
// of this process holds it as a standby.
bool StreamsGroupCoordinator::HeldBackStandby(const std::string& member_id,
                                              const StreamsTaskId& task) const {
  const MemberState& me = members_.at(member_id);
  for (const auto& [id, m] : members_) {
    if (m.process_id != me.process_id) continue;
    const bool active = m.assigned.active.contains(task) || m.revoking.active.contains(task);
    if (active && !me.assigned.active.contains(task)) return true;
    if (m.assigned.standby.contains(task) || m.revoking.standby.contains(task)) return true;
  }
  return false;
}

// Kafka's computeNextAssignment and buildNewMember: what the member keeps, gives up and is
// given on its way to its target, and the state and epoch that follow.
void StreamsGroupCoordinator::NextAssignment(const std::string& member_id, int32_t epoch,
                                             const Owned& owned) {
  MemberState& m = members_.at(member_id);
  const StreamsTargetTasks& target = target_[member_id];
  Tasks kept, revoke, give;
  bool unreleased = false;
  for (const auto& [t, given_at] : m.assigned.active) {
    (target.active.contains(t) ? kept : revoke).active[t] = given_at;
  }
  for (const StreamsTaskId& t : target.active) {
    if (m.assigned.active.contains(t)) continue;
    if (HeldBackActive(member_id, t)) {
      unreleased = true;
    } else {
      give.active[t] = target_epoch_;
    }
  }
  for (const StreamsTaskId& t : m.assigned.standby) {
    (target.standby.contains(t) ? kept : revoke).standby.insert(t);
  }
  for (const StreamsTaskId& t : target.standby) {
    if (m.assigned.standby.contains(t)) continue;
    if (HeldBackStandby(member_id, t)) {
      unreleased = true;
    } else {
      give.standby.insert(t);
    }
  }
  // A demotion needs no other member: the standby is given at once (the client recycles the
  // task), while the active stays to be revoked.
  for (const auto& [t, given_at] : m.assigned.active) {
    if (give.standby.erase(t) == 1) kept.standby.insert(t);
  }
  // A promotion waits for the active: the standby is not revoked, and kept until then.
  for (const StreamsTaskId& t : m.assigned.standby) {
    if (target.active.contains(t)) revoke.standby.erase(t);
  }
  const bool revoking = !revoke.empty() && NotReleased(revoke, owned);
  for (const StreamsTaskId& t : m.assigned.standby) {
    const bool promoted_now = !revoking && give.active.contains(t);
    if (target.active.contains(t) && !promoted_now) kept.standby.insert(t);
  }
  const int32_t previous = m.epoch;
  if (revoking) {
    m.state = State::kUnrevokedTasks;
    m.epoch = epoch;
    m.assigned = std::move(kept);
    m.revoking = std::move(revoke);
  } else {
    m.state = unreleased ? State::kUnreleasedTasks : State::kStable;
    m.epoch = target_epoch_;
    m.assigned = std::move(kept);
    m.assigned.active.insert(give.active.begin(), give.active.end());
    m.assigned.standby.insert(give.standby.begin(), give.standby.end());
    m.revoking = {};
  }
  if (m.epoch != previous) m.previous_epoch = previous;
  for (const StreamsTaskId& t : m.assigned.standby) {
    RS_CHECK(!m.assigned.active.contains(t), "member {} given {} active and standby",
             member_id, t.ToString());
  }
}

int16_t StreamsGroupCoordinator::ValidateOffsetCommit(
    const std::string& member_id, int32_t member_epoch,
    const std::vector<TopicPartition>& partitions) const {
  if (member_epoch < 0 && members_.empty()) return 0;  // an admin's or a manual consumer's
  auto it = members_.find(member_id);
  if (it == members_.end()) return streams_errors::kUnknownMemberId;
  const MemberState& m = it->second;
  if (member_epoch == m.epoch) return 0;
  if (member_epoch > m.epoch || !topology_.has_value()) return streams_errors::kStaleMemberEpoch;
  // An older epoch: each task must be held (or being revoked) since that epoch or before.
  for (const TopicPartition& tp : partitions) {
    auto sub = std::find_if(topology_->subtopologies.begin(), topology_->subtopologies.end(),
                            [&](const kp::Subtopology& s) {
                              return std::find(s.source_topics.begin(), s.source_topics.end(),
                                               tp.topic) != s.source_topics.end();
                            });
    if (sub == topology_->subtopologies.end()) return streams_errors::kStaleMemberEpoch;
    const StreamsTaskId task{sub->subtopology_id, tp.partition};
    std::optional<int32_t> given_at;
    if (auto a = m.assigned.active.find(task); a != m.assigned.active.end()) given_at = a->second;
    if (auto r = m.revoking.active.find(task); r != m.revoking.active.end()) given_at = r->second;
    if (!given_at.has_value() || member_epoch < *given_at) {
      return streams_errors::kStaleMemberEpoch;
    }
  }
  return 0;
}

std::optional<StreamsGroupCoordinator::MemberView> StreamsGroupCoordinator::Member(
    const std::string& member_id) const {
  auto it = members_.find(member_id);
  if (it == members_.end()) return std::nullopt;
  const MemberState& m = it->second;
  MemberView v{.epoch = m.epoch, .process_id = m.process_id};
  v.state = m.state == State::kStable           ? "STABLE"
            : m.state == State::kUnrevokedTasks ? "UNREVOKED_TASKS"
                                                : "UNRELEASED_TASKS";
  v.active = Keys(m.assigned.active);
  v.standby = m.assigned.standby;
  v.revoking_active = Keys(m.revoking.active);
  v.revoking_standby = m.revoking.standby;
  if (auto t = target_.find(member_id); t != target_.end()) v.target = t->second;
  return v;
}

std::vector<std::string> StreamsGroupCoordinator::member_ids() const {
  std::vector<std::string> ids;
  for (const auto& [id, m] : members_) ids.push_back(id);
  return ids;
}

bool StreamsGroupCoordinator::Settled() const {
  if (group_epoch_ != target_epoch_) return false;
  return std::all_of(members_.begin(), members_.end(), [&](const auto& entry) {
    const auto& [id, m] = entry;
    auto t = target_.find(id);
    return m.state == State::kStable && m.epoch == target_epoch_ && t != target_.end() &&
           Keys(m.assigned.active) == t->second.active && m.assigned.standby == t->second.standby;
  });
}

}  // namespace restoresim::fakes
