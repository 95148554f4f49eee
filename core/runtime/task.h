// Task: one incarnation of an active or standby task, with Kafka Streams' lifecycle
//
//   CREATED -> RESTORING -> RUNNING -> SUSPENDED -> CLOSED
//                  |                      ^  |
//                  +----------------------+  +-> RESTORING (resumed)
//
// (a standby never runs: it stays RESTORING — "updating" — until suspended). Every transition
// is checked. A task owns its StateManager; recycling moves the StateManager (stores and
// offsets kept) into a new Task of the other type and a new incarnation; reviving after
// corruption is a new incarnation over fresh stores.
//
// Active tasks process input records of their partition through the count topology: each
// record updates the store and queues a changelog record on the producer.
//
// Thread-safety: not thread-safe; owned by one thread at a time (see docs/DESIGN.md).
#ifndef RESTORESIM_CORE_RUNTIME_TASK_H_
#define RESTORESIM_CORE_RUNTIME_TASK_H_

#include <deque>
#include <memory>
#include <optional>
#include <string_view>

#include "core/runtime/state_manager.h"
#include "core/runtime/task_id.h"
#include "core/transport/transport.h"

namespace restoresim {

enum class TaskState { kCreated, kRestoring, kRunning, kSuspended, kClosed };
std::string_view TaskStateName(TaskState state);

class Task {
 public:
  Task(TaskIncarnation incarnation, std::unique_ptr<StateManager> state_manager,
       TopicPartition input);
  ~Task();
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  const TaskIncarnation& incarnation() const { return incarnation_; }
  TaskId id() const { return incarnation_.id; }
  TaskType type() const { return state_manager_->type(); }
  // The type it will have once a prepared conversion completes (recycled, not yet registered).
  TaskType effective_type() const { return state_manager_->effective_type(); }
  TaskState state() const { return state_; }
  StateManager& state_manager() { return *state_manager_; }
  const StateManager& state_manager() const { return *state_manager_; }
  const TopicPartition& input() const { return input_; }

  // Checked transitions (see the diagram); anything else is a runtime bug.
  void TransitionTo(TaskState next);
  // Hands the state manager over (recycle). REQUIRES: SUSPENDED; leaves the task CLOSED.
  std::unique_ptr<StateManager> CloseAndRecycleState();

  // ---- active processing ----
  void Buffer(std::vector<ConsumerRecord> records);
  size_t buffered() const { return buffered_.size(); }
  // Drops what was fetched and not processed (its partition was revoked: the next owner, or
  // this task once the partition is back, fetches it again from the committed offset).
  void DropBuffered() { buffered_.clear(); }
  // Processes up to `records_max` buffered records. REQUIRES: an active task in RUNNING.
  absl::StatusOr<size_t> Process(Producer& producer, size_t records_max);
  // The next input offset to commit, once something was processed.
  std::optional<int64_t> consumed_offset() const { return consumed_offset_; }
  int64_t processed_records() const { return processed_records_; }

 private:
  const TaskIncarnation incarnation_;
  std::unique_ptr<StateManager> state_manager_;
  const TopicPartition input_;
  TaskState state_ = TaskState::kCreated;
  std::deque<ConsumerRecord> buffered_;
  std::optional<int64_t> consumed_offset_;
  int64_t processed_records_ = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_H_
