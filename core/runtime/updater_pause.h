// UpdaterPause (Kafka's DefaultStateUpdater pauseTask / resumeTask over its pausedTasks,
// KIP-834): the pause of one restore thread's tasks. Read once per iteration, the topology's
// pause moves every owned task between UpdaterTasks' updating and paused places: a paused task
// leaves the changelog reader, keeps its stores open and is checkpointed; a resumed one
// registers again from the positions its state manager holds. A CREATE that arrives while the
// topology is paused is parked paused, never registered. It publishes the paused gauges.
//
// Where this departs from Kafka (docs/DESIGN.md, "Kafka fidelity"): Kafka's state updater looks
// at the paused topologies once per commit interval and keeps a paused task's changelogs
// registered (the reader restores only the updating tasks); here the flag is read once per
// iteration and a paused task's changelogs are unregistered — so from the first iteration that
// sees the pause nothing more is restored into it — and registered again, from the positions
// its state manager holds, when it resumes.
//
// Thread-safety: its restore thread only, but for PausedActives and PausedStandbys (any
// thread: snapshots).
#ifndef RESTORESIM_CORE_RUNTIME_UPDATER_PAUSE_H_
#define RESTORESIM_CORE_RUNTIME_UPDATER_PAUSE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "core/runtime/changelog_reader.h"
#include "core/runtime/task.h"
#include "core/runtime/topology_pause.h"
#include "core/runtime/updater_tasks.h"
#include "core/sync/shared_cell.h"

namespace restoresim {

class UpdaterPause {
 public:
  // `checkpoint`: the restore thread's forced checkpoint of a task (flushed, checkpointed);
  // `hand_back`: hands a task back to the stream thread as removed (at shutdown).
  struct Hooks {
    std::function<void(Task&)> checkpoint;
    std::function<void(std::unique_ptr<Task>)> hand_back;
  };
  UpdaterPause(std::string restore_thread, const TopologyPause* pause, UpdaterTasks& tasks,
               Hooks hooks);

  // The reader the restore thread created (before its loop); REQUIRES: before any other call
  // but Read.
  void Attach(ChangelogReader& reader) { reader_ = &reader; }
  // Reads the topology's pause once per iteration (before the rounds are applied).
  void Read() { paused_ = pause_ != nullptr && pause_->paused(); }
  // Whether the topology was paused when this iteration began.
  bool paused() const { return paused_; }
  // Pauses every owned task (paused) or resumes every paused one; publishes the gauges.
  void Sync();
  // A CREATE while paused: the task, received paused, is never registered.
  void Park(Task& task);
  // At shutdown: the paused tasks go back (as Kafka's removeUpdatingAndPausedTasks).
  void ReturnAll();
  // Publishes the gauges if a count changed (a publish is a scheduling point).
  void PublishCounts();
  // Paused active and standby tasks, as of the last publish (KIP-869's active-paused-tasks and
  // standby-paused-tasks). Any thread.
  int64_t PausedActives() const { return *paused_actives_.Snapshot(); }
  int64_t PausedStandbys() const { return *paused_standbys_.Snapshot(); }

 private:
  void PauseTask(Task& task);
  void ResumeTask(Task& task);

  const std::string name_;
  const TopologyPause* const pause_;
  UpdaterTasks& tasks_;
  const Hooks hooks_;
  ChangelogReader* reader_ = nullptr;
  bool paused_ = false;  // as read at the top of this iteration
  std::pair<int64_t, int64_t> published_{0, 0};  // (actives, standbys) last published
  SharedCell<int64_t> paused_actives_{0, "paused_actives"};
  SharedCell<int64_t> paused_standbys_{0, "paused_standbys"};
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_UPDATER_PAUSE_H_
