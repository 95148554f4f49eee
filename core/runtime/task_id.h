// TaskId: a task of the topology, named as Kafka Streams names it: "<subtopology>_<partition>".
// Task 0_p reads partition p of the input topic and owns partition p of each changelog.
#ifndef RESTORESIM_CORE_RUNTIME_TASK_ID_H_
#define RESTORESIM_CORE_RUNTIME_TASK_ID_H_

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace restoresim {

struct TaskId {
  int32_t subtopology = 0;
  int32_t partition = 0;

  auto operator<=>(const TaskId&) const = default;
  std::string ToString() const;
  static std::optional<TaskId> Parse(std::string_view text);
};

// A task's life between create and close. A recycled or revived task is a new incarnation of
// the same TaskId; reports from the restore thread name the incarnation they are about, so the
// stream thread can drop reports about an incarnation it no longer owns.
struct TaskIncarnation {
  TaskId id;
  uint64_t incarnation = 0;  // unique within a runtime instance, increasing

  auto operator<=>(const TaskIncarnation&) const = default;
  std::string ToString() const;  // "0_1#7"
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_ID_H_
