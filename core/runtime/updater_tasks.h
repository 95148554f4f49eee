// UpdaterTasks (Kafka's DefaultStateUpdater: updatingTasks, pausedTasks and the task timeouts
// of StoreChangelogReader): the tasks one restore thread owns, and the only way to move them.
// RestoreThread decides (policy); this holds the tasks and asserts the one-owner rule on every
// move:
//
//   every task id is in at most one place, and a move takes it from the place it names.
//
// The places:
//   updating  its changelogs registered in the reader: restoring (an active) or updating (a
//             standby);
//   paused    its topology is paused: stores open, nothing registered (KIP-834).
// Per updating task held back by retryable errors, when its task.timeout.ms runs out (a
// deadline ends with the task's move out of updating).
//
// Receive is where a task crosses from the queue to this thread: it emits that hand-off
// observation itself (the way back is RestoreThread::HandBack, which emits it with the event).
//
// Thread-safety: its restore thread only.
#ifndef RESTORESIM_CORE_RUNTIME_UPDATER_TASKS_H_
#define RESTORESIM_CORE_RUNTIME_UPDATER_TASKS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/state_updater_metrics.h"
#include "core/runtime/task.h"
#include "core/sync/clock.h"

namespace restoresim {

class UpdaterTasks {
 public:
  enum class Place : uint8_t { kUpdating, kPaused };
  using OwnedTasks = std::map<TaskId, std::unique_ptr<Task>>;

  explicit UpdaterTasks(std::string restore_thread) : name_(std::move(restore_thread)) {}

  // A task from a CREATE item enters `place` (asserting no incarnation of it is owned); emits
  // the hand-off kToRestore -> kRestoreThread. Returns the task, now owned here.
  Task& Receive(std::unique_ptr<Task> task, Place place);
  // Takes `who` out of whichever place holds it (null if it owns no such incarnation); its
  // deadline goes with it.
  std::unique_ptr<Task> Take(const TaskIncarnation& who);
  // Takes the updating task `id` (which must be there); its deadline goes with it.
  std::unique_ptr<Task> TakeUpdating(TaskId id);
  // Every paused task, in id order, at shutdown (they leave without a checkpoint).
  std::vector<std::unique_ptr<Task>> TakeAllPaused();
  // updating -> paused, paused -> updating (deadlines do not survive a pause).
  Task& Pause(TaskId id);
  Task& Resume(TaskId id);

  bool Owns(const TaskIncarnation& who) const;
  // The updating task that is `who`, or null.
  Task* Updating(const TaskIncarnation& who);
  OwnedTasks& updating() { return updating_; }
  const OwnedTasks& updating() const { return updating_; }
  const OwnedTasks& paused() const { return paused_; }
  bool empty() const { return updating_.empty() && paused_.empty(); }

  // ---- task.timeout.ms of updating tasks ----
  std::optional<TimeNs> Deadline(TaskId id) const;
  void StartDeadline(TaskId id, TimeNs deadline_ns);
  void ClearDeadline(TaskId id) { deadlines_ns_.erase(id); }

  // ---- what it publishes ----
  // Per owned task, updating or paused, the sum of its changelog positions (what its stores
  // hold).
  std::map<TaskIncarnation, int64_t> OffsetSums() const;
  // (actives, standbys) paused.
  std::pair<int64_t, int64_t> PausedCounts() const;
  UpdaterTaskCounts Counts() const;
  bool AnyStandbyUpdating() const;

 private:
  OwnedTasks& PlaceOf(Place place) { return place == Place::kUpdating ? updating_ : paused_; }
  // Fails single_owner unless no incarnation of `id` is owned (before `move` adds one).
  void CheckNotOwned(const TaskIncarnation& who, const char* move) const;
  Task& Move(OwnedTasks& from, OwnedTasks& to, TaskId id, const char* move);

  const std::string name_;
  OwnedTasks updating_;
  OwnedTasks paused_;
  std::map<TaskId, TimeNs> deadlines_ns_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_UPDATER_TASKS_H_
