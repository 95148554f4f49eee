#include "core/runtime/streams_assignor.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "core/runtime/assignment_info.h"
#include "core/util/check.h"

namespace restoresim {
namespace {

// Balancing passes over every pair of clients; each pass that moves nothing ends it. A pass
// moves at most every task once, so this bounds the work, not the result.
constexpr int kBalancePassesMax = 1000;

struct State {
  int32_t capacity = 1;
  std::set<TaskId> actives;
  std::set<TaskId> standbys;
  bool Has(TaskId t) const { return actives.contains(t) || standbys.contains(t); }
  int64_t count() const { return static_cast<int64_t>(actives.size() + standbys.size()); }
};
using States = std::map<std::string, State>;  // by process id: the stated tie order

// Assigned tasks per thread, compared exactly (cross-multiplied).
bool LessLoaded(const State& a, const State& b) {
  return a.count() * b.capacity < b.count() * a.capacity;
}

// Kafka's shouldMoveATask: moving one task from src to dst lowers the per-thread skew without
// reversing it. Both skews share the denominator capacity(src) * capacity(dst).
bool ShouldMove(const State& src, const State& dst) {
  const int64_t skew = src.count() * dst.capacity - dst.count() * src.capacity;
  const int64_t proposed = (src.count() - 1) * dst.capacity - (dst.count() + 1) * src.capacity;
  return skew > 0 && proposed >= 0;
}

void Balance(States& states, std::set<TaskId> State::*kind) {
  for (int pass = 0; pass < kBalancePassesMax; ++pass) {
    bool moved = false;
    for (auto& [src_id, src] : states) {
      for (auto& [dst_id, dst] : states) {
        if (src_id == dst_id) continue;
        const std::set<TaskId> tasks = src.*kind;
        for (TaskId t : tasks) {
          if (!ShouldMove(src, dst)) break;
          if (dst.Has(t)) continue;
          (src.*kind).erase(t);
          (dst.*kind).insert(t);
          moved = true;
        }
      }
    }
    if (!moved) return;
  }
}

// The least loaded client satisfying `eligible` (ties: lowest process id), or null.
const std::string* LeastLoaded(const States& states,
                               const std::function<bool(const std::string&)>& eligible) {
  const std::string* best = nullptr;
  for (const auto& [id, s] : states) {
    if (!eligible(id)) continue;
    if (best == nullptr || LessLoaded(s, states.at(*best))) best = &id;
  }
  return best;
}

struct Lags {
  std::map<TaskId, std::map<std::string, int64_t>> lag;       // task -> client -> lag
  std::map<TaskId, std::set<std::string>> caught_up;          // task -> caught-up clients
  // task -> clients, most caught up first
  std::map<TaskId, std::vector<std::string>> by_lag;
};

Lags ComputeLags(const std::map<std::string, AssignorClient>& clients,
                 const std::map<TaskId, int64_t>& end_offset_sums, int64_t acceptable_lag) {
  Lags l;
  for (const auto& [task, end] : end_offset_sums) {
    std::vector<std::pair<int64_t, std::string>> order;
    l.caught_up[task];  // every task has its (maybe empty) set
    for (const auto& [id, client] : clients) {
      const int64_t lag = TaskLag(client, task, end);
      l.lag[task][id] = lag;
      if (lag == kLatestOffset || (lag >= 0 && lag <= acceptable_lag)) {
        l.caught_up[task].insert(id);
      }
      order.emplace_back(lag, id);
    }
    std::sort(order.begin(), order.end());
    for (auto& [lag, id] : order) l.by_lag[task].push_back(id);
  }
  return l;
}

struct Movement {
  size_t caught_up_clients = 0;
  TaskId task;
  std::string destination;
  auto operator<=>(const Movement&) const = default;
};

// Whether `task` on `client` is not caught up while a more caught-up client exists.
bool NeedsMovement(const Lags& l, TaskId task, const std::string& client) {
  if (l.caught_up.at(task).contains(client)) return false;
  const std::map<std::string, int64_t>& lag = l.lag.at(task);
  return lag.at(l.by_lag.at(task).front()) < lag.at(client);
}

// The most caught-up client other than `destination`, more caught up than it, that
// `eligible` accepts; null if none.
const std::string* MostCaughtUp(const Lags& l, TaskId task, const std::string& destination,
                                const std::function<bool(const std::string&)>& eligible) {
  const std::map<std::string, int64_t>& lag = l.lag.at(task);
  for (const std::string& id : l.by_lag.at(task)) {
    if (lag.at(id) >= lag.at(destination)) return nullptr;
    if (id != destination && eligible(id)) return &id;
  }
  return nullptr;
}

class Planner {
 public:
  Planner(States& states, const Lags& lags, int32_t warmups_max)
      : states_(states), lags_(lags), warmups_left_(warmups_max) {}

