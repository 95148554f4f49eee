#include "core/runtime/updater_failures.h"

#include <fmt/format.h>

#include "core/sync/thread.h"
#include "core/util/check.h"

namespace restoresim {

bool IsFatalStepError(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kDataLoss:
      return true;
    default:
      return false;
  }
}

UpdaterFailures::UpdaterFailures(std::string restore_thread, TimeNs task_timeout_ns,
                                 Clock& clock, UpdaterTasks& tasks, Hooks hooks)
    : name_(std::move(restore_thread)),
      task_timeout_ns_(task_timeout_ns),
      clock_(clock),
      tasks_(tasks),
      hooks_(std::move(hooks)) {
  RS_CHECK(hooks_.changelogs_of && hooks_.unregister && hooks_.hand_back && hooks_.emit &&
               hooks_.publish_counts,
           "restore thread '{}': failure model without hooks", name_);
}

void UpdaterFailures::HandleFailures(const RestoreStep& step) {
  RS_CHECK_LE(step.failed.size() + step.stalled.size(), kFailuresPerStepMax,
              "restore thread '{}': more failures in one step than tasks can have", name_);
  for (const auto& [who, error] : step.failed) FailTask(who, error);
  for (const TaskIncarnation& who : step.progressed) {
    RS_CHECK(!step.stalled.contains(who), "{} both progressed and stalled", who.ToString());
    if (tasks_.Updating(who) != nullptr) tasks_.ClearDeadline(who.id);  // clearTaskTimeout
  }
  for (const auto& [who, cause] : step.stalled) MaybeInitTaskTimeoutOrFail(who, cause);
  // A stalled task it still updates counts against its task.timeout.ms (a timeout of 0 failed
  // it above).
  for (const auto& [who, cause] : step.stalled) {
    RS_CHECK(tasks_.Updating(who) == nullptr || tasks_.Deadline(who.id).has_value(),
             "stalled task {} kept without a task.timeout.ms deadline", who.ToString());
  }
}

void UpdaterFailures::MaybeInitTaskTimeoutOrFail(const TaskIncarnation& who,
                                                 const absl::Status& cause) {
  if (tasks_.Updating(who) == nullptr) return;  // gone since
  const TimeNs now = clock_.NowNs();
  const TimeNs timeout_ns = task_timeout_ns_;
  RS_CHECK_GE(timeout_ns, 0, "negative task.timeout.ms");
  const std::optional<TimeNs> deadline_ns = tasks_.Deadline(who.id);
  if (timeout_ns > 0 && !deadline_ns.has_value()) {
    tasks_.StartDeadline(who.id, DeadlineAfter(now, timeout_ns));
    TraceMark("cover", "task timeout started by a retryable error");
    return;
  }
  if (timeout_ns > 0 && now <= *deadline_ns) return;  // retried at the next step
  const TimeNs stalled_ns = timeout_ns == 0 ? 0 : now - *deadline_ns + timeout_ns;
  TraceMark("cover", timeout_ns == 0 ? "task failed at once: task.timeout.ms is 0"
                                     : "task failed: task.timeout.ms expired");
  FailTask(who, absl::DeadlineExceededError(fmt::format(
                    "task {} did not make progress within {} ms (task.timeout.ms is {} ms): {}",
                    who.id.ToString(), stalled_ns / kMillisecond, timeout_ns / kMillisecond,
                    std::string(cause.message()))));
  RS_CHECK(!tasks_.Owns(who), "task {} kept past its task.timeout.ms", who.ToString());
}

void UpdaterFailures::FailTask(const TaskIncarnation& who, const absl::Status& error) {
  RS_CHECK(!error.ok(), "task {} failed with OK", who.ToString());
  std::unique_ptr<Task> task = tasks_.Take(who);  // updating or paused; its deadline goes
  if (task == nullptr) return;
  // Whatever the reader still has of it goes (a timeout leaves its changelogs registered).
  hooks_.unregister(hooks_.changelogs_of(who));
  RS_CHECK(hooks_.changelogs_of(who).empty(), "failed task {} keeps changelogs registered",
           who.ToString());
  // Suspended, not checkpointed: it is closed dirty (Kafka's closeTaskDirty) by the stream
  // thread, whose checkpoint on disk stays the last one written.
  task->TransitionTo(TaskState::kSuspended);
  TraceMark("restore", "failed " + who.ToString(), 0);
  hooks_.hand_back(RestoreEvent{.kind = RestoreEvent::Kind::kFailed, .incarnation = who,
                                .task = std::move(task), .error = error});
  RS_CHECK(!tasks_.Owns(who), "failed task {} is still owned", who.ToString());
}

// Kafka's handleStreamsExceptionWithoutTask fails the updating and the paused tasks
// (addToExceptionsAndFailedTasksThenClearUpdatingAndPausedTasks): a paused task is owned here
// as much as an updating one, and would otherwise stay paused behind a report naming no task.
void UpdaterFailures::FailAllOwned(const absl::Status& error) {
  RS_CHECK(!error.ok(), "task-less failure with OK");
  TraceMark("cover", "restoration failed: task-less error");
  TraceMark("restore", "task-less failure: " + error.ToString(), 0);
  if (tasks_.empty()) {
    hooks_.emit(RestoreEvent{.kind = RestoreEvent::Kind::kFailed, .error = error});
    return;
  }
  std::vector<TaskIncarnation> owned;
  for (const auto& [id, task] : tasks_.updating()) owned.push_back(task->incarnation());
  for (const auto& [id, task] : tasks_.paused()) owned.push_back(task->incarnation());
  for (const TaskIncarnation& who : owned) FailTask(who, error);
  RS_CHECK(tasks_.empty(), "restore thread '{}' kept tasks after a task-less failure", name_);
  hooks_.publish_counts();
}

}  // namespace restoresim
