// The hand-over between a stream thread and its restore thread (the seed's TaskItem queue and
// Kafka's DefaultStateUpdater input and output queues): what travels in each direction, and the
// assertions both ends make about it.
//   in   TaskItems, one round at a time: a CREATE carries its task (ownership moving in), a
//        CLOSE the changelogs to unregister;
//   out  RestoreEvents: a task handed back (restored, removed, corrupted, failed) or a warning.
// The sender and the receiver check each with the same function (CheckTaskItem,
// CheckHandedBack): TigerBeetle's paired assertions, written and read back.
//
// Thread-safety: plain values; they move through the restore thread's queues.
#ifndef RESTORESIM_CORE_RUNTIME_RESTORE_HANDOVER_H_
#define RESTORESIM_CORE_RUNTIME_RESTORE_HANDOVER_H_

#include <memory>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "core/runtime/task.h"

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

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_RESTORE_HANDOVER_H_
