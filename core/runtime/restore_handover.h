// The hand-over between a stream thread and its restore thread (the seed's TaskItem queue and
// Kafka's DefaultStateUpdater input and output queues): what travels in each direction, and the
// assertions both ends make about it.
//   in   TaskItems, one round at a time: a CREATE carries its task (ownership moving in), a
//        CLOSE the changelogs to unregister;
//   out  RestoreEvents: a task handed back (restored, removed, corrupted, failed) or a warning.
// The sender and the receiver check each with the same function (CheckTaskItem,
// CheckHandedBack): TigerBeetle's paired assertions, written and read back.
// RestoreHandover holds the two bounded queues and emits the hand-off observations of every
// task that crosses them, where it crosses (a task in a queue is held by neither thread).
//
// Thread-safety: TaskItem and RestoreEvent are plain values. RestoreHandover: AddItems,
// SignalResume and DrainEvents are for the stream thread; DrainRounds, PopRoundUntil, Emit,
// HandBack and ObserveHandBack for the restore thread; Close for either.
#ifndef RESTORESIM_CORE_RUNTIME_RESTORE_HANDOVER_H_
#define RESTORESIM_CORE_RUNTIME_RESTORE_HANDOVER_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/runtime/task.h"
#include "core/runtime/updater_tasks.h"
#include "core/sync/blocking_queue.h"
#include "core/sync/clock.h"

namespace restoresim {

struct TaskItem {
  enum class Kind { kCreate, kClose };
  Kind kind = Kind::kCreate;
  TaskIncarnation incarnation;
  std::unique_ptr<Task> task;  // CREATE: the task, ownership moving in
  // CLOSE: the changelogs to unregister, captured by the stream thread before it cleared the
  // task's stores. Changelogs of a task the restore thread itself owns are added to them.
  std::vector<TopicPartition> changelogs;
  // CLOSE of a standby the assignment now wants as an active (KIP-988's PROMOTED; otherwise
  // its standby update listener hears MIGRATED).
  bool promoted = false;
};

struct RestoreEvent {
  // kFailed: the task (null for a task-less failure) failed with `error`; kWarning: `error`
  // fails nothing (the task, if named, stays with the restore thread).
  enum class Kind { kRestored, kRemoved, kCorrupted, kFailed, kWarning };
  Kind kind = Kind::kWarning;
  TaskIncarnation incarnation;
  std::unique_ptr<Task> task;  // ownership moving out (null for kWarning)
  std::set<TopicPartition> corrupted_changelogs;
  absl::Status error;
};

// The hand-over's paired assertions: the sender checks what it hands over and the receiver
// what it takes, with the same function. A CREATE carries its task (CREATED, or SUSPENDED when
// resumed), of the incarnation it names; a CLOSE carries none. An event about a task carries
// it as its kind says: restored RESTORING (an active), removed SUSPENDED, corrupted or failed
// SUSPENDED or nothing; a warning nothing; a failure an error.
void CheckTaskItem(const TaskItem& item);
void CheckHandedBack(const RestoreEvent& event);

class RestoreHandover {
 public:
  using Round = std::vector<TaskItem>;
  RestoreHandover(std::string restore_thread, size_t rounds_max, size_t events_max);

  // ---- the stream thread's end ----
  // Queues one round atomically (the restore thread sees all of it or none). False if the
  // queue is closed: the items, and their tasks, come back in `refused`.
  bool AddItems(Round items, std::vector<TaskItem>* refused);
  // Queues an empty round, if there is room, to wake an idle wait (never blocks).
  void Wake();
  std::vector<RestoreEvent> DrainEvents();

  // ---- the restore thread's end ----
  void DrainRounds(std::vector<Round>& rounds) { items_.DrainTo(rounds); }
  std::optional<Round> PopRoundUntil(Clock& clock, TimeNs deadline_ns) {
    return items_.PopUntil(clock, deadline_ns);
  }
  // Bounded: if the stream thread stops draining, the restore thread waits here.
  void Emit(RestoreEvent event);
  // Hands a task back with its event: the hand-off to the queue (from the restore thread, or
  // `from_queue`: a CREATE never applied, returned at shutdown), asserting the event as the
  // receiver will and that `owner` no longer owns the task; then the event.
  void HandBack(RestoreEvent event, const UpdaterTasks& owner, bool from_queue = false);
  // HandBack's checks and hand-off observation, without the event.
  void ObserveHandBack(const RestoreEvent& event, const UpdaterTasks& owner,
                       bool from_queue = false);

  // No round is queued after this (shutdown); the restore thread's waits end.
  void Close() { items_.Close(); }

 private:
  const std::string name_;
  BlockingQueue<Round> items_;  // one element per round
  BlockingQueue<RestoreEvent> events_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_RESTORE_HANDOVER_H_
