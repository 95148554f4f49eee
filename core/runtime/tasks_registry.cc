#include "core/runtime/tasks_registry.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/util/check.h"

namespace restoresim {

std::string_view TasksRegistry::PlaceName(Place place) {
  switch (place) {
    case Place::kPendingInit: return "pending initialisation";
    case Place::kReady: return "ready";
    case Place::kInRestore: return "in the restore thread";
    case Place::kAwaiting: return "awaiting its CLOSE";
    case Place::kRestored: return "restored";
    case Place::kRunning: return "running";
  }
  return "?";
}

bool TasksRegistry::Has(Place place, TaskId id) const {
  switch (place) {
    case Place::kPendingInit: return pending_init_.contains(id);
    case Place::kReady:
      return std::any_of(ready_.begin(), ready_.end(),
                         [id](const std::unique_ptr<Task>& t) { return t->id() == id; });
    case Place::kInRestore: return in_restore_.contains(id);
    case Place::kAwaiting: return awaiting_.contains(id);
    case Place::kRestored: return restored_.contains(id);
    case Place::kRunning: return running_.contains(id);
  }
  return false;
}

int TasksRegistry::PlacesOf(TaskId id) const {
  int places = 0;
  for (Place p : {Place::kPendingInit, Place::kReady, Place::kInRestore, Place::kAwaiting,
                  Place::kRestored, Place::kRunning}) {
    places += Has(p, id) ? 1 : 0;
  }
  RS_CHECK(places >= 0 && places <= 6);
  return places;
}

std::optional<TasksRegistry::Place> TasksRegistry::Where(TaskId id) const {
  for (Place p : {Place::kPendingInit, Place::kReady, Place::kInRestore, Place::kAwaiting,
                  Place::kRestored, Place::kRunning}) {
    if (Has(p, id)) return p;
  }
  return std::nullopt;
}

void TasksRegistry::CheckNowhere(TaskId id, const TaskIncarnation& who,
                                 std::string_view move) const {
  const std::optional<Place> where = Where(id);
  RS_INVARIANT("single_owner", who.ToString(), !where.has_value(),
               "{}: {} {} while task {} is {} already", thread_name_, move, who.ToString(),
               id.ToString(), PlaceName(where.value_or(Place::kRunning)));
}

void TasksRegistry::CheckOnlyIn(Place place, TaskId id, std::string_view move) const {
  const int places = PlacesOf(id);
  RS_INVARIANT("single_owner", id.ToString(), Has(place, id) && places == 1,
               "{}: {} of task {}, which is in {} places{}", thread_name_, move, id.ToString(),
               places, Has(place, id) ? "" : fmt::format(", not {}", PlaceName(place)));
}

void TasksRegistry::AddTo(OwnedTasks& tasks, Place place, std::unique_ptr<Task> task) {
  RS_CHECK(task != nullptr, "{}: an empty task added", thread_name_);
  const TaskId id = task->id();
  CheckNowhere(id, task->incarnation(), fmt::format("adding to {}", PlaceName(place)));
  tasks.emplace(id, std::move(task));
  RS_CHECK(PlacesOf(id) == 1);
}

std::unique_ptr<Task> TasksRegistry::TakeFrom(OwnedTasks& tasks, Place place, TaskId id) {
  CheckOnlyIn(place, id, fmt::format("taking from {}", PlaceName(place)));
  auto it = tasks.find(id);
  std::unique_ptr<Task> task = std::move(it->second);
  tasks.erase(it);
  RS_CHECK(task != nullptr && PlacesOf(id) == 0, "{}: task {} still held after its take",
           thread_name_, id.ToString());
  return task;
}

void TasksRegistry::AddPendingInit(std::unique_ptr<Task> task) {
  AddTo(pending_init_, Place::kPendingInit, std::move(task));
}

void TasksRegistry::AddRestored(std::unique_ptr<Task> task) {
  AddTo(restored_, Place::kRestored, std::move(task));
}

void TasksRegistry::AddRunning(std::unique_ptr<Task> task) {
  RS_CHECK(task != nullptr && task->state() == TaskState::kRunning &&
               task->type() == TaskType::kActive,
           "{}: only a RUNNING active enters running", thread_name_);
  AddTo(running_, Place::kRunning, std::move(task));
}

void TasksRegistry::AddReady(std::unique_ptr<Task> task) {
  RS_CHECK(task != nullptr, "{}: an empty task made ready", thread_name_);
  CheckNowhere(task->id(), task->incarnation(), "making ready");
  ready_.push_back(std::move(task));
}

std::unique_ptr<Task> TasksRegistry::TakePendingInit(TaskId id) {
  return TakeFrom(pending_init_, Place::kPendingInit, id);
}

std::unique_ptr<Task> TasksRegistry::TakeRestored(TaskId id) {
  return TakeFrom(restored_, Place::kRestored, id);
}

std::unique_ptr<Task> TasksRegistry::TakeRunning(TaskId id) {
  return TakeFrom(running_, Place::kRunning, id);
}

std::unique_ptr<Task> TasksRegistry::TakeReady(TaskId id) {
  CheckOnlyIn(Place::kReady, id, "taking from ready");
  auto it = std::find_if(ready_.begin(), ready_.end(),
                         [id](const std::unique_ptr<Task>& t) { return t->id() == id; });
  std::unique_ptr<Task> task = std::move(*it);
  ready_.erase(it);
  RS_CHECK(PlacesOf(id) == 0);
  return task;
}

void TasksRegistry::HandReadyToRestore(std::vector<TaskItem>& round) {
  std::vector<std::unique_ptr<Task>> ready = std::move(ready_);
  ready_.clear();
  for (std::unique_ptr<Task>& task : ready) {
    const TaskId id = task->id();
    CheckNowhere(id, task->incarnation(), "handing over");
    in_restore_[id] = {task->incarnation(), task->effective_type()};
    TaskItem item;
    item.kind = TaskItem::Kind::kCreate;
    item.incarnation = task->incarnation();
    item.task = std::move(task);
    CheckTaskItem(item);  // what the restore thread asserts when it takes it
    round.push_back(std::move(item));
  }
}

void TasksRegistry::Refused(TaskId id) {
  CheckOnlyIn(Place::kInRestore, id, "taking back a refused CREATE");
  in_restore_.erase(id);
}

std::pair<TaskIncarnation, TaskType> TasksRegistry::AwaitClose(TaskId id) {
  CheckOnlyIn(Place::kInRestore, id, "sending a CLOSE");
  auto it = in_restore_.find(id);
  const std::pair<TaskIncarnation, TaskType> held = it->second;
  in_restore_.erase(it);
  awaiting_.emplace(id, held.first);
  RS_CHECK(PlacesOf(id) == 1 && awaiting_.at(id) == held.first);
  return held;
}

bool TasksRegistry::TakeBackFromRestore(const TaskIncarnation& who, bool keep_booking) {
  const TaskId id = who.id;
  if (auto it = in_restore_.find(id);
      it != in_restore_.end() && it->second.first == who && !keep_booking) {
    in_restore_.erase(it);
  }
  bool close_sent = false;
  if (auto it = awaiting_.find(id); it != awaiting_.end() && it->second == who) {
    awaiting_.erase(it);
    close_sent = true;
  }
  // Back in hand: no place may still hold another incarnation of it (the booking of an older
  // one would be a second owner), unless the mutation kept the booking.
  RS_INVARIANT("single_owner", who.ToString(), keep_booking || PlacesOf(id) == 0,
               "{}: {} came back from the restore thread while task {} is {}", thread_name_,
               who.ToString(), id.ToString(), PlaceName(Where(id).value_or(Place::kRunning)));
  return close_sent;
}

void TasksRegistry::DropBookingsOfRunning() {
  std::erase_if(in_restore_, [this](const auto& entry) { return running_.contains(entry.first); });
}

void TasksRegistry::BookWithoutHandOver(const TaskIncarnation& who, TaskType type) {
  CheckNowhere(who.id, who, "booking in the restore thread");
  in_restore_[who.id] = {who, type};
}

std::set<TaskId> TasksRegistry::Ids() const {
  std::vector<TaskId> ids;
  AppendIds(ids);
  return std::set<TaskId>(ids.begin(), ids.end());
}

void TasksRegistry::AppendIds(std::vector<TaskId>& out) const {
  out.reserve(out.size() + running_.size() + restored_.size() + pending_init_.size() +
              in_restore_.size() + awaiting_.size() + ready_.size());
  for (const auto& [id, t] : running_) out.push_back(id);
  for (const auto& [id, t] : restored_) out.push_back(id);
  for (const auto& [id, t] : pending_init_) out.push_back(id);
  for (const auto& [id, t] : in_restore_) out.push_back(id);
  for (const auto& [id, t] : awaiting_) out.push_back(id);
  for (const std::unique_ptr<Task>& t : ready_) out.push_back(t->id());
}

std::vector<TaskView> TasksRegistry::View(const std::set<TaskId>& revoked) const {
  std::vector<TaskView> view;
  for (const auto& [id, t] : running_) {
    view.push_back({t->incarnation(), t->effective_type(),
                    revoked.contains(id) ? TaskView::Where::kRevoked : TaskView::Where::kRunning});
  }
  for (const auto& [id, t] : restored_) {
    view.push_back({t->incarnation(), t->effective_type(), TaskView::Where::kRestored});
  }
  for (const auto& [id, t] : pending_init_) {
    view.push_back({t->incarnation(), t->effective_type(), TaskView::Where::kPendingInit});
  }
  for (const std::unique_ptr<Task>& t : ready_) {
    view.push_back({t->incarnation(), t->effective_type(), TaskView::Where::kReady});
  }
  for (const auto& [id, entry] : in_restore_) {
    view.push_back({entry.first, entry.second, TaskView::Where::kInRestore});
  }
  for (const auto& [id, who] : awaiting_) {
    view.push_back({who, TaskType::kActive, TaskView::Where::kAwaiting});
  }
  return view;
}

std::set<TaskId> TasksRegistry::RunningIds() const {
  std::set<TaskId> ids;
  for (const auto& [id, task] : running_) ids.insert(id);
  return ids;
}

absl::StatusOr<std::map<std::string, std::string>> TasksRegistry::RunningStoreContents(
    TaskId id, std::string_view store_name) {
  auto it = running_.find(id);
  if (it == running_.end()) {
    return absl::NotFoundError(fmt::format("task {} is not running", id.ToString()));
  }
  KeyValueStore* store = it->second->state_manager().Store(store_name);
  if (store == nullptr) return absl::NotFoundError(fmt::format("no {} store", store_name));
  return store->ReadAll();
}

std::set<TaskId> TasksRegistry::InRestoreIds() const {
  std::set<TaskId> ids;
  for (const auto& [id, entry] : in_restore_) ids.insert(id);
  return ids;
}

bool TasksRegistry::RestoreThreadHoldsActives() const {
  return std::any_of(in_restore_.begin(), in_restore_.end(),
                     [](const auto& entry) { return entry.second.second == TaskType::kActive; });
}

std::vector<std::unique_ptr<Task>> TasksRegistry::TakeAllRestored() {
  std::vector<std::unique_ptr<Task>> tasks;
  while (!restored_.empty()) tasks.push_back(TakeRestored(restored_.begin()->first));
  return tasks;
}

std::vector<std::unique_ptr<Task>> TasksRegistry::TakeAllPendingInit() {
  std::vector<std::unique_ptr<Task>> tasks;
  while (!pending_init_.empty()) tasks.push_back(TakePendingInit(pending_init_.begin()->first));
  return tasks;
}

std::vector<std::unique_ptr<Task>> TasksRegistry::TakeAllReady() {
  std::vector<std::unique_ptr<Task>> tasks = std::move(ready_);
  ready_.clear();
  return tasks;
}

void TasksRegistry::DropBookings() {
  in_restore_.clear();
  awaiting_.clear();
}

}  // namespace restoresim
