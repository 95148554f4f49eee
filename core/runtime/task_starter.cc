#include "core/runtime/task_starter.h"

#include <fmt/format.h>

#include "core/runtime/runtime_observer.h"
#include "core/runtime/task_timeout.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

TaskStarter::TaskStarter(const TaskManagerConfig& config, TasksRegistry& tasks,
                         MainConsumer& consumer, std::vector<absl::Status>& errors)
    : config_(config), tasks_(tasks), consumer_(consumer), errors_(errors) {}

TaskStarter::Outcome TaskStarter::Start(std::unique_ptr<Task>& task, absl::Status* error) {
  RS_CHECK(task != nullptr && task->state() == TaskState::kRestoring, "{}: start of a task not "
           "restoring", config_.thread_name);
  const Outcome outcome = Prepare(*task, error);
  if (outcome == Outcome::kStart) Run(std::move(task));
  if (outcome == Outcome::kRetry) tasks_.AddRestored(std::move(task));
  RS_CHECK((outcome == Outcome::kFail) == (task != nullptr) &&
               (outcome != Outcome::kFail || !error->ok()),
           "{}: a start that failed keeps its task, and only that one", config_.thread_name);
  return outcome;
}

void TaskStarter::Run(std::unique_ptr<Task> task) {
  // Its input is the partition its id names, as when it was created: input partitions of a
  // task never change here (task_manager.h).
  const TopicPartition input{config_.input_topic, task->id().partition};
  RS_CHECK(task->type() == TaskType::kActive && task->input() == input,
           "task {} runs with input {}, not {}", task->incarnation().ToString(),
           task->input().ToString(), input.ToString());
  RS_OBSERVE(OnDecision, config_.thread_name, task->incarnation(), TaskDecision::kStartRunning,
             task->type());
  task->TransitionTo(TaskState::kRunning);
  if (absl::Status s = consumer_.Resume({task->input()}); !s.ok()) errors_.push_back(s);
  TraceMark("task", "running " + task->incarnation().ToString());
  tasks_.AddRunning(std::move(task));
}

TaskStarter::Outcome TaskStarter::Prepare(Task& task, absl::Status* error) {
  RS_CHECK(error != nullptr && task.type() == TaskType::kActive, "{}: start of {}",
           config_.thread_name, task.incarnation().ToString());
  // Exactly once: the checkpoint restoration wrote is deleted before the task processes (none
  // may exist while it does). A disk that cannot delete it keeps the task restored, retried at
  // the next drain: never processing over a checkpoint.
  if (absl::Status s = task.state_manager().RemoveCheckpointForProcessing(); !s.ok()) {
    errors_.push_back(s);
    TraceMark("eos", "checkpoint not deleted before running: retried");
    return Outcome::kRetry;
  }
  bool fatal = false;
  if (absl::Status s = PositionInput(task, fatal); !s.ok()) {
    // Kafka's initializeMetadata: anything but a timeout fails the task's initialisation
    // (a StreamsException for the task; the thread fails).
    if (fatal) {
      *error = FailureOf(task, s);
      return Outcome::kFail;
    }
    // Retried at the next drain; a retryable error is expected, anything else (of the seek)
    // is also recorded. Retryable ones count against task.timeout.ms, as Kafka's
    // maybeInitTaskTimeoutOrThrow around the committed-offset read of a task's initialisation.
    if (!IsRetryable(s)) errors_.push_back(s);
    TraceMark("cover", "committed-offset read failed before running");
    if (IsRetryable(s) && TimedOut(task.id(), s)) {
      *error = FailureOf(task, s);
      return Outcome::kFail;
    }
    return Outcome::kRetry;
  }
  deadlines_ns_.erase(task.id());  // progress clears the timeout
  rewind_uncommitted_.erase(task.id());
  return Outcome::kStart;
}

absl::Status TaskStarter::PositionInput(Task& task, bool& fatal) {
  const TopicPartition input = task.input();
  absl::StatusOr<std::map<TopicPartition, int64_t>> committed = consumer_.Committed({input});
  absl::Status s = committed.status();
  fatal = !s.ok() && !IsRetryable(s);
  if (!s.ok()) return s;
  // The input resumes where the group committed it (nothing: auto.offset.reset).
  if (auto it = committed->find(input); it != committed->end()) {
    return consumer_.Seek(input, it->second);
  }
  if (config_.exactly_once || rewind_uncommitted_.contains(task.id())) {
    // Nothing committed: from the beginning (auto.offset.reset=earliest), not from where an
    // earlier incarnation whose transaction aborted, or which was revived while running,
    // left the consumer's position (past what it fetched and never processed).
    return consumer_.Seek(input, 0);
  }
  return absl::OkStatus();
}

bool TaskStarter::TimedOut(TaskId id, const absl::Status& cause) {
  RS_CHECK(IsRetryable(cause));
  bool started = false;
  const bool passed =
      TaskTimeoutPassed(deadlines_ns_, id, config_.task_timeout_ns, config_.clock, started);
  if (started) TraceMark("cover", "task timeout started before running");
  return passed;
}

// The task fails as a task failing in the restore thread does: closed dirty, and the drain
// returns the failure (the stream thread fails; its handler answers).
absl::Status TaskStarter::FailureOf(const Task& task, const absl::Status& cause) {
  deadlines_ns_.erase(task.id());
  const absl::Status error =
      IsRetryable(cause)
          ? absl::DeadlineExceededError(fmt::format(
                "task {}: committed offset of {} not read within task.timeout.ms ({} ms): {}",
                task.incarnation().ToString(), task.input().ToString(),
                config_.task_timeout_ns / kMillisecond, std::string(cause.message())))
          : absl::Status(cause.code(),
                         fmt::format("task {}: failed to read the committed offset of {}: {}",
                                     task.incarnation().ToString(), task.input().ToString(),
                                     std::string(cause.message())));
  TraceMark("cover", "task timed out before running");
  return error;
}

void TaskStarter::DropDeadlinesNotRestored(const TasksRegistry& tasks) {
  std::erase_if(deadlines_ns_, [&tasks](const auto& entry) {
    return !tasks.Has(TasksRegistry::Place::kRestored, entry.first);
  });
  RS_CHECK(deadlines_ns_.size() <= tasks.restored().size());
}

}  // namespace restoresim
