#include "fakes/fake_group.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <utility>

#include "core/util/check.h"

namespace restoresim::fakes {
namespace {

std::vector<TopicPartition> Sorted(std::vector<TopicPartition> partitions) {
  std::sort(partitions.begin(), partitions.end());
  return partitions;
}

// a - b, both sorted.
std::vector<TopicPartition> Minus(const std::vector<TopicPartition>& a,
                                  const std::vector<TopicPartition>& b) {
  std::vector<TopicPartition> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace

GroupCoordinator::GroupCoordinator(std::string group, PartitionCounter partition_count,
                                   EndOffsetReader end_offset)
    : group_(std::move(group)),
      partition_count_(std::move(partition_count)),
      end_offset_(std::move(end_offset)) {}

std::string GroupCoordinator::Join(const std::string& client_id,
                                   const std::vector<std::string>& topics,
                                   GroupAssignor* assignor, std::string user_data) {
  const std::string id = fmt::format("{}-{}", client_id, next_member_number_++);
  Member& m = members_[id];
  RS_CHECK(m.client_id.empty(), "member id {} reused in group {}", id, group_);
  m.client_id = client_id;
  m.topics = topics;
  m.assignor = assignor;
  m.user_data = std::move(user_data);
  std::sort(m.topics.begin(), m.topics.end());
  join_order_.push_back(id);
  MembershipChanged();
  return id;
}

void GroupCoordinator::Leave(const std::string& member_id) {
  auto it = members_.find(member_id);
  if (it == members_.end()) return;
  const bool was_active = !it->second.lost;
  members_.erase(it);
  std::erase(join_order_, member_id);
  if (was_active) MembershipChanged();
  ReleaseHeld();
}

void GroupCoordinator::Rejoin(const std::string& member_id) {
  auto it = members_.find(member_id);
  RS_CHECK(it != members_.end() && it->second.lost, "rejoin of {} which is not lost", member_id);
  it->second.lost = false;
  join_order_.push_back(member_id);
  MembershipChanged();
}

absl::Status GroupCoordinator::Lose(const std::string& member_id) {
  if (!IsActive(member_id)) {
    return absl::NotFoundError(
        fmt::format("member {} is not active in group {}", member_id, group_));
  }
  Member& m = members_.at(member_id);
  RebalanceEvent lost;
  lost.kind = RebalanceEvent::Kind::kLost;
  lost.generation = generation_;
  lost.revoked = std::move(m.owned);
  m.owned.clear();
  m.target = Assignment{};
  Push(m, std::move(lost));
  m.lost = true;  // fenced: it holds nothing back from now on
  m.taken.clear();
  m.delivered.clear();
  std::erase(join_order_, member_id);
  MembershipChanged();
  ReleaseHeld();
  return absl::OkStatus();
}

absl::Status GroupCoordinator::Rebalance(const std::map<std::string, Assignment>& assignments) {
  if (absl::Status s = ValidateAssignment(assignments); !s.ok()) {
    return absl::Status(s.code(),
                        fmt::format("{} in group {}", std::string(s.message()), group_));
  }
  for (const std::string& id : join_order_) {
    if (members_.at(id).pending.size() >= kPendingEventsMax) {
      return absl::FailedPreconditionError(
          fmt::format("member {} has {} rebalances it has not polled for", id, kPendingEventsMax));
    }
  }
  InstallGeneration(assignments);
  return absl::OkStatus();
}

absl::Status GroupCoordinator::SetUserData(const std::string& member_id, std::string user_data) {
  auto it = members_.find(member_id);
  if (it == members_.end()) {
    return absl::NotFoundError(fmt::format("member {} is not in group {}", member_id, group_));
  }
  it->second.user_data = std::move(user_data);
  return absl::OkStatus();
}

absl::Status GroupCoordinator::EnforceRebalance(const std::string& member_id) {
  if (!IsActive(member_id)) {
    return absl::NotFoundError(
        fmt::format("member {} is not active in group {}", member_id, group_));
  }
  for (const std::string& id : join_order_) {
    if (members_.at(id).pending.size() >= kPendingEventsMax) {
      return absl::FailedPreconditionError(
          fmt::format("member {} has {} rebalances it has not polled for", id, kPendingEventsMax));
    }
  }
  MembershipChanged();
  return absl::OkStatus();
}

void GroupCoordinator::MembershipChanged() {
  if (manual_) return;
  if (UsesLeaderAssignor() && AssignWithLeader()) return;
  AssignRoundRobin();
}

bool GroupCoordinator::UsesLeaderAssignor() const {
  if (join_order_.empty()) return false;
  const GroupAssignor* leader = members_.at(join_order_.front()).assignor;
  if (leader == nullptr) return false;
  const std::string name = leader->Name();
  for (const std::string& id : join_order_) {
    const GroupAssignor* a = members_.at(id).assignor;
    if (a == nullptr || a->Name() != name) return false;
  }
  return true;
}

namespace {

// The broker's view for an assignor run (under the broker's lock).
class CoordinatorContext final : public GroupAssignorContext {
 public:
  CoordinatorContext(const GroupCoordinator::PartitionCounter& count,
                     const GroupCoordinator::EndOffsetReader& end)
      : count_(count), end_(end) {}
  int32_t PartitionCount(const std::string& topic) const override { return count_(topic); }
  std::optional<int64_t> EndOffset(const TopicPartition& tp) const override {
    if (!end_) return std::nullopt;
    return end_(tp);
  }

 private:
  const GroupCoordinator::PartitionCounter& count_;
  const GroupCoordinator::EndOffsetReader& end_;
};

}  // namespace

bool GroupCoordinator::AssignWithLeader() {
  const std::string& leader = join_order_.front();
  std::map<std::string, GroupMemberSubscription> subscriptions;
  for (const std::string& id : join_order_) {
    const Member& m = members_.at(id);
    subscriptions[id] = GroupMemberSubscription{
        .topics = m.topics, .user_data = m.user_data, .owned = m.owned};
  }
  CoordinatorContext context(partition_count_, end_offset_);
  absl::StatusOr<std::map<std::string, Assignment>> assigned =
      members_.at(leader).assignor->Assign(leader, subscriptions, context);
  absl::Status valid = assigned.ok() ? ValidateAssignment(*assigned) : assigned.status();
  if (!valid.ok()) {
    last_assignor_error_ = absl::Status(
        valid.code(),
        fmt::format("group {}: the leader {}'s assignor failed, default assignment used: {}",
                    group_, leader, std::string(valid.message())));
    return false;
  }
  last_assignor_error_ = absl::OkStatus();
  InstallGeneration(*assigned);
  return true;
}

absl::Status GroupCoordinator::ValidateAssignment(
    const std::map<std::string, Assignment>& assignments) const {
  std::set<TopicPartition> seen;
  for (const auto& [member_id, assignment] : assignments) {
    if (!IsActive(member_id)) {
      return absl::NotFoundError(fmt::format("member {} is not active", member_id));
    }
    for (const TopicPartition& tp : assignment.partitions) {
      if (tp.partition < 0 || tp.partition >= partition_count_(tp.topic)) {
        return absl::NotFoundError(fmt::format("unknown partition {}", tp.ToString()));
      }
      if (!seen.insert(tp).second) {
        return absl::InvalidArgumentError(fmt::format("partition {} assigned twice",
                                                      tp.ToString()));
      }
    }
  }
  return absl::OkStatus();
}

void GroupCoordinator::AssignRoundRobin() {
  std::set<std::string> topics;
  for (const std::string& id : join_order_) {
    const Member& m = members_.at(id);
    topics.insert(m.topics.begin(), m.topics.end());
  }
  std::map<std::string, Assignment> assignments;
  size_t cursor = 0;  // the member after the one that got the previous partition
  for (const std::string& topic : topics) {
    for (int32_t p = 0; p < partition_count_(topic); ++p) {
      for (size_t tried = 0; tried < join_order_.size(); ++tried) {
        const size_t index = (cursor + tried) % join_order_.size();
        const Member& m = members_.at(join_order_[index]);
        if (!std::binary_search(m.topics.begin(), m.topics.end(), topic)) continue;
        assignments[join_order_[index]].partitions.push_back(TopicPartition{topic, p});
        cursor = index + 1;
        break;
      }
    }
  }
  InstallGeneration(assignments);
}

void GroupCoordinator::InstallGeneration(const std::map<std::string, Assignment>& assignments) {
  ++generation_;
  for (const std::string& id : join_order_) {
    Member& m = members_.at(id);
    m.target = Assignment{};
    if (auto it = assignments.find(id); it != assignments.end()) m.target = it->second;
    m.target.partitions = Sorted(std::move(m.target.partitions));
    RebalanceEvent e;
    e.generation = generation_;
    e.assigned.user_data = m.target.user_data;
    for (const TopicPartition& tp : m.target.partitions) {
      if (!HeldByOther(tp, id)) e.assigned.partitions.push_back(tp);  // else: granted later
    }
    e.revoked = Minus(m.owned, e.assigned.partitions);
    m.owned = e.assigned.partitions;
    Push(m, std::move(e));
  }
}

bool GroupCoordinator::HeldByOther(const TopicPartition& tp, const std::string& member_id) const {
  for (const auto& [id, m] : members_) {
    if (id == member_id || m.lost) continue;
    if (std::binary_search(m.delivered.begin(), m.delivered.end(), tp) ||
        std::binary_search(m.taken.begin(), m.taken.end(), tp)) {
      return true;
    }
  }
  return false;
}

bool GroupCoordinator::ReleaseHeld() {
  std::map<std::string, std::vector<TopicPartition>> grants;
  bool granted_any = false;
  for (const std::string& id : join_order_) {
    const Member& m = members_.at(id);
    std::vector<TopicPartition> grant = m.owned;
    for (const TopicPartition& tp : Minus(m.target.partitions, m.owned)) {
      if (!HeldByOther(tp, id)) grant.push_back(tp);
    }
    grant = Sorted(std::move(grant));
    granted_any = granted_any || grant != m.owned;
    grants[id] = std::move(grant);
  }
  if (!granted_any) return false;
  // The follow-up round of an incremental cooperative rebalance is one generation that every
  // member takes part in (as in Kafka, where all members rejoin): each is told its whole
  // assignment, changed or not.
  ++generation_;
  for (const std::string& id : join_order_) {
    Member& m = members_.at(id);
    RebalanceEvent e;
    e.generation = generation_;
    e.assigned.user_data = m.target.user_data;
    e.assigned.partitions = grants.at(id);
    m.owned = e.assigned.partitions;
    Push(m, std::move(e));
  }
  return true;
}

bool GroupCoordinator::Acknowledge(const std::string& member_id) {
  auto it = members_.find(member_id);
  if (it == members_.end()) return ReleaseHeld();
  it->second.delivered = it->second.taken;
  it->second.unacknowledged = false;
  return ReleaseHeld();
}

void GroupCoordinator::Push(Member& member, RebalanceEvent event) {
  RS_CHECK_LT(member.pending.size(), kPendingEventsMax,
              "group {}: a member has not polled for {} rebalances", group_, kPendingEventsMax);
  member.pending.push_back(std::move(event));
}

std::vector<RebalanceEvent> GroupCoordinator::TakeEvents(const std::string& member_id,
                                                         bool* must_rejoin) {
  *must_rejoin = false;
  auto it = members_.find(member_id);
  if (it == members_.end()) return {};
  *must_rejoin = it->second.lost;
  std::vector<RebalanceEvent> events = std::exchange(it->second.pending, {});
  // Until Acknowledge: a generation that changes only the user data (standbys) leaves `taken`
  // equal to `delivered`, and the member still acts on the one before (seed 145, the test
  // AGenerationChangingOnlyUserDataIsUnsettledUntilAcknowledged).
  if (!events.empty()) it->second.unacknowledged = true;
  for (const RebalanceEvent& e : events) {
    it->second.taken = e.kind == RebalanceEvent::Kind::kLost ? std::vector<TopicPartition>()
                                                            : e.assigned.partitions;
  }
  return events;
}

bool GroupCoordinator::HasEvents(const std::string& member_id) const {
  auto it = members_.find(member_id);
  return it != members_.end() && !it->second.pending.empty();
}

bool GroupCoordinator::Settled() const {
  for (const auto& [id, m] : members_) {
    if (!m.pending.empty() || m.unacknowledged || m.taken != m.delivered) return false;
    if (!m.lost && m.owned != m.target.partitions) return false;
  }
  return true;
}

bool GroupCoordinator::IsActive(const std::string& member_id) const {
  auto it = members_.find(member_id);
  return it != members_.end() && !it->second.lost;
}

}  // namespace restoresim::fakes
