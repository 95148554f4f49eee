#include "fakes/fake_streams_assignor.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "core/util/check.h"

namespace restoresim::fakes {
namespace {

// Kafka's ProcessState: the members of one process and what it holds.
struct Process {
  int32_t capacity = 0;  // members
  int32_t task_count = 0;
  std::map<std::string, int32_t> member_task_counts;
  StreamsTaskSet tasks;  // active and standby
  double Load() const { return static_cast<double>(task_count) / capacity; }
};

// Kafka's LocalState.
struct State {
  std::map<std::string, Process> processes;
  std::map<std::string, std::string> process_of;              // member -> process
  std::map<StreamsTaskId, std::string> previous_active;       // task -> member
  std::map<StreamsTaskId, std::vector<std::string>> previous_standby;  // task -> members
  std::map<std::string, StreamsTargetTasks> out;
  int32_t standby_replicas = 0;
  int32_t total_active = 0;
  int32_t total_tasks = 0;
  int32_t members_with_active_room = 0;
  int32_t members_with_room = 0;
  int32_t active_per_member = 0;
  int32_t tasks_per_member = 0;
};

int32_t PerMember(int32_t tasks, int32_t members) {
  return members == 0 ? 0 : (tasks + members - 1) / members;
}

// Adds `task` to `member`; returns the member's new task count.
int32_t AddTask(State& s, const std::string& member, const StreamsTaskId& task, bool active) {
  Process& p = s.processes.at(s.process_of.at(member));
  RS_CHECK(!p.tasks.contains(task) || active, "standby {} twice on one process", task.ToString());
  ++p.task_count;
  p.tasks.insert(task);
  (active ? s.out[member].active : s.out[member].standby).insert(task);
  return ++p.member_task_counts.at(member);
}

// Kafka's addTaskToLeastLoadedMember: the member with the fewest tasks (then the lowest id).
int32_t AddToLeastLoadedMember(State& s, const std::string& process, const StreamsTaskId& task,
                               bool active) {
  const Process& p = s.processes.at(process);
  RS_CHECK(!p.member_task_counts.empty(), "process {} without members", process);
  auto least = std::min_element(p.member_task_counts.begin(), p.member_task_counts.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; });
  return AddTask(s, least->first, task, active);
}

// Process ids by (load, id): Kafka's PriorityQueue<ProcessState> by load.
std::vector<std::string> ProcessesByLoad(const State& s) {
  std::vector<std::string> ids;
  for (const auto& [id, p] : s.processes) ids.push_back(id);
  std::stable_sort(ids.begin(), ids.end(), [&](const std::string& a, const std::string& b) {
    return s.processes.at(a).Load() < s.processes.at(b).Load();
  });
  return ids;
}

void ActiveAdded(State& s, int32_t count) {  // Kafka's maybeUpdateActiveTasksPerMember
  if (count != s.active_per_member) return;
  --s.members_with_active_room;
  s.total_active -= count;
  s.active_per_member = PerMember(s.total_active, s.members_with_active_room);
}

void TaskAdded(State& s, int32_t count) {  // Kafka's maybeUpdateTotalTasksPerMember
  if (count != s.tasks_per_member) return;
  --s.members_with_room;
  s.total_tasks -= count;
  s.tasks_per_member = PerMember(s.total_tasks, s.members_with_room);
}

int32_t CountOf(const State& s, const std::string& member) {
  return s.processes.at(s.process_of.at(member)).member_task_counts.at(member);
}

// Kafka's findPrevMemberWithLeastLoad.
std::optional<std::string> PreviousWithLeastLoad(const State& s,
                                                 const std::vector<std::string>* members,
                                                 const std::optional<StreamsTaskId>& standby) {
  if (members == nullptr) return std::nullopt;
  std::optional<std::string> candidate;
  double candidate_process_load = 0;
  int32_t candidate_member_load = 0;
  for (const std::string& m : *members) {
    const Process& p = s.processes.at(s.process_of.at(m));
    if (standby.has_value() && p.tasks.contains(*standby)) continue;
    const double process_load = p.Load();
    const int32_t member_load = p.member_task_counts.at(m);
    if (!candidate.has_value() ||
        (process_load < candidate_process_load && member_load < candidate_member_load)) {
      candidate = m;
      candidate_process_load = process_load;
      candidate_member_load = member_load;
    }
  }
  return candidate;
}

State Initialize(const std::map<std::string, StreamsAssignorMember>& members,
                 const StreamsAssignorTopology& topology, int32_t standby_replicas) {
  State s;
  s.standby_replicas = standby_replicas;
  for (const auto& [sub, partitions] : topology.partitions_by_subtopology) {
    s.total_active += partitions;
    s.total_tasks += partitions * (topology.stateful.contains(sub) ? 1 + standby_replicas : 1);
  }
  s.members_with_active_room = s.members_with_room = static_cast<int32_t>(members.size());
  s.active_per_member = PerMember(s.total_active, s.members_with_active_room);
  s.tasks_per_member = PerMember(s.total_tasks, s.members_with_room);
  for (const auto& [id, m] : members) {
    Process& p = s.processes[m.process_id];
    p.member_task_counts[id] = 0;
    ++p.capacity;
    s.process_of[id] = m.process_id;
    s.out[id];
    for (const StreamsTaskId& t : m.previous_active) s.previous_active[t] = id;
    for (const StreamsTaskId& t : m.previous_standby) s.previous_standby[t].push_back(id);
  }
  return s;
}

std::vector<StreamsTaskId> Tasks(const StreamsAssignorTopology& topology, bool stateful_only) {
  std::vector<StreamsTaskId> tasks;
  for (const auto& [sub, partitions] : topology.partitions_by_subtopology) {
    if (stateful_only && !topology.stateful.contains(sub)) continue;
    for (int32_t p = 0; p < partitions; ++p) tasks.push_back({sub, p});
  }
  return tasks;  // by subtopology, then partition
}

bool ByPartition(const StreamsTaskId& a, const StreamsTaskId& b) {
  return std::tie(a.partition, a.subtopology) < std::tie(b.partition, b.subtopology);
}

// Kafka's assignActive, its three passes.
void AssignActive(State& s, std::vector<StreamsTaskId> tasks) {
  std::sort(tasks.begin(), tasks.end(), ByPartition);
  auto place = [&](const StreamsTaskId& task, const std::optional<std::string>& member) {
    if (!member.has_value() || CountOf(s, *member) >= s.active_per_member) return false;
    const int32_t count = AddTask(s, *member, task, true);
    ActiveAdded(s, count);
    TaskAdded(s, count);
    return true;
  };
  std::erase_if(tasks, [&](const StreamsTaskId& task) {
    auto it = s.previous_active.find(task);
    return place(task, it == s.previous_active.end() ? std::nullopt
                                                     : std::optional<std::string>(it->second));
  });
  std::erase_if(tasks, [&](const StreamsTaskId& task) {
    auto it = s.previous_standby.find(task);
    return place(task, PreviousWithLeastLoad(
                           s, it == s.previous_standby.end() ? nullptr : &it->second, {}));
  });
  std::sort(tasks.begin(), tasks.end());  // by subtopology: a range-like first assignment
  for (const StreamsTaskId& task : tasks) {
    const std::vector<std::string> by_load = ProcessesByLoad(s);
    RS_CHECK(!by_load.empty(), "no process for active task {}", task.ToString());
    const int32_t count = AddToLeastLoadedMember(s, by_load.front(), task, true);
    ActiveAdded(s, count);
    TaskAdded(s, count);
  }
}

// Kafka's standby placement on a previous owner; false: none fits.
bool PlaceStandbyOnPrevious(State& s, const StreamsTaskId& task) {
  if (auto it = s.previous_active.find(task); it != s.previous_active.end()) {
    const std::string& m = it->second;
    const Process& p = s.processes.at(s.process_of.at(m));
    if (!p.tasks.contains(task) && CountOf(s, m) < s.tasks_per_member) {
      TaskAdded(s, AddTask(s, m, task, false));
      return true;
    }
  }
  auto it = s.previous_standby.find(task);
  if (it == s.previous_standby.end()) return false;
  std::optional<std::string> m = PreviousWithLeastLoad(s, &it->second, task);
  if (!m.has_value() || CountOf(s, *m) >= s.tasks_per_member) return false;
  TaskAdded(s, AddTask(s, *m, task, false));
  return true;
}

void AssignStandby(State& s, std::vector<StreamsTaskId> tasks) {
  std::sort(tasks.begin(), tasks.end(), ByPartition);
  std::reverse(tasks.begin(), tasks.end());
  std::vector<std::pair<StreamsTaskId, int32_t>> to_least_loaded;  // task, replicas left
  for (const StreamsTaskId& task : tasks) {
    for (int32_t i = 0; i < s.standby_replicas; ++i) {
      if (PlaceStandbyOnPrevious(s, task)) continue;
      to_least_loaded.emplace_back(task, s.standby_replicas - i);
      break;
    }
  }
  std::sort(to_least_loaded.begin(), to_least_loaded.end());
  std::reverse(to_least_loaded.begin(), to_least_loaded.end());
  for (const auto& [task, replicas] : to_least_loaded) {
    for (int32_t i = 0; i < replicas; ++i) {
      bool placed = false;
      for (const std::string& process : ProcessesByLoad(s)) {
        if (s.processes.at(process).tasks.contains(task)) continue;
        TaskAdded(s, AddToLeastLoadedMember(s, process, task, false));
        placed = true;
        break;
      }
      if (!placed) break;  // not enough processes: Kafka warns and leaves it out
    }
  }
}

}  // namespace

std::map<std::string, StreamsTargetTasks> AssignStickyTasks(
    const std::map<std::string, StreamsAssignorMember>& members,
    const StreamsAssignorTopology& topology, int32_t num_standby_replicas) {
  RS_CHECK_GE(num_standby_replicas, 0);
  if (members.empty()) return {};
  State s = Initialize(members, topology, num_standby_replicas);
  AssignActive(s, Tasks(topology, false));
  if (num_standby_replicas > 0) AssignStandby(s, Tasks(topology, true));
  for (const auto& [id, tasks] : s.out) {
    for (const StreamsTaskId& t : tasks.standby) {
      RS_CHECK(!tasks.active.contains(t), "member {} has {} active and standby", id, t.ToString());
    }
  }
  return std::move(s.out);
}

}  // namespace restoresim::fakes
