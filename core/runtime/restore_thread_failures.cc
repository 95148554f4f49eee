// RestoreThread, the failure model (Kafka's DefaultStateUpdater with StoreChangelogReader's
// task timeouts; restore_thread.h states the rules): task-scoped failures hand the task back
// failed, retryable errors count against task.timeout.ms, task-less errors fail every task.
#include <fmt/format.h>

#include "core/runtime/restore_thread.h"
#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"

namespace restoresim {

void RestoreThread::HandleFailures(RestoreStep& step) {
  RS_CHECK_LE(step.failed.size() + step.stalled.size(), RestoreThreadConfig::kFailuresPerStepMax,
              "restore thread '{}': more failures in one step than tasks can have",
              config_.name);
  for (const auto& [who, error] : step.failed) FailTask(who, error);
  for (const TaskIncarnation& who : step.progressed) {
    RS_CHECK(!step.stalled.contains(who), "{} both progressed and stalled", who.ToString());
    auto it = owned_.find(who.id);
    if (it != owned_.end() && it->second->incarnation() == who) {
      task_deadline_ns_.erase(who.id);  // Kafka's clearTaskTimeout
    }
  }
  for (const auto& [who, cause] : step.stalled) MaybeInitTaskTimeoutOrFail(who, cause);
}

void RestoreThread::MaybeInitTaskTimeoutOrFail(const TaskIncarnation& who,
                                                const absl::Status& cause) {
  auto owned = owned_.find(who.id);
  if (owned == owned_.end() || owned->second->incarnation() != who) return;  // gone since
  const TimeNs now = clock_.NowNs();
  const TimeNs timeout_ns = config_.task_timeout_ns;
  RS_CHECK_GE(timeout_ns, 0, "negative task.timeout.ms");
  auto it = task_deadline_ns_.find(who.id);
  if (timeout_ns > 0 && it == task_deadline_ns_.end()) {
    task_deadline_ns_[who.id] = DeadlineAfter(now, timeout_ns);
    TraceMark("cover", "task timeout started by a retryable error");
    return;
  }
  if (timeout_ns > 0 && now <= it->second) return;  // retried at the next step
  const TimeNs stalled_ns = timeout_ns == 0 ? 0 : now - it->second + timeout_ns;
  TraceMark("cover", timeout_ns == 0 ? "task failed at once: task.timeout.ms is 0"
                                     : "task failed: task.timeout.ms expired");
  FailTask(who, absl::DeadlineExceededError(fmt::format(
                    "task {} did not make progress within {} ms (task.timeout.ms is {} ms): {}",
                    who.id.ToString(), stalled_ns / kMillisecond, timeout_ns / kMillisecond,
                    std::string(cause.message()))));
}

void RestoreThread::FailTask(const TaskIncarnation& who, const absl::Status& error) {
  RS_CHECK(!error.ok(), "task {} failed with OK", who.ToString());
  std::unique_ptr<Task> task = TakeTask(who);  // updating or paused
  if (task == nullptr) return;
  task_deadline_ns_.erase(who.id);
  // Whatever the reader still has of it goes (a timeout leaves its changelogs registered).
  reader_->Unregister(reader_->ChangelogsOf(who));
  RS_CHECK(reader_->ChangelogsOf(who).empty(), "failed task {} keeps changelogs registered",
           who.ToString());
  // Suspended, not checkpointed: it is closed dirty (Kafka's closeTaskDirty) by the stream
  // thread, whose checkpoint on disk stays the last one written.
  task->TransitionTo(TaskState::kSuspended);
  TraceMark("restore", "failed " + who.ToString(), 0);
  RS_OBSERVE(OnHandOff, config_.name, who, TaskHolder::kRestoreThread, TaskHolder::kFromRestore);
  Emit(RestoreEvent{.kind = RestoreEvent::Kind::kFailed, .incarnation = who,
                    .task = std::move(task), .error = error});
}

void RestoreThread::FailAllOwned(const absl::Status& error) {
  RS_CHECK(!error.ok(), "task-less failure with OK");
  TraceMark("cover", "restoration failed: task-less error");
  TraceMark("restore", "task-less failure: " + error.ToString(), 0);
  if (owned_.empty()) {
    Emit(RestoreEvent{.kind = RestoreEvent::Kind::kFailed, .error = error});
    return;
  }
  std::vector<TaskIncarnation> owned;
  for (const auto& [id, task] : owned_) owned.push_back(task->incarnation());
  for (const TaskIncarnation& who : owned) FailTask(who, error);
  RS_CHECK(owned_.empty(), "restore thread '{}' kept tasks after a task-less failure",
           config_.name);
}

}  // namespace restoresim
