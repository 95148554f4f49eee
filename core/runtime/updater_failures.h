// UpdaterFailures (Kafka's DefaultStateUpdater exception handling — handleTaskCorruptedException's
// siblings handleStreamsException and handleStreamsExceptionWithoutTask, with
// addToExceptionsAndFailedTasksThenClearUpdatingAndPausedTasks — and StoreChangelogReader's
// maybeInitTaskTimeoutOrThrow / clearTaskTimeout): the failure model of one restore thread.
//   task-scoped  an error about one task (the reader's step names it) fails that task only: it
//                leaves the reader and UpdaterTasks and is handed back kFailed, suspended and
//                not checkpointed (the stream thread closes it dirty);
//   retryable    an error that holds a task back starts its task.timeout.ms (task_timeout_ns;
//                0: the first such error fails it), progress clears it, and a task still held
//                back past it fails with kDeadlineExceeded;
//   task-less    a fatal error of the reader's step (IsFatalStepError) fails every task it
//                owns, updating and paused — reported once, naming no task, when it owns none.
// RestoreThread decides when to call it (after each step, or on a failed step); this holds no
// state of its own: the deadlines live in UpdaterTasks, the changelogs in the reader (reached
// through hooks, so a test observes them), the events go out through the hand-back hooks.
//
// Thread-safety: its restore thread only.
#ifndef RESTORESIM_CORE_RUNTIME_UPDATER_FAILURES_H_
#define RESTORESIM_CORE_RUNTIME_UPDATER_FAILURES_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/runtime/changelog_reader.h"
#include "core/runtime/restore_handover.h"
#include "core/runtime/task.h"
#include "core/runtime/updater_tasks.h"
#include "core/sync/clock.h"

namespace restoresim {

// Whether an error of a changelog reader's step (not about one task) fails every task of the
// restore thread: the broker refuses (permission, authentication), a topic or partition is
// gone, an argument is invalid, data is lost, or an internal error. Others are retried.
bool IsFatalStepError(const absl::Status& status);

class UpdaterFailures {
 public:
  // `changelogs_of`: every changelog the reader holds of an incarnation; `unregister`: takes
  // changelogs out of the reader; `hand_back`: hands a task back with its event
  // (RestoreHandover::HandBack); `emit`: an event that carries no task; `publish_counts`: the
  // paused gauges (UpdaterPause::PublishCounts), once a task-less failure emptied it.
  struct Hooks {
    std::function<std::vector<TopicPartition>(const TaskIncarnation&)> changelogs_of;
    std::function<void(const std::vector<TopicPartition>&)> unregister;
    std::function<void(RestoreEvent)> hand_back;
    std::function<void(RestoreEvent)> emit;
    std::function<void()> publish_counts;
  };
  // The bound of the failures and stalls of one step (more than tasks can have).
  static constexpr size_t kFailuresPerStepMax = 1 << 16;

  UpdaterFailures(std::string restore_thread, TimeNs task_timeout_ns, Clock& clock,
                  UpdaterTasks& tasks, Hooks hooks);

  // After a step: its task-scoped failures, then its progress (clearTaskTimeout), then its
  // stalls (maybeInitTaskTimeoutOrThrow).
  void HandleFailures(const RestoreStep& step);
  // A task-less error: every owned task fails with it (one report if it owns none).
  void FailAllOwned(const absl::Status& error);

 private:
  // Kafka's maybeInitTaskTimeoutOrThrow: starts `who`'s deadline, or fails it past it.
  void MaybeInitTaskTimeoutOrFail(const TaskIncarnation& who, const absl::Status& cause);
  // Hands `who` back failed (no-op if it no longer owns it).
  void FailTask(const TaskIncarnation& who, const absl::Status& error);

  const std::string name_;
  const TimeNs task_timeout_ns_;
  Clock& clock_;
  UpdaterTasks& tasks_;
  const Hooks hooks_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_UPDATER_FAILURES_H_
