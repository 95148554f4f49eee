// RestoreThread, pause and resume of its topology's tasks (KIP-834; Kafka's DefaultStateUpdater
// pauseTask / resumeTask over its pausedTasks; restore_thread.h states the rules).
//
// Where this departs from Kafka (docs/DESIGN.md, "Kafka fidelity"): Kafka's state updater looks
// at the paused topologies once per commit interval and keeps a paused task's changelogs
// registered (the reader restores only the updating tasks); here the flag is read once per
// iteration and a paused task's changelogs are unregistered — so from the first iteration that
// sees the pause nothing more is restored into it — and registered again, from the positions
// its state manager holds, when it resumes.
#include <fmt/format.h>

#include "core/runtime/restore_thread.h"
#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

void RestoreThread::ReadTopologyPause() {
  topology_paused_ = config_.pause != nullptr && config_.pause->paused();
}

void RestoreThread::SyncPause() {
  if (topology_paused_) {
    while (!tasks_.updating().empty()) PauseTask(tasks_.Pause(tasks_.updating().begin()->first));
  } else {
    while (!tasks_.paused().empty()) ResumeTask(tasks_.Resume(tasks_.paused().begin()->first));
  }
  RS_CHECK(topology_paused_ ? tasks_.updating().empty() : tasks_.paused().empty(),
           "restore thread '{}' left tasks {} its topology's pause", config_.name,
           topology_paused_ ? "updating during" : "paused after");
  PublishPausedCounts();
}

// Kafka's pauseTask: a forced checkpoint (maybeCheckpoint(true)), then out of the updating set.
void RestoreThread::PauseTask(Task& task) {
  const TaskIncarnation who = task.incarnation();
  RS_CHECK(task.state() == TaskState::kRestoring, "paused task {} is {}", who.ToString(),
           TaskStateName(task.state()));
  const std::vector<TopicPartition> changelogs = reader_->ChangelogsOf(who);
  reader_->Unregister(changelogs);
  RS_CHECK(reader_->ChangelogsOf(who).empty(), "paused task {} keeps changelogs registered",
           who.ToString());
  // (Its task.timeout.ms starts afresh after the pause: UpdaterTasks::Pause dropped it.)
  CheckpointBeforeHandBack(task);  // flushed and checkpointed: its progress is on disk
  TraceMark("restore", "paused " + who.ToString(), static_cast<int64_t>(changelogs.size()));
  if (task.type() == TaskType::kActive && !changelogs.empty()) {
    TraceMark("cover", "restoring active paused");
  } else if (task.type() == TaskType::kStandby) {
    TraceMark("cover", "updating standby paused");
  }
  RS_OBSERVE(OnTaskPaused, config_.name, who, /*paused=*/true);
}

// Kafka's resumeTask: back to the updating set, restoring on from where it stopped (the
// reader starts each changelog at the position its state manager holds, not from scratch).
void RestoreThread::ResumeTask(Task& task) {
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
  RS_OBSERVE(OnTaskPaused, config_.name, who, /*paused=*/false);
}

void RestoreThread::ParkPaused(Task& task) {
  const TaskIncarnation who = task.incarnation();
  RS_CHECK(topology_paused_ && reader_->ChangelogsOf(who).empty(),
           "a task parked paused has changelogs registered");
  task.TransitionTo(TaskState::kRestoring);
  TraceMark("restore", "added paused " + who.ToString(), 0);
  TraceMark("cover", "task added while its topology is paused");
  RS_OBSERVE(OnTaskPaused, config_.name, who, /*paused=*/true);
}

// Kafka's removeUpdatingAndPausedTasks hands paused tasks back without a checkpoint: they were
// checkpointed when they paused, and nothing was restored into them since.
void RestoreThread::ReturnPausedTasks() {
  for (std::unique_ptr<Task>& task : tasks_.TakeAllPaused()) {
    RS_CHECK(reader_->ChangelogsOf(task->incarnation()).empty(),
             "paused task {} registered at shutdown", task->incarnation().ToString());
    task->TransitionTo(TaskState::kSuspended);
    const TaskIncarnation who = task->incarnation();
    HandBack(RestoreEvent{.kind = RestoreEvent::Kind::kRemoved, .incarnation = who,
                          .task = std::move(task)});
  }
  PublishPausedCounts();
}

// Published only when a count changed: a run that never pauses publishes nothing (a publish
// is a scheduling point).
void RestoreThread::PublishPausedCounts() {
  const std::pair<int64_t, int64_t> counts = tasks_.PausedCounts();
  if (counts == published_paused_) return;
  published_paused_ = counts;
  paused_actives_.Publish(counts.first);
  paused_standbys_.Publish(counts.second);
}

}  // namespace restoresim
