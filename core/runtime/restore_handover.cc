#include "core/runtime/restore_handover.h"

#include <fmt/format.h>

#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

void CheckTaskItem(const TaskItem& item) {
  if (item.kind == TaskItem::Kind::kClose) {
    RS_CHECK(item.task == nullptr, "CLOSE of {} carries a task", item.incarnation.ToString());
    return;
  }
  RS_CHECK(item.task != nullptr && item.task->incarnation() == item.incarnation,
           "CREATE item for {} without its task", item.incarnation.ToString());
  const TaskState state = item.task->state();
  RS_CHECK(state == TaskState::kCreated || state == TaskState::kSuspended,
           "CREATE of {} in {}", item.incarnation.ToString(), TaskStateName(state));
}

void CheckHandedBack(const RestoreEvent& e) {
  using Kind = RestoreEvent::Kind;
  RS_CHECK(e.task == nullptr || e.task->incarnation() == e.incarnation,
           "event about {} carries {}", e.incarnation.ToString(),
           e.task->incarnation().ToString());
  RS_CHECK((e.kind == Kind::kFailed || e.kind == Kind::kWarning) == !e.error.ok(),
           "event about {}: an error only with a failure or warning", e.incarnation.ToString());
  switch (e.kind) {
    case Kind::kRestored:
      RS_CHECK(e.task != nullptr && e.task->state() == TaskState::kRestoring &&
                   e.task->type() == TaskType::kActive,
               "a restored task must come back a RESTORING active: {}", e.incarnation.ToString());
      break;
    case Kind::kRemoved:
      // (CREATED: a CREATE still in the queue at shutdown comes back as it went.)
      RS_CHECK(e.task != nullptr && (e.task->state() == TaskState::kSuspended ||
                                     e.task->state() == TaskState::kCreated),
               "a removed task must come back SUSPENDED: {}", e.incarnation.ToString());
      break;
    case Kind::kCorrupted:
    case Kind::kFailed:
      RS_CHECK(e.task == nullptr || e.task->state() == TaskState::kSuspended,
               "a corrupted or failed task must come back SUSPENDED: {}",
               e.incarnation.ToString());
      break;
    case Kind::kWarning:
      RS_CHECK(e.task == nullptr, "a warning about {} carries its task", e.incarnation.ToString());
      break;
  }
}

RestoreHandover::RestoreHandover(std::string restore_thread, size_t rounds_max,
                                 size_t events_max)
    : name_(std::move(restore_thread)),
      items_(rounds_max, "restore_items"),
      events_(events_max, "restore_events") {}

bool RestoreHandover::AddItems(Round items, std::vector<TaskItem>* refused) {
  if (items.empty()) return true;
  // Regression: items used to be pushed one by one, and the restore thread could drain a
  // recycle's CREATE before its CLOSE arrived: "changelog registered twice". A round is one
  // queue element now.
  Round round = std::move(items);
  // Observed before the push: once pushed, the restore thread may take the task at once.
  for (const TaskItem& item : round) {
    if (item.task != nullptr) {
      RS_OBSERVE(OnHandOff, name_, item.incarnation, TaskHolder::kStreamThread,
                 TaskHolder::kToRestore);
    }
  }
  const size_t size = round.size();
  if (items_.Push(std::move(round))) {
    RS_OBSERVE(OnRoundQueued, name_, size);
    return true;
  }
  for (TaskItem& item : round) {
    if (item.task != nullptr) {
      RS_OBSERVE(OnHandOff, name_, item.incarnation, TaskHolder::kToRestore,
                 TaskHolder::kStreamThread);
    }
    if (refused != nullptr) refused->push_back(std::move(item));
  }
  return false;
}

void RestoreHandover::Wake() {
  if (items_.TryPush({})) RS_OBSERVE(OnRoundQueued, name_, 0);
}

std::vector<RestoreEvent> RestoreHandover::DrainEvents() {
  std::vector<RestoreEvent> events;
  events_.DrainTo(events);
  if (RuntimeObserver* observer = CurrentObserver()) {
    for (const RestoreEvent& e : events) {
      if (e.task != nullptr) {
        observer->OnHandOff(name_, e.incarnation, TaskHolder::kFromRestore,
                            TaskHolder::kStreamThread);
      }
      observer->OnRestoreEvent(name_, e, /*drained=*/true);
    }
  }
  return events;
}

void RestoreHandover::Emit(RestoreEvent event) {
  RS_OBSERVE(OnRestoreEvent, name_, event, /*drained=*/false);
  if (!events_.Push(std::move(event))) RS_CHECK(false, "restore event queue closed");
}

void RestoreHandover::HandBack(RestoreEvent event, const UpdaterTasks& owner, bool from_queue) {
  ObserveHandBack(event, owner, from_queue);
  Emit(std::move(event));
}

void RestoreHandover::ObserveHandBack(const RestoreEvent& event, const UpdaterTasks& owner,
                                      bool from_queue) {
  CheckHandedBack(event);  // as the stream thread will when it drains it
  if (event.task == nullptr) return;
  RS_INVARIANT("single_owner", event.incarnation.ToString(), !owner.Owns(event.incarnation),
               "restore thread '{}' hands {} back and still owns it", name_,
               event.incarnation.ToString());
  RS_OBSERVE(OnHandOff, name_, event.incarnation,
             from_queue ? TaskHolder::kToRestore : TaskHolder::kRestoreThread,
             TaskHolder::kFromRestore);
}

}  // namespace restoresim
