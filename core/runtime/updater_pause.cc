#include "core/runtime/updater_pause.h"

#include <fmt/format.h>

#include "core/runtime/runtime_observer.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

UpdaterPause::UpdaterPause(std::string restore_thread, const TopologyPause* pause,
                           UpdaterTasks& tasks, Hooks hooks)
    : name_(std::move(restore_thread)), pause_(pause), tasks_(tasks), hooks_(std::move(hooks)) {
  RS_CHECK(hooks_.checkpoint && hooks_.hand_back, "restore thread '{}': pause without hooks",
           name_);
}

void UpdaterPause::Sync() {
  RS_CHECK(reader_ != nullptr, "restore thread '{}': pause before its reader", name_);
  if (paused_) {
    while (!tasks_.updating().empty()) PauseTask(tasks_.Pause(tasks_.updating().begin()->first));
  } else {
    while (!tasks_.paused().empty()) ResumeTask(tasks_.Resume(tasks_.paused().begin()->first));
  }
  RS_CHECK(paused_ ? tasks_.updating().empty() : tasks_.paused().empty(),
           "restore thread '{}' left tasks {} its topology's pause", name_,
           paused_ ? "updating during" : "paused after");
  PublishCounts();
}

// Kafka's pauseTask: a forced checkpoint (maybeCheckpoint(true)), then out of the updating set.
void UpdaterPause::PauseTask(Task& task) {
  const TaskIncarnation who = task.incarnation();
  RS_CHECK(task.state() == TaskState::kRestoring, "paused task {} is {}", who.ToString(),
           TaskStateName(task.state()));
  const std::vector<TopicPartition> changelogs = reader_->ChangelogsOf(who);
  reader_->Unregister(changelogs);
  RS_CHECK(reader_->ChangelogsOf(who).empty(), "paused task {} keeps changelogs registered",
           who.ToString());
  // (Its task.timeout.ms starts afresh after the pause: UpdaterTasks::Pause dropped it.)
  hooks_.checkpoint(task);  // flushed and checkpointed: its progress is on disk
  TraceMark("restore", "paused " + who.ToString(), static_cast<int64_t>(changelogs.size()));
  if (task.type() == TaskType::kActive && !changelogs.empty()) {
    TraceMark("cover", "restoring active paused");
  } else if (task.type() == TaskType::kStandby) {
    TraceMark("cover", "updating standby paused");
  }
  RS_OBSERVE(OnTaskPaused, name_, who, /*paused=*/true);
}

// Kafka's resumeTask: back to the updating set, restoring on from where it stopped (the
// reader starts each changelog at the position its state manager holds, not from scratch).
void UpdaterPause::ResumeTask(Task& task) {
  const TaskIncarnation who = task.incarnation();
  RS_CHECK(task.state() == TaskState::kRestoring, "resumed task {} is {}", who.ToString(),
           TaskStateName(task.state()));
  RS_CHECK(reader_->ChangelogsOf(who).empty(), "paused task {} had changelogs registered",
           who.ToString());
  // Mutation resume-without-register: Kafka's resumeTask, which registers nothing (its pause
  // kept the changelogs registered); here the task is held unpaused with nothing registered.
  if (!RS_MUTANT(kResumeWithoutRegister)) {
    for (const TopicPartition& tp : task.state_manager().ChangelogPartitions()) {
      reader_->Register(tp, &task.state_manager(), who);
    }
  }
  TraceMark("restore", "resumed " + who.ToString(), 0);
  TraceMark("cover", "paused task resumed");
  RS_OBSERVE(OnTaskPaused, name_, who, /*paused=*/false);
}

void UpdaterPause::Park(Task& task) {
  const TaskIncarnation who = task.incarnation();
  RS_CHECK(paused_ && reader_->ChangelogsOf(who).empty(),
           "a task parked paused has changelogs registered");
  task.TransitionTo(TaskState::kRestoring);
  TraceMark("restore", "added paused " + who.ToString(), 0);
  TraceMark("cover", "task added while its topology is paused");
  RS_OBSERVE(OnTaskPaused, name_, who, /*paused=*/true);
}

// Kafka's removeUpdatingAndPausedTasks hands paused tasks back without a checkpoint: they were
// checkpointed when they paused, and nothing was restored into them since.
void UpdaterPause::ReturnAll() {
  for (std::unique_ptr<Task>& task : tasks_.TakeAllPaused()) {
    RS_CHECK(reader_->ChangelogsOf(task->incarnation()).empty(),
             "paused task {} registered at shutdown", task->incarnation().ToString());
    task->TransitionTo(TaskState::kSuspended);
    hooks_.hand_back(std::move(task));
  }
  RS_CHECK(tasks_.paused().empty(), "restore thread '{}' kept paused tasks", name_);
  PublishCounts();
}

// Published only when a count changed: a run that never pauses publishes nothing (a publish
// is a scheduling point).
void UpdaterPause::PublishCounts() {
  const std::pair<int64_t, int64_t> counts = tasks_.PausedCounts();
  if (counts == published_) return;
  published_ = counts;
  paused_actives_.Publish(counts.first);
  paused_standbys_.Publish(counts.second);
}

}  // namespace restoresim