  int32_t MoveActives();
  int32_t MoveStandbys();
  const std::map<std::string, std::set<TaskId>>& warmups() const { return warmups_; }

 private:
  bool CaughtUp(TaskId t, const std::string& c) const { return lags_.caught_up.at(t).contains(c); }
  void Swap(TaskId t, State& src, State& dst) {
    src.standbys.erase(t);
    src.actives.insert(t);
    dst.actives.erase(t);
    dst.standbys.insert(t);
  }
  void MoveActiveAndTryToWarmUp(TaskId t, State& src, const std::string& dst_id) {
    State& dst = states_.at(dst_id);
    src.actives.insert(t);
    dst.actives.erase(t);
    if (warmups_left_-- > 0) {
      dst.standbys.insert(t);
      warmups_[dst_id].insert(t);
    }
  }
  void MoveActive(const Movement& m);

  States& states_;
  const Lags& lags_;
  int32_t warmups_left_;
  std::map<std::string, std::set<TaskId>> warmups_;
};

void Planner::MoveActive(const Movement& m) {
  const TaskId t = m.task;
  if (const std::string* src = LeastLoaded(states_, [&](const std::string& c) {
        return CaughtUp(t, c) && states_.at(c).standbys.contains(t);
      })) {
    Swap(t, states_.at(*src), states_.at(m.destination));
    return;
  }
  if (const std::string* src =
          LeastLoaded(states_, [&](const std::string& c) { return CaughtUp(t, c); })) {
    MoveActiveAndTryToWarmUp(t, states_.at(*src), m.destination);
    return;
  }
  const std::string* src = MostCaughtUp(lags_, t, m.destination, [](const std::string&) {
    return true;
  });
  RS_CHECK(src != nullptr, "task {} scheduled to move off {} but no more caught-up client",
           t.ToString(), m.destination);
  if (states_.at(*src).standbys.contains(t)) {
    Swap(t, states_.at(*src), states_.at(m.destination));
  } else {
    MoveActiveAndTryToWarmUp(t, states_.at(*src), m.destination);
  }
}

int32_t Planner::MoveActives() {
  std::vector<Movement> movements;
  for (const auto& [id, s] : states_) {
    for (TaskId t : s.actives) {
      if (NeedsMovement(lags_, t, id)) {
        movements.push_back({lags_.caught_up.at(t).size(), t, id});
      }
    }
  }
  std::sort(movements.begin(), movements.end());
  for (const Movement& m : movements) MoveActive(m);
  return static_cast<int32_t>(movements.size());
}

int32_t Planner::MoveStandbys() {
  std::vector<Movement> movements;
  for (const auto& [id, s] : states_) {
    for (TaskId t : s.standbys) {
      const bool warmup = warmups_.contains(id) && warmups_.at(id).contains(t);
      if (!warmup && NeedsMovement(lags_, t, id)) {
        movements.push_back({lags_.caught_up.at(t).size(), t, id});
      }
    }
  }
  std::sort(movements.begin(), movements.end());
  int32_t moved = 0;
  for (const Movement& m : movements) {
    const TaskId t = m.task;
    auto without_task = [&](const std::string& c) { return !states_.at(c).Has(t); };
    const std::string* src = LeastLoaded(
        states_, [&](const std::string& c) { return CaughtUp(t, c) && without_task(c); });
    if (src == nullptr) src = MostCaughtUp(lags_, t, m.destination, without_task);
    if (src == nullptr) continue;  // every more caught-up client holds the task already
    states_.at(*src).standbys.insert(t);
    if (warmups_left_-- > 0) {
      warmups_[m.destination].insert(t);  // stays as a warm-up
    } else {
      states_.at(m.destination).standbys.erase(t);
    }
    ++moved;
  }
  return moved;
}

absl::Status Validate(const std::map<std::string, AssignorClient>& clients,
                      const TaskAssignorConfig& config) {
  if (clients.empty()) return absl::InvalidArgumentError("assign tasks: no clients");
  for (const auto& [id, c] : clients) {
    if (c.capacity < 1) {
      return absl::InvalidArgumentError(
          fmt::format("assign tasks: client {} has capacity {} (at least 1)", id, c.capacity));
    }
  }
  if (config.num_standby_replicas < 0 || config.max_warmup_replicas < 0 ||
      config.acceptable_recovery_lag < 0) {
    return absl::InvalidArgumentError(fmt::format(
        "assign tasks: negative setting (num.standby.replicas={}, max.warmup.replicas={}, "
        "acceptable.recovery.lag={})", config.num_standby_replicas, config.max_warmup_replicas,
        config.acceptable_recovery_lag));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t TaskLag(const AssignorClient& client, TaskId task, int64_t end_offset_sum) {
  auto it = client.offset_sums.find(task);
  if (it == client.offset_sums.end()) return end_offset_sum;
  if (it->second == kLatestOffset) return kLatestOffset;
  if (it->second > end_offset_sum) return end_offset_sum;  // corrupted: from scratch
  return end_offset_sum - it->second;
}

absl::StatusOr<TaskAssignment> AssignTasks(const std::map<std::string, AssignorClient>& clients,
                                           const std::map<TaskId, int64_t>& end_offset_sums,
                                           const TaskAssignorConfig& config) {
  if (absl::Status s = Validate(clients, config); !s.ok()) return s;
  States states;
  for (const auto& [id, c] : clients) states[id].capacity = c.capacity;
  // 1: actives round-robin in process-id order, then balanced over threads.
  auto next = states.begin();
  for (const auto& [task, end] : end_offset_sums) {
    next->second.actives.insert(task);
    if (++next == states.end()) next = states.begin();
  }
  Balance(states, &State::actives);
  // 2: standbys on the least loaded clients without the task.
  for (const auto& entry : end_offset_sums) {
    const TaskId& task = entry.first;  // not a structured binding: a lambda captures it
    for (int32_t r = 0; r < config.num_standby_replicas; ++r) {
      const std::string* c =
          LeastLoaded(states, [&](const std::string& id) { return !states.at(id).Has(task); });
      if (c == nullptr) break;  // fewer other clients than replicas asked for
      states.at(*c).standbys.insert(task);
    }
  }
  Balance(states, &State::standbys);
  // 3, 4: movements toward caught-up clients, with warm-ups.
  const Lags lags = ComputeLags(clients, end_offset_sums, config.acceptable_recovery_lag);
  Planner planner(states, lags, config.max_warmup_replicas);
  TaskAssignment out;
  out.active_movements = planner.MoveActives();
  out.standby_movements = planner.MoveStandbys();
  for (auto& [id, s] : states) {
    ClientTasks& c = out.clients[id];
    c.actives = std::move(s.actives);
    c.standbys = std::move(s.standbys);
    if (planner.warmups().contains(id)) c.warmups = planner.warmups().at(id);
    for (TaskId t : c.warmups) {
      RS_CHECK(c.standbys.contains(t) && !c.actives.contains(t),
               "warm-up {} on {} is not a standby there", t.ToString(), id);
    }
  }
  return out;
}

}  // namespace restoresim
