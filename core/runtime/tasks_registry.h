// TasksRegistry (Kafka's TasksRegistry / Tasks in processor.internals): where each task of one
// stream thread is, and the only way to move it. TaskManager decides what to do with a task
// (policy); the registry holds it and asserts, on every move, the one-owner rule:
//
//   every task id is in at most one place, and a move takes it from the place it names.
//
// The places, in the order a task passes through them:
//   pending_init  created (or revived) here, stores not yet registered — owned here;
//   ready         initialised (or resumed, or recycled), to go to the restore thread with the
//                 next round — owned here, in the order they became ready;
//   in_restore    owned by the restore thread: a booking (incarnation and type) only;
//   awaiting      a CLOSE was sent for the incarnation the restore thread owns: a booking
//                 until the task comes back;
//   restored      back from the restore thread, waiting to read its input's committed
//                 offset — owned here;
//   running       active tasks the stream thread processes (RUNNING) — owned here.
// Between two moves a task may be "in hand" (a local unique_ptr of the function deciding its
// fate: it is in no place then); a move into a place asserts it was in none. A violation is
// the invariant single_owner, failed inline (RS_INVARIANT): on real threads too, and in
// simulation before the oracle's end-of-step view would see it.
//
// The same rule on the restore thread's side is UpdaterTasks (updater_tasks.h); the hand-over
// between the two asserts what it moves at both ends (CheckTaskItem, CheckHandedBack in
// restore_thread.h).
//
// Thread-safety: its stream thread only.
#ifndef RESTORESIM_CORE_RUNTIME_TASKS_REGISTRY_H_
#define RESTORESIM_CORE_RUNTIME_TASKS_REGISTRY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/runtime/restore_thread.h"
#include "core/runtime/runtime_observer.h"
#include "core/runtime/task.h"

namespace restoresim {

class TasksRegistry {
 public:
  enum class Place : uint8_t { kPendingInit, kReady, kInRestore, kAwaiting, kRestored, kRunning };
  static std::string_view PlaceName(Place place);
  using OwnedTasks = std::map<TaskId, std::unique_ptr<Task>>;

  explicit TasksRegistry(std::string thread_name) : thread_name_(std::move(thread_name)) {}

  // ---- moves into a place (each asserts the task was in none) ----
  void AddPendingInit(std::unique_ptr<Task> task);
  // Initialised, resumed or recycled: last in the ready order.
  void AddReady(std::unique_ptr<Task> task);
  void AddRestored(std::unique_ptr<Task> task);
  void AddRunning(std::unique_ptr<Task> task);

  // ---- moves out of a place into the caller's hand (each asserts it was there) ----
  std::unique_ptr<Task> TakePendingInit(TaskId id);
  std::unique_ptr<Task> TakeReady(TaskId id);
  std::unique_ptr<Task> TakeRestored(TaskId id);
  std::unique_ptr<Task> TakeRunning(TaskId id);

  // ---- the hand-over to the restore thread and back ----
  // Every ready task, in ready order, becomes a CREATE item appended to `round`; each is
  // booked as in the restore thread (asserted by CheckTaskItem, as the receiver does).
  void HandReadyToRestore(std::vector<TaskItem>& round);
  // A CREATE the restore thread refused (it shuts down) comes back: its booking goes.
  void Refused(TaskId id);
  // A CLOSE is sent for the incarnation the restore thread owns: in_restore -> awaiting.
  // Returns the incarnation and its type.
  std::pair<TaskIncarnation, TaskType> AwaitClose(TaskId id);
  // The restore thread handed `who` back (the event carries the task): its booking goes.
  // Returns whether a CLOSE had been sent for it (it was awaiting). `keep_booking`: the
  // mutation restored-listed-twice, which drops the in_restore booking one drain late.
  bool TakeBackFromRestore(const TaskIncarnation& who, bool keep_booking = false);
  // The mutation restored-listed-twice: late bookings of tasks now running are dropped.
  void DropBookingsOfRunning();
  // The mutation revived-not-readded: `who` booked as the restore thread's, never handed over.
  void BookWithoutHandOver(const TaskIncarnation& who, TaskType type);

  // ---- queries ----
  std::optional<Place> Where(TaskId id) const;
  bool Has(Place place, TaskId id) const;
  // Every task id in any place, sorted.
  std::set<TaskId> Ids() const;
  // Appends every task id in any place to `out`, unsorted (one allocation for a loop's
  // snapshot instead of a set node per task).
  void AppendIds(std::vector<TaskId>& out) const;
  OwnedTasks& running() { return running_; }
  const OwnedTasks& running() const { return running_; }
  const OwnedTasks& restored() const { return restored_; }
  const OwnedTasks& pending_init() const { return pending_init_; }
  const std::vector<std::unique_ptr<Task>>& ready() const { return ready_; }
  const std::map<TaskId, std::pair<TaskIncarnation, TaskType>>& in_restore() const {
    return in_restore_;
  }
  const std::map<TaskId, TaskIncarnation>& awaiting() const { return awaiting_; }
  // The registry as observers see it (running tasks in `revoked` as kRevoked).
  std::vector<TaskView> View(const std::set<TaskId>& revoked) const;
  std::set<TaskId> RunningIds() const;
  std::set<TaskId> InRestoreIds() const;
  bool RestoreThreadHoldsActives() const;
  // Store contents of a running task (tests): its store named `store`.
  absl::StatusOr<std::map<std::string, std::string>> RunningStoreContents(TaskId id,
                                                                          std::string_view store);

  // ---- shutdown ----
  // Every owned task in hand, for its closing: restored, then pending_init, then ready
  // (running ones close one by one first). Bookings of the restore thread are dropped.
  std::vector<std::unique_ptr<Task>> TakeAllRestored();
  std::vector<std::unique_ptr<Task>> TakeAllPendingInit();
  std::vector<std::unique_ptr<Task>> TakeAllReady();
  void DropBookings();

 private:
  // The number of places holding `id` (at most one, unless the rule is broken).
  int PlacesOf(TaskId id) const;
  // Fails single_owner unless `id` is in no place (before `move` puts it in one).
  void CheckNowhere(TaskId id, const TaskIncarnation& who, std::string_view move) const;
  // Fails single_owner unless `id` is in `place` and no other (before `move` takes it out).
  void CheckOnlyIn(Place place, TaskId id, std::string_view move) const;
  std::unique_ptr<Task> TakeFrom(OwnedTasks& tasks, Place place, TaskId id);
  void AddTo(OwnedTasks& tasks, Place place, std::unique_ptr<Task> task);

  const std::string thread_name_;
  OwnedTasks pending_init_;
  std::vector<std::unique_ptr<Task>> ready_;
  std::map<TaskId, std::pair<TaskIncarnation, TaskType>> in_restore_;
  std::map<TaskId, TaskIncarnation> awaiting_;
  OwnedTasks restored_;
  OwnedTasks running_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASKS_REGISTRY_H_
