#include "properties/oracle.h"

#include <fmt/format.h>

#include <atomic>

#include "core/runtime/count_topology.h"

namespace restoresim::properties {
namespace {

std::atomic<bool> oracle_enabled{true};

std::string Str(std::string_view s) { return std::string(s); }

}  // namespace

void Oracle::SetEnabled(bool enabled) { oracle_enabled.store(enabled); }
bool Oracle::Enabled() { return oracle_enabled.load(); }

Oracle::Oracle(sim::Simulation& sim, LogPeek peek_log)
    : sim_(sim), peek_log_(std::move(peek_log)) {}

bool Oracle::Off() const { return sim_.Aborting(); }

void Oracle::Violation(std::string_view invariant, const std::string& who,
                       const std::string& message) {
  sim_.Fail(InvariantFailure(invariant, who, message));
}

Oracle::TaskRecord* Oracle::Find(const TaskIncarnation& who) {
  auto it = open_.find(who);
  return it == open_.end() ? nullptr : &it->second;
}

std::string Oracle::CurrentThreadName() const {
  return sim_.thread_name(sim_.CurrentThread());
}

// Only the holder changes a task: a restore thread touches only what it holds, and nobody
// touches a task the restore thread holds or one in a queue. (A stream thread's tasks may be
// closed by the thread that joined it, so the stream side is not pinned to one thread.)
void Oracle::CheckHolderThread(const TaskIncarnation& who, const TaskRecord& record,
                               std::string_view action) {
  const std::string current = CurrentThreadName();
  const bool on_restore_thread = restore_threads_.contains(current);
  switch (record.holder) {
    case TaskHolder::kRestoreThread:
      if (current != record.restore_thread) {
        Violation("single_owner", who.ToString(),
                  fmt::format("{} on thread '{}' while restore thread '{}' holds it", action,
                              current, record.restore_thread));
      }
      return;
    case TaskHolder::kStreamThread:
      if (on_restore_thread) {
        Violation("single_owner", who.ToString(),
                  fmt::format("{} on restore thread '{}' while the stream thread holds it",
                              action, current));
      }
      return;
    case TaskHolder::kToRestore:
    case TaskHolder::kFromRestore:
      Violation("single_owner", who.ToString(),
                fmt::format("{} on thread '{}' while it is in the {}", action, current,
                            TaskHolderName(record.holder)));
  }
}

// ---- tasks ----

void Oracle::OnTaskOpened(const Task& task) {
  if (Off()) return;
  ++counts_.events;
  const TaskIncarnation& who = task.incarnation();
  if (open_.contains(who)) {
    Violation("single_owner", who.ToString(), "opened twice");
  }
  TaskRecord record;
  record.task_dir = task.state_manager().task_dir();
  record.type = task.effective_type();
  open_.emplace(who, std::move(record));
}

void Oracle::OnTaskTransition(const Task& task, TaskState from, TaskState to) {
  if (Off()) return;
  ++counts_.events;
  const TaskIncarnation& who = task.incarnation();
  TaskRecord* record = Find(who);
  if (record == nullptr) {
    Violation("single_owner", who.ToString(),
              fmt::format("{} -> {} of a task that is not open", TaskStateName(from),
                          TaskStateName(to)));
  }
  CheckHolderThread(who, *record,
                    fmt::format("{} -> {}", TaskStateName(from), TaskStateName(to)));
  if (to != TaskState::kClosed) return;
  if (record->holder != TaskHolder::kStreamThread) {
    Violation("single_owner", who.ToString(),
              fmt::format("closed while held by the {}", TaskHolderName(record->holder)));
  }
  open_.erase(who);
  closed_.insert(who);
}

void Oracle::OnTaskDestroyed(const TaskIncarnation& who, TaskState state) {
  if (Off()) return;
  // Destroyed without being closed: gone, not open; CheckFinal reports it (a scenario's
  // runtime closes every task, dirty ones included, even when it crashes).
  if (auto it = open_.find(who); it != open_.end()) {
    dropped_.emplace(who, it->second.holder);
    open_.erase(it);
  }
}

void Oracle::OnProcess(const Task& task, size_t records) {
  if (Off() || records == 0) return;
  ++counts_.events;
  const TaskIncarnation& who = task.incarnation();
  TaskRecord* record = Find(who);
  if (record == nullptr) {
    Violation("single_owner", who.ToString(), "processes records but is not open");
  }
  CheckHolderThread(who, *record, "processing");
  for (const TopicPartition& tp : task.state_manager().ChangelogPartitions()) {
    if (!record->completed.contains(tp)) {
      Violation("process_before_restored", who.ToString(),
                fmt::format("processes {} records before changelog {} completed restoration",
                            records, tp.ToString()));
    }
  }
}

// ---- the restore thread's boundary ----

void Oracle::OnHandOff(std::string_view restore_thread, const TaskIncarnation& who,
                       TaskHolder from, TaskHolder to) {
  if (Off()) return;
  ++counts_.events;
  restore_threads_.insert(Str(restore_thread));
  TaskRecord* record = Find(who);
  if (record == nullptr) {
    Violation("single_owner", who.ToString(),
              fmt::format("moves from the {} to the {} but is not open", TaskHolderName(from),
                          TaskHolderName(to)));
  }
  if (record->holder != from) {
    Violation("single_owner", who.ToString(),
              fmt::format("moves from the {} to the {}, but the {} holds it",
                          TaskHolderName(from), TaskHolderName(to),
                          TaskHolderName(record->holder)));
  }
  if (!record->restore_thread.empty() && record->restore_thread != restore_thread) {
    Violation("single_owner", who.ToString(),
              fmt::format("handed to restore thread '{}' after '{}'", restore_thread,
                          record->restore_thread));
  }
  record->holder = to;
  record->restore_thread = Str(restore_thread);
  // Handed in again (a suspended task resumed): its earlier CLOSE is history.
  if (to == TaskHolder::kToRestore) close_applied_.erase({Str(restore_thread), who});
  if (to == TaskHolder::kRestoreThread) record->completed.clear();
}

void Oracle::OnCloseApplied(std::string_view restore_thread, const TaskIncarnation& who) {
  if (Off()) return;
  ++counts_.events;
  const std::string rt = Str(restore_thread);
  if (TaskRecord* record = Find(who); record != nullptr &&
                                      record->holder == TaskHolder::kToRestore &&
                                      record->restore_thread == rt) {
    // Rounds apply in the order they were sent: a CLOSE cannot overtake the CREATE before it.
    Violation("registration", who.ToString(),
              fmt::format("its CLOSE was applied in {} before its CREATE, still queued", rt));
  }
  close_applied_.emplace(rt, who);
  for (const auto& [key, reg] : registered_) {
    if (key.first == rt && reg.owner == who) {
      Violation("registration", who.ToString(),
                fmt::format("changelog {} still registered in {} after its CLOSE was applied",
                            key.second.ToString(), rt));
    }
  }
}

void Oracle::OnTypeConversion(std::string_view restore_thread, const TaskIncarnation& who,
                              TaskType from, TaskType to) {
  if (Off()) return;
  ++counts_.events;
  const std::string rt = Str(restore_thread);
  for (const auto& [key, reg] : registered_) {
    if (key.first == rt && reg.owner.id == who.id) {
      Violation("registration", who.ToString(),
                fmt::format("type conversion {} -> {} while changelog {} is registered (by {})",
                            TaskTypeName(from), TaskTypeName(to), key.second.ToString(),
                            reg.owner.ToString()));
    }
  }
  if (TaskRecord* record = Find(who)) record->type = to;
}

void Oracle::OnRestoreEvent(std::string_view restore_thread, const RestoreEvent& event,
                            bool drained) {
  if (Off()) return;
  ++counts_.events;
  const std::string rt = Str(restore_thread);
  int64_t& in_flight = events_in_flight_[rt];
  in_flight += drained ? -1 : 1;
  if (in_flight < 0) {
    Violation("errors", event.incarnation.ToString(),
              fmt::format("restore thread '{}': an event drained that was never emitted", rt));
  }
  if (event.task != nullptr && event.task->incarnation() != event.incarnation) {
    Violation("errors", event.incarnation.ToString(),
              fmt::format("event carries task {}", event.task->incarnation().ToString()));
  }
  if (drained) {
    if (event.kind == RestoreEvent::Kind::kRestored && event.task != nullptr) {
      CheckStoreContents(*event.task);
    }
    return;
  }
  if (event.kind != RestoreEvent::Kind::kCorrupted) return;
  corruption_reported_.insert(event.incarnation);
  std::string dir;
  if (event.task != nullptr) {
    dir = event.task->state_manager().task_dir();
  } else if (TaskRecord* record = Find(event.incarnation)) {
    dir = record->task_dir;
  }
  if (!dir.empty()) {
    dirs_[dir].corrupted.insert(event.corrupted_changelogs.begin(),
                                event.corrupted_changelogs.end());
  }
}

void Oracle::OnCorruptionHandled(const TaskIncarnation& reported, const Task* acted_on) {
  if (Off()) return;
  ++counts_.events;
  if (!corruption_reported_.contains(reported)) {
    Violation("errors", reported.ToString(), "corruption handled that was never reported");
  }
  if (acted_on != nullptr && acted_on->incarnation() != reported) {
    Violation("errors", reported.ToString(),
              fmt::format("corruption report applied to another incarnation, {}",
                          acted_on->incarnation().ToString()));
  }
}

// ---- the changelog reader ----

void Oracle::OnRegistered(std::string_view reader, const TopicPartition& changelog,
                          const TaskIncarnation& owner, TaskType type) {
  if (Off()) return;
  ++counts_.events;
  const std::string rt = Str(reader);
  ReaderKey key{rt, changelog};
  if (auto it = registered_.find(key); it != registered_.end()) {
    Violation("registration", owner.ToString(),
              fmt::format("changelog {} registered twice in {} (already by {})",
                          changelog.ToString(), rt, it->second.owner.ToString()));
  }
  if (close_applied_.contains({rt, owner})) {
    Violation("registration", owner.ToString(),
              fmt::format("changelog {} registered in {} after the incarnation's CLOSE was "
                          "applied",
                          changelog.ToString(), rt));
  }
  TaskRecord* record = Find(owner);
  if (record == nullptr) {
    if (closed_.contains(owner)) {
      Violation("registration", owner.ToString(),
                fmt::format("changelog {} registered for an incarnation already closed",
                            changelog.ToString()));
    }
    // Never opened as a Task: a reader driven directly by a test. Tracked from here on.
    registered_.emplace(std::move(key), Registration{.owner = owner, .type = type});
    return;
  }
  if (record->holder != TaskHolder::kRestoreThread || record->restore_thread != rt) {
    Violation("registration", owner.ToString(),
              fmt::format("changelog {} registered in {} while the {} holds the task",
                          changelog.ToString(), rt, TaskHolderName(record->holder)));
  }
  registered_.emplace(std::move(key), Registration{.owner = owner, .type = type});
}

void Oracle::OnUnregistered(std::string_view reader, const TopicPartition& changelog,
                            const TaskIncarnation& owner) {
  if (Off()) return;
  ++counts_.events;
  auto it = registered_.find({Str(reader), changelog});
  if (it == registered_.end() || it->second.owner != owner) {
    Violation("registration", owner.ToString(),
              fmt::format("changelog {} unregistered but not registered by it",
                          changelog.ToString()));
  }
  registered_.erase(it);
}

void Oracle::OnRestoredBatch(std::string_view reader, const TopicPartition& changelog,
                             const TaskIncarnation& owner, TaskType type, int64_t next_offset,
                             int64_t records) {
  if (Off()) return;
  ++counts_.events;
  const std::string rt = Str(reader);
  auto it = registered_.find({rt, changelog});
  if (it == registered_.end() || it->second.owner != owner) {
    Violation("registration", owner.ToString(),
              fmt::format("restores changelog {} without being registered for it",
                          changelog.ToString()));
  }
  Registration& reg = it->second;
  if (reg.completed) {
    Violation("restore_progress", owner.ToString(),
              fmt::format("writes to changelog {} after it completed", changelog.ToString()));
  }
  if (next_offset <= reg.position || records <= 0) {
    Violation("restore_progress", owner.ToString(),
              fmt::format("changelog {}: a batch of {} records ending at {} after position {}",
                          changelog.ToString(), records, next_offset, reg.position));
  }
  reg.position = next_offset;
  if (type != TaskType::kStandby) return;
  for (const auto& [key, other] : registered_) {
    if (key.first == rt && other.type == TaskType::kActive && !other.completed) {
      Violation("reader_mode", owner.ToString(),
                fmt::format("standby changelog {} updated while active changelog {} (of {}) "
                            "restores",
                            changelog.ToString(), key.second.ToString(),
                            other.owner.ToString()));
    }
  }
}

void Oracle::OnCompleted(std::string_view reader, const TopicPartition& changelog,
                         const TaskIncarnation& owner, int64_t position, int64_t end_offset) {
  if (Off()) return;
  ++counts_.events;
  auto it = registered_.find({Str(reader), changelog});
  if (it == registered_.end() || it->second.owner != owner) {
    Violation("registration", owner.ToString(),
              fmt::format("changelog {} completed without being registered for it",
                          changelog.ToString()));
  }
  if (position < end_offset) {
    Violation("restore_progress", owner.ToString(),
              fmt::format("changelog {} completed at {} before its end offset {}",
                          changelog.ToString(), position, end_offset));
  }
  it->second.completed = true;
  if (TaskRecord* record = Find(owner)) record->completed.insert(changelog);
}

void Oracle::OnListener(std::string_view reader, const TopicPartition& changelog,
                        ListenerCall call) {
  if (Off()) return;
  ++counts_.events;
  ReaderKey key{Str(reader), changelog};
  const bool open = listening_.contains(key);
  switch (call) {
    case ListenerCall::kStart:
      if (open) {
        Violation("listener_pairing", "-",
                  fmt::format("restore of {} started twice without an end",
                              changelog.ToString()));
      }
      listening_.insert(std::move(key));
      return;
    case ListenerCall::kBatch:
      if (!open) {
        Violation("listener_pairing", "-",
                  fmt::format("batch restored for {} outside a start/end pair",
                              changelog.ToString()));
      }
      return;
    case ListenerCall::kEnd:
    case ListenerCall::kSuspended:
      if (!open) {
        Violation("listener_pairing", "-",
                  fmt::format("restore of {} {} without a start", changelog.ToString(),
                              call == ListenerCall::kEnd ? "ended" : "suspended"));
      }
      listening_.erase(key);
      return;
  }
}

void Oracle::OnReaderDestroyed(std::string_view reader) {
  if (Off()) return;
  ++counts_.events;
  const std::string rt = Str(reader);
  for (auto it = registered_.begin(); it != registered_.end();) {
    it = it->first.first == rt ? registered_.erase(it) : std::next(it);
  }
  for (auto it = close_applied_.begin(); it != close_applied_.end();) {
    it = it->first == rt ? close_applied_.erase(it) : std::next(it);
  }
}

// ---- state managers ----

void Oracle::OnStoresRegistered(const StateManager& state) {
  if (Off()) return;
  ++counts_.events;
  auto [user, inserted] = dir_users_.emplace(state.task_dir(), &state);
  if (!inserted && user->second != &state) {
    Violation("single_owner", state.task_dir(),
              "stores opened while another incarnation of the task has them open");
  }
  DirRecord& dir = dirs_[state.task_dir()];
  dir.pending.clear();
  dir.flushed.clear();
  for (const auto& [tp, offset] : state.flushed_offsets()) {
    dir.pending[tp] = offset;
    dir.flushed[tp] = offset;
  }
}

void Oracle::OnStoresReleased(const StateManager& state) {
  if (Off()) return;
  ++counts_.events;
  auto it = dir_users_.find(state.task_dir());
  if (it != dir_users_.end() && it->second == &state) dir_users_.erase(it);
}

void Oracle::OnAdvance(const StateManager& state, const TopicPartition& changelog,
                       int64_t next_offset) {
  if (Off()) return;
  ++counts_.events;
  dirs_[state.task_dir()].pending[changelog] = next_offset;
}

void Oracle::OnFlushed(const StateManager& state) {
  if (Off()) return;
  ++counts_.events;
  DirRecord& dir = dirs_[state.task_dir()];
  dir.flushed = dir.pending;
}

void Oracle::OnCheckpointWritten(const StateManager& state, const CheckpointOffsets& offsets) {
  if (Off()) return;
  ++counts_.events;
  DirRecord& dir = dirs_[state.task_dir()];
  for (const auto& [tp, offset] : offsets) {
    auto flushed = dir.flushed.find(tp);
    const int64_t limit = flushed == dir.flushed.end() ? 0 : flushed->second;
    if (offset > limit) {
      Violation("checkpoint", state.task_dir(),
                fmt::format("checkpoint names {} at {}, beyond the flushed data (at {})",
                            tp.ToString(), offset, limit));
    }
    if (dir.corrupted.contains(tp)) {
      Violation("checkpoint", state.task_dir(),
                fmt::format("checkpoint names {}, reported corrupted and not wiped since",
                            tp.ToString()));
    }
  }
}

void Oracle::OnWiped(const StateManager& state) {
  if (Off()) return;
  ++counts_.events;
  dirs_.erase(state.task_dir());
}

// ---- store contents ----

void Oracle::CheckStoreContents(const Task& task) {
  // The restored task reached the stream thread: no other thread touches it now.
  StateManager& sm = const_cast<Task&>(task).state_manager();
  for (const TopicPartition& tp : sm.ChangelogPartitions()) {
    auto position = sm.pending_offsets().find(tp);
    const int64_t upto = position == sm.pending_offsets().end() ? 0 : position->second;
    PeekedLog log = peek_log_(tp);
    if (log.start_offset > 0) {
      ++counts_.store_checks_skipped;  // truncated: the fold of what is left is not the state
      continue;
    }
    std::vector<ConsumerRecord> prefix;
    for (ConsumerRecord& r : log.records) {
      if (r.offset >= upto) break;
      prefix.push_back(std::move(r));
    }
    const std::map<std::string, std::string> expected = FoldChangelog(prefix);
    KeyValueStore* store = sm.StoreForChangelog(tp);
    if (store == nullptr) continue;
    absl::StatusOr<std::map<std::string, std::string>> actual = store->ReadAll();
    if (!actual.ok()) continue;  // an unreadable store fails the task, not the oracle
    ++counts_.store_checks;
    if (*actual == expected) continue;
    std::string diff;
    int shown = 0;
    for (const auto& [key, value] : expected) {
      auto it = actual->find(key);
      if (it != actual->end() && it->second == value) continue;
      if (shown++ < 5) {
        diff += fmt::format(" {}: expected {}, found {};", key, value,
                            it == actual->end() ? "nothing" : it->second);
      }
    }
    for (const auto& [key, value] : *actual) {
      if (!expected.contains(key) && shown++ < 5) {
        diff += fmt::format(" {}: expected nothing, found {};", key, value);
      }
    }
    Violation("store_contents", task.incarnation().ToString(),
              fmt::format("store '{}' differs from the fold of {} up to {} ({} vs {} "
                          "entries):{}",
                          store->name(), tp.ToString(), upto, actual->size(), expected.size(),
                          diff));
  }
}

// ---- the end ----

void Oracle::CheckFinal() {
  if (Off()) return;
  for (const auto& [who, record] : open_) {
    Violation("single_owner", who.ToString(),
              fmt::format("still open after shutdown, held by the {}",
                          TaskHolderName(record.holder)));
  }
  for (const auto& [who, holder] : dropped_) {
    Violation("single_owner", who.ToString(),
              fmt::format("destroyed without being closed, held by the {}",
                          TaskHolderName(holder)));
  }
  for (const auto& [rt, in_flight] : events_in_flight_) {
    if (in_flight != 0) {
      Violation("errors", "-",
                fmt::format("{} events emitted by restore thread '{}' never reached the stream "
                            "thread",
                            in_flight, rt));
    }
  }
  for (const ReaderKey& key : listening_) {
    Violation("listener_pairing", "-",
              fmt::format("restore of {} in {} started and never ended or suspended",
                          key.second.ToString(), key.first));
  }
}

}  // namespace restoresim::properties
