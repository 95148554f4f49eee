#include "core/runtime/task.h"

#include <fmt/format.h>

#include "core/runtime/count_topology.h"
#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"

namespace restoresim {

std::string_view TaskStateName(TaskState state) {
  switch (state) {
    case TaskState::kCreated: return "CREATED";
    case TaskState::kRestoring: return "RESTORING";
    case TaskState::kRunning: return "RUNNING";
    case TaskState::kSuspended: return "SUSPENDED";
    case TaskState::kClosed: return "CLOSED";
  }
  return "?";
}

namespace {

bool Allowed(TaskState from, TaskState to, TaskType type) {
  switch (from) {
    case TaskState::kCreated:
      return to == TaskState::kRestoring || to == TaskState::kSuspended ||
             to == TaskState::kClosed;
    case TaskState::kRestoring:
      return (to == TaskState::kRunning && type == TaskType::kActive) ||
             to == TaskState::kSuspended;
    case TaskState::kRunning:
      return to == TaskState::kSuspended;
    case TaskState::kSuspended:
      return to == TaskState::kRestoring || to == TaskState::kClosed;
    case TaskState::kClosed:
      return false;
  }
  return false;
}

}  // namespace

Task::Task(TaskIncarnation incarnation, std::unique_ptr<StateManager> state_manager,
           TopicPartition input)
    : incarnation_(incarnation), state_manager_(std::move(state_manager)),
      input_(std::move(input)) {
  RS_CHECK(state_manager_ != nullptr && state_manager_->id() == incarnation_.id,
           "task {} built over another task's state", incarnation_.ToString());
  RS_OBSERVE(OnTaskOpened, *this);
}

Task::~Task() { RS_OBSERVE(OnTaskDestroyed, incarnation_, state_); }

void Task::TransitionTo(TaskState next) {
  RS_CHECK(Allowed(state_, next, type()), "task {} ({}): illegal transition {} -> {}",
           incarnation_.ToString(), TaskTypeName(type()), TaskStateName(state_),
           TaskStateName(next));
  const TaskState from = state_;
  state_ = next;
  TraceMark("task", fmt::format("{} {} {} -> {}", incarnation_.ToString(), TaskTypeName(type()),
                                TaskStateName(from), TaskStateName(next)));
  RS_OBSERVE(OnTaskTransition, *this, from, next);
}

std::unique_ptr<StateManager> Task::CloseAndRecycleState() {
  RS_CHECK(state_ == TaskState::kSuspended, "task {} recycled in state {} (must be SUSPENDED)",
           incarnation_.ToString(), TaskStateName(state_));
  state_ = TaskState::kClosed;
  RS_OBSERVE(OnTaskTransition, *this, TaskState::kSuspended, TaskState::kClosed);
  return std::move(state_manager_);
}

void Task::Buffer(std::vector<ConsumerRecord> records) {
  for (ConsumerRecord& r : records) buffered_.push_back(std::move(r));
}

absl::StatusOr<size_t> Task::Process(Producer& producer, size_t records_max) {
  RS_CHECK(type() == TaskType::kActive && state_ == TaskState::kRunning,
           "task {} processes as {} in {}", incarnation_.ToString(), TaskTypeName(type()),
           TaskStateName(state_));
  // Every store of the topology, with its changelog.
  struct Target {
    KeyValueStore* store;
    TopicPartition changelog;
  };
  std::vector<Target> targets;
  state_manager_->ForEachStore(
      [&](const std::string&, KeyValueStore& store, const TopicPartition& changelog) {
        targets.push_back({&store, changelog});
      });
  RS_CHECK(!targets.empty(), "task {} processes without stores", incarnation_.ToString());
  RS_OBSERVE(OnProcess, *this, buffered_.size() < records_max ? buffered_.size() : records_max);
  size_t processed = 0;
  while (processed < records_max && !buffered_.empty()) {
    const ConsumerRecord& input = buffered_.front();
    for (const Target& t : targets) {
      absl::StatusOr<std::optional<std::string>> current = t.store->Get(input.key);
      if (!current.ok()) return current.status();
      std::optional<KeyValueWrite> w = StoreUpdate(t.store->name(), input, *current);
      if (!w) continue;
      absl::Status s = w->value ? t.store->Put(w->key, *w->value) : t.store->Delete(w->key);
      if (!s.ok()) return s;
      s = producer.Send(t.changelog, w->key, w->value, input.timestamp_ms);
      if (!s.ok()) return s;
    }
    consumed_offset_ = input.offset + 1;
    buffered_.pop_front();
    ++processed;
    ++processed_records_;
  }
  return processed;
}

}  // namespace restoresim
