// For core/runtime's unit tests: a task whose stores are never opened (its directory does not
// exist and its store opener refuses), for tests of where tasks are and how they move.
#ifndef RESTORESIM_CORE_RUNTIME_TASK_TEST_UTIL_H_
#define RESTORESIM_CORE_RUNTIME_TASK_TEST_UTIL_H_

#include <memory>
#include <string>

#include "core/port/posix_file_system.h"
#include "core/runtime/state_manager.h"
#include "core/runtime/task.h"

namespace restoresim::testing {

inline std::unique_ptr<Task> StorelessTask(int partition, uint64_t incarnation,
                                           TaskType type = TaskType::kActive) {
  StateManagerConfig c;
  c.application_id = "app";
  c.task_dir = "/nonexistent/app/0_" + std::to_string(partition);  // stores never opened
  c.fs = PosixFileSystem::Default();
  c.open_store = [](const std::string&, const std::string&)
      -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
    return absl::UnimplementedError("no stores in this test");
  };
  const TaskId id{0, partition};
  return std::make_unique<Task>(TaskIncarnation{id, incarnation},
                                std::make_unique<StateManager>(id, type, std::move(c)),
                                TopicPartition{"input", partition});
}

}  // namespace restoresim::testing

#endif  // RESTORESIM_CORE_RUNTIME_TASK_TEST_UTIL_H_
