#include "core/runtime/streams_group_assignor.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/runtime/assignment_info.h"
#include "core/runtime/count_topology.h"
#include "core/sync/thread.h"
#include "core/util/check.h"

namespace restoresim {
namespace {

struct Client {
  std::vector<std::string> consumers;  // member ids, sorted
  AssignorClient state;
  std::map<std::string, std::map<TaskId, int64_t>> reported;  // per consumer
};

absl::StatusOr<std::map<std::string, Client>> ClientsOf(
    const std::map<std::string, GroupMemberSubscription>& members, const std::string& topic) {
  std::map<std::string, Client> clients;
  for (const auto& [member, sub] : members) {
    if (!std::binary_search(sub.topics.begin(), sub.topics.end(), topic)) {
      return absl::InvalidArgumentError(
          fmt::format("member {} is not subscribed to the input topic {}", member, topic));
    }
    absl::StatusOr<SubscriptionInfo> info = SubscriptionInfo::Decode(sub.user_data);
    if (!info.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("member {}: {}", member, std::string(info.status().message())));
    }
    Client& c = clients[info->process_id];
    c.consumers.push_back(member);  // members arrive sorted
    c.reported[member] = info->task_offset_sums;
    for (const auto& [task, sum] : info->task_offset_sums) {
      auto [it, added] = c.state.offset_sums.emplace(task, sum);
      if (added || it->second == kLatestOffset) continue;
      it->second = sum == kLatestOffset ? sum : std::max(it->second, sum);
    }
  }
  for (auto& [id, c] : clients) c.state.capacity = static_cast<int32_t>(c.consumers.size());
  return clients;
}

// Step 4 of the header: `tasks` over the client's consumers.
void Distribute(const Client& c, const std::set<TaskId>& tasks,
                std::map<std::string, std::set<TaskId>>& out) {
  const size_t share = (tasks.size() + c.consumers.size() - 1) / c.consumers.size();
  std::set<TaskId> rest;
  for (TaskId t : tasks) {
    bool kept = false;
    for (const std::string& m : c.consumers) {
      if (c.reported.at(m).contains(t) && out[m].size() < share) {
        out[m].insert(t);
        kept = true;
        break;
      }
    }
    if (!kept) rest.insert(t);
  }
  for (TaskId t : rest) {
    const std::string* best = nullptr;
    for (const std::string& m : c.consumers) {
      if (best == nullptr || out[m].size() < out[*best].size()) best = &m;
    }
    out[*best].insert(t);
  }
}

}  // namespace

StreamsGroupAssignor::StreamsGroupAssignor(StreamsGroupAssignorConfig config, Clock& clock)
    : config_(std::move(config)), clock_(clock) {
  RS_CHECK(!config_.input_topic.empty() && !config_.store_names.empty(),
           "streams assignor without an input topic or stores");
}

absl::StatusOr<std::map<std::string, Assignment>> StreamsGroupAssignor::Assign(
    const std::string& leader_member_id,
    const std::map<std::string, GroupMemberSubscription>& members,
    const GroupAssignorContext& cluster) {
  RS_CHECK(members.contains(leader_member_id), "leader {} is not a member", leader_member_id);
  absl::StatusOr<std::map<std::string, Client>> clients = ClientsOf(members, config_.input_topic);
  if (!clients.ok()) return clients.status();
  const int32_t partitions = cluster.PartitionCount(config_.input_topic);
  if (partitions <= 0) {
    return absl::NotFoundError(fmt::format("input topic {} is unknown", config_.input_topic));
  }
  std::map<TaskId, int64_t> end_sums;
  for (int32_t p = 0; p < partitions; ++p) {
    int64_t& sum = end_sums[TaskId{0, p}];
    for (const std::string& store : config_.store_names) {
      sum += cluster.EndOffset({ChangelogTopic(config_.application_id, store), p}).value_or(0);
    }
  }
  std::map<std::string, AssignorClient> states;
  for (const auto& [id, c] : *clients) states[id] = c.state;
  absl::StatusOr<TaskAssignment> plan = AssignTasks(states, end_sums, config_.tasks);
  if (!plan.ok()) return plan.status();
  std::map<std::string, std::set<TaskId>> actives;
  std::map<std::string, std::set<TaskId>> standbys;
  bool warmups = false;
  for (const auto& [id, c] : *clients) {
    const ClientTasks& tasks = plan->clients.at(id);
    Distribute(c, tasks.actives, actives);
    Distribute(c, tasks.standbys, standbys);
    warmups = warmups || !tasks.warmups.empty();
  }
  std::map<std::string, Assignment> out;
  for (const auto& [member, sub] : members) {
    Assignment& a = out[member];
    for (TaskId t : actives[member]) a.partitions.push_back({config_.input_topic, t.partition});
    AssignmentInfo info{.standby_tasks = standbys[member]};
    if (plan->probing_rebalance_needed() && member == leader_member_id) {
      info.rebalance_at_ms =
          clock_.NowNs() / kMillisecond + config_.probing_rebalance_interval_ms;
    }
    a.user_data = info.Encode();
  }
  assignments_.fetch_add(1, std::memory_order_relaxed);
  if (warmups) {
    with_warmups_.fetch_add(1, std::memory_order_relaxed);
    TraceMark("cover", "streams assignor placed a warm-up");
  }
  if (plan->probing_rebalance_needed()) {
    probing_.fetch_add(1, std::memory_order_relaxed);
    TraceMark("cover", "streams assignor scheduled a probing rebalance");
  }
  return out;
}

}  // namespace restoresim
