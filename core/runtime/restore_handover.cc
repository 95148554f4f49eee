#include "core/runtime/restore_handover.h"

#include <fmt/format.h>

#include "core/util/check.h"

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

}  // namespace restoresim
