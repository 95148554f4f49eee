#include "properties/ledger.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/runtime/count_topology.h"

namespace restoresim::properties {
namespace {

// Every store's contents as the event read them (a store that could not be read, or stores
// not recorded, are left out).
std::map<std::string, std::map<std::string, std::string>> ReadStores(
    const events::StateInfo& state) {
  std::map<std::string, std::map<std::string, std::string>> contents;
  for (const events::StoreSnapshot& store : state.stores) {
    if (store.readable) contents[store.name] = store.data;
  }
  return contents;
}

}  // namespace

std::optional<TaskType> Wanted::Of(TaskId id) const {
  if (active.contains(id)) return TaskType::kActive;
  if (standby.contains(id)) return TaskType::kStandby;
  return std::nullopt;
}

const ChangelogHistory& Ledger::HistoryOf(const TopicPartition& changelog) const {
  static const ChangelogHistory kNone;
  auto it = history.find(changelog);
  return it == history.end() ? kNone : it->second;
}

const TaskRecord* Ledger::Find(const TaskIncarnation& who) const {
  auto it = open.find(who);
  return it == open.end() ? nullptr : &it->second;
}

const TaskIncarnation* Ledger::OwnerOf(const events::StateInfo& state) const {
  auto it = owner_of_.find(state.state_id);
  return it == owner_of_.end() ? nullptr : &it->second;
}

void ChangelogHistory::Append(const ConsumerRecord& record) {
  Append(record.offset, record.key, record.value);
}

constexpr size_t kEntriesReserved = 16;

void ChangelogHistory::Append(int64_t offset, std::string_view key,
                              const std::optional<std::string>& value) {
  if (offset < end_) return;  // seen
  auto it = keys_.find(key);
  if (it == keys_.end()) {
    it = keys_.emplace(std::string(key), std::vector<Entry>{}).first;
    // A key is written a dozen times or so in a run: room for them at once, not a move of
    // the key's records at each doubling.
    it->second.reserve(kEntriesReserved);
  }
  // The value copied once, into place (not emplace_back(offset, value): that is aggregate
  // initialisation from parentheses, which clang 14 lacks; CI's -Wthread-safety step uses it).
  Entry& entry = it->second.emplace_back();
  entry.offset = offset;
  entry.value = value;
  end_ = offset + 1;
}

void ChangelogHistory::Abort(int64_t first, int64_t end) {
  RS_CHECK(first <= end && end <= end_, "aborted [{}, {}) past the history's end {}", first, end,
           end_);
  for (auto it = keys_.begin(); it != keys_.end();) {
    std::vector<Entry>& entries = it->second;
    const size_t before = entries.size();
    std::erase_if(entries, [&](const Entry& e) { return e.offset >= first && e.offset < end; });
    aborted_ += static_cast<int64_t>(before - entries.size());
    it = entries.empty() ? keys_.erase(it) : std::next(it);
  }
}

void Ledger::OnAppend(const events::Appended& record) {
  // Appends come in runs to one partition: the last one's history is asked first (an
  // interned topic's identity and a partition), before the name and the map.
  if (last_history_ == nullptr || last_history_->first != record.tp) {
    // Only changelogs are folded; input topics need no history.
    if (!std::string_view(record.tp.topic).ends_with("-changelog")) return;
    last_history_ = &*history.try_emplace(record.tp).first;
  }
  last_history_->second.Append(record.offset, record.key, record.value);
}

void Ledger::OnAbort(const events::Aborted& abort) {
  if (!std::string_view(abort.tp.topic).ends_with("-changelog")) return;
  history[abort.tp].Abort(abort.first, abort.end);
  aborted[abort.tp].emplace_back(abort.first, abort.end);
}

void Ledger::OnCrash() {
  ++crashes;
  // What the disk kept is what was durable, which the ledger does not track: forget what it
  // knew about directories' contents and checkpoints (the next open tells again).
  for (auto& [dir, record] : dirs) {
    record.clean_close.reset();
    record.checkpointed_high.clear();
    record.wiped = false;
  }
}

// ---- tasks ----

void Ledger::OnTaskOpened(const events::TaskInfo& task) {
  TaskRecord record;
  record.task_dir = task.task_dir;
  record.type = task.type;  // its stream thread: from the decision that made it
  record.state_id = task.state_id;
  owner_of_[record.state_id] = task.who;
  open.emplace(task.who, std::move(record));
}

void Ledger::OnTaskTransition(const events::TaskInfo& task, TaskState from, TaskState to) {
  auto it = open.find(task.who);
  if (it == open.end()) return;
  it->second.state = to;
  if (to != TaskState::kClosed) return;
  auto owner = owner_of_.find(it->second.state_id);
  if (owner != owner_of_.end() && owner->second == task.who) owner_of_.erase(owner);
  open.erase(it);
  closed.insert(task.who);
}

void Ledger::OnTaskDestroyed(const TaskIncarnation& who, TaskState state) {
  auto it = open.find(who);
  if (it == open.end()) return;
  dropped.emplace(who, it->second.holder);
  auto owner = owner_of_.find(it->second.state_id);
  if (owner != owner_of_.end() && owner->second == who) owner_of_.erase(owner);
  open.erase(it);
}

void Ledger::OnHandOff(events::Name restore_thread, const TaskIncarnation& who,
                       TaskHolder from, TaskHolder to) {
  restore_threads.insert(Str(restore_thread));
  if (from == TaskHolder::kStreamThread && to == TaskHolder::kToRestore &&
      !stream_of_index_.contains(restore_thread.id())) {
    SetStreamOf(restore_thread, current_ == nullptr ? events::Name() : current_->thread);
  }
  // A resumed incarnation comes back in a new CREATE after its CLOSE: it may register again.
  if (to == TaskHolder::kToRestore) close_applied.erase({Str(restore_thread), who});
  auto it = open.find(who);
  if (it == open.end()) return;
  it->second.holder = to;
  if (it->second.restore_thread.empty()) it->second.restore_thread = Str(restore_thread);
}

void Ledger::OnCloseApplied(std::string_view restore_thread, const TaskIncarnation& who) {
  close_applied.emplace(Str(restore_thread), who);
}

void Ledger::OnRestoreEvent(std::string_view restore_thread,
                            const events::RestoreEventInfo& event, bool drained) {
  const std::string rt = Str(restore_thread);
  events_in_flight[rt] += drained ? -1 : 1;
  if (drained || event.kind != RestoreEvent::Kind::kCorrupted) return;
  corruption_reported.insert(event.incarnation);
  std::string dir;
  if (event.task.has_value()) {
    dir = event.task->task_dir;
  } else if (const TaskRecord* record = Find(event.incarnation)) {
    dir = record->task_dir;
  }
  if (!dir.empty()) {
    dirs[dir].corrupted.insert(event.corrupted_changelogs.begin(),
                               event.corrupted_changelogs.end());
  }
}

// ---- the changelog reader ----

void Ledger::OnRegistered(const events::Registered& e) {
  Registration reg{.owner = e.owner, .type = e.type};
  if (const TaskRecord* record = Find(e.owner)) {
    reg.task_dir = record->task_dir;
    reg.from_scratch = e.owner_state && !e.start_offset.has_value();
  }
  last_registration_ = nullptr;
  registered.insert_or_assign(ReaderKey{e.reader, e.changelog}, std::move(reg));
}

void Ledger::OnUnregistered(std::string_view reader, const TopicPartition& changelog,
                            const TaskIncarnation& owner) {
  if (auto it = registered.find(ReaderKeyView{reader, changelog}); it != registered.end()) {
    last_registration_ = nullptr;
    registered.erase(it);
  }
}

const Registration* Ledger::RegistrationOf(std::string_view reader,
                                           const TopicPartition& changelog) const {
  if (const auto* last = last_registration_;
      last != nullptr && last->first.first == reader && last->first.second == changelog) {
    return &last->second;
  }
  auto it = registered.find(ReaderKeyView{reader, changelog});
  if (it == registered.end()) return nullptr;
  last_registration_ = &*it;
  return &it->second;
}

int64_t Ledger::CompactedBelow(std::string_view reader, const TopicPartition& changelog,
                              std::string_view task_dir, int64_t log_start) const {
  int64_t below = 0;
  if (auto dir = dirs.find(task_dir); dir != dirs.end()) {
    if (auto b = dir->second.compacted_below.find(changelog);
        b != dir->second.compacted_below.end()) {
      below = b->second;
    }
  }
  const Registration* reg = RegistrationOf(reader, changelog);
  if (reg != nullptr && reg->from_scratch && !reg->scratch_noted) {
    below = std::max(below, log_start);
  }
  return below;
}

void Ledger::OnRestoredBatch(const events::BatchRestored& e) {
  auto it = registered.find(ReaderKeyView{e.reader, e.changelog});
  if (it == registered.end()) return;
  it->second.position = e.next_offset;
  NoteScratchStart(it->second, e.changelog, e.log_start);
}

// Restoring from the log start (no checkpoint): what lay below the log start when it first
// read (or completed) may be gone from the store. (The log start then is at least the one it
// restored from: a read below it would have been out of range.)
// `log_start` is the event's (-1 when the recorder could not tell: nothing is then excused).
void Ledger::NoteScratchStart(Registration& reg, const TopicPartition& changelog,
                              int64_t log_start) {
  if (!reg.from_scratch || reg.scratch_noted || reg.task_dir.empty()) return;
  reg.scratch_noted = true;
  int64_t& below = dirs[reg.task_dir].compacted_below[changelog];
  below = std::max(below, log_start);
}

void Ledger::OnCompleted(const events::Completed& e) {
  auto it = registered.find(ReaderKeyView{e.reader, e.changelog});
  if (it != registered.end()) {
    it->second.completed = true;
    NoteScratchStart(it->second, e.changelog, e.log_start);
  }
  auto task = open.find(e.owner);
  if (task != open.end()) task->second.completed.insert(e.changelog);
}

void Ledger::OnListener(std::string_view reader, const TopicPartition& changelog,
                        ListenerCall call) {
  if (call == ListenerCall::kStart) {
    if (!listening.contains(ReaderKeyView{reader, changelog})) {
      listening.emplace(Str(reader), changelog);
    }
  } else if (call == ListenerCall::kEnd || call == ListenerCall::kSuspended) {
    if (auto it = listening.find(ReaderKeyView{reader, changelog}); it != listening.end()) {
      listening.erase(it);
    }
  }
}

void Ledger::OnReaderDestroyed(std::string_view reader) {
  const std::string rt = Str(reader);
  last_registration_ = nullptr;
  for (auto it = registered.begin(); it != registered.end();) {
    it = it->first.first == rt ? registered.erase(it) : std::next(it);
  }
  for (auto it = close_applied.begin(); it != close_applied.end();) {
    it = it->first == rt ? close_applied.erase(it) : std::next(it);
  }
}

// ---- state managers ----

void Ledger::OnStoresRegistered(const events::StateInfo& state) {
  dir_users.try_emplace(state.task_dir, state.state_id);
  DirRecord& dir = dirs[state.task_dir];
  dir.pending.clear();
  dir.flushed.clear();
  for (const auto& [tp, offset] : state.flushed) {
    dir.pending[tp] = offset;
    dir.flushed[tp] = offset;
  }
  dir.checkpointed = state.flushed;
  dir.checkpoint_failed = false;
  dir.clean_close.reset();
  dir.wiped = false;
  dir.deleted_at_load_by.reset();
}

// An open that deleted the checkpoint it read and then failed before it registered (its
// directory sync failed, or a store did not open) leaves no checkpoint behind: what a clean
// close wrote before is gone (scenario.storage_faults_on_a_live_instance random seed 567, with
// exactly-once and append faults drawn: the next open found none and wiped the store, as it
// should, and the checkpoint checker expected the clean close's).
void Ledger::OnCheckpointDeleted(const events::StateInfo& state) {
  auto user = dir_users.find(state.task_dir);
  if (user != dir_users.end() && user->second == state.state_id) return;  // before processing
  dirs[state.task_dir].deleted_at_load_by = state.state_id;
}

void Ledger::OnStoresReleased(const events::StateInfo& state) {
  if (auto dir = dirs.find(state.task_dir);
      dir != dirs.end() && dir->second.deleted_at_load_by == state.state_id) {
    dir->second.clean_close.reset();
    dir->second.deleted_at_load_by.reset();
  }
  auto it = dir_users.find(state.task_dir);
  if (it != dir_users.end() && it->second == state.state_id) dir_users.erase(it);
}

void Ledger::OnStoresClosing(const events::StateInfo& state, bool clean) {
  DirRecord& dir = dirs[state.task_dir];
  if (!clean || dir.checkpoint_failed) {
    dir.clean_close.reset();
    return;
  }
  dir.clean_close = CleanClose{.checkpoint = dir.checkpointed, .contents = ReadStores(state)};
}

void Ledger::OnAdvance(const events::StateInfo& state, const TopicPartition& changelog,
                       int64_t next_offset) {
  dirs[state.task_dir].pending[changelog] = next_offset;
}

void Ledger::OnFlushed(const events::StateInfo& state) {
  DirRecord& dir = dirs[state.task_dir];
  dir.flushed = dir.pending;
}

void Ledger::OnCheckpointWritten(const events::StateInfo& state, const CheckpointOffsets& offsets) {
  DirRecord& dir = dirs[state.task_dir];
  dir.checkpointed = offsets;  // confirmed (or marked failed) by OnCheckpointResult
  dir.checkpoint_crashes = crashes;
}

void Ledger::OnCheckpointResult(const events::StateInfo& state, bool written) {
  DirRecord& dir = dirs[state.task_dir];
  dir.checkpoint_failed = !written;
  if (!written) return;
  // A write that began before a crash and is reported after it (the writer was descheduled
  // between the two) says nothing of what the crash left on disk (found by
  // scenario.crash_with_storage_damage pct:3 seed 4158: the checkpoint then vanished, and
  // restoring again from the beginning was counted as wasted work).
  if (dir.checkpoint_crashes != crashes) return;
  for (const auto& [tp, offset] : dir.checkpointed) {
    int64_t& high = dir.checkpointed_high[tp];
    high = std::max(high, offset);
  }
}

void Ledger::OnWiped(const events::StateInfo& state) {
  DirRecord& dir = dirs[state.task_dir];
  dir = DirRecord{};
  dir.wiped = true;
}

void Ledger::OnStoreWipedOnOpen(const events::StateInfo& state, const TopicPartition& changelog) {
  DirRecord& dir = dirs[state.task_dir];
  dir.checkpointed_high.erase(changelog);
  dir.compacted_below.erase(changelog);
  dir.corrupted.erase(changelog);
}

// ---- stream threads, restore threads, clients ----

void Ledger::OnAssignment(std::string_view stream_thread, const std::set<TaskId>& active,
                          const std::set<TaskId>& standby) {
  wanted[Str(stream_thread)] = Wanted{active, standby};
}

void Ledger::OnDecision(std::string_view stream_thread, const TaskIncarnation& who,
                        TaskDecision decision, TaskType type) {
  if (decision != TaskDecision::kCreate && decision != TaskDecision::kRecycle) return;
  auto it = open.find(who);
  if (it != open.end()) it->second.stream_thread = Str(stream_thread);
}

void Ledger::OnStreamLoop(events::Name stream_thread, events::Name restore_thread) {
  // Every stream loop names the pair, which seldom changes: one hashed lookup when it did not.
  auto it = stream_of_index_.find(restore_thread.id());
  if (it == stream_of_index_.end() || it->second != stream_thread) {
    SetStreamOf(restore_thread, stream_thread);
  }
}

void Ledger::SetStreamOf(events::Name restore_thread, events::Name stream_thread) {
  stream_of[restore_thread.str()] = stream_thread.str();
  stream_of_index_[restore_thread.id()] = stream_thread;
  RS_CHECK_EQ(stream_of.size(), stream_of_index_.size(), "stream_of's index out of step");
}

const events::Name* Ledger::StreamOf(events::Name restore_thread) const {
  auto it = stream_of_index_.find(restore_thread.id());
  return it == stream_of_index_.end() ? nullptr : &it->second;
}

void Ledger::OnStreamThreadState(std::string_view stream_thread, StreamThreadState from,
                                 StreamThreadState to) {
  if (to == StreamThreadState::kPendingShutdown || to == StreamThreadState::kDead) {
    finished_threads.insert(Str(stream_thread));
  }
}

void Ledger::OnRestoreStopped(std::string_view restore_thread) {
  finished_threads.insert(Str(restore_thread));
}

const Ledger::InstanceRecord* Ledger::InstanceOfWire(events::Name wire_id) const {
  const ClientIndex* client = ClientEntry(wire_id);
  return client == nullptr ? nullptr : client->instance;
}

const events::Name* Ledger::ClientOwnerOf(events::Name client_id) const {
  const ClientIndex* client = ClientEntry(client_id);
  return client == nullptr || !client->owner.has_value() ? nullptr : &*client->owner;
}

const Ledger::ClientIndex* Ledger::ClientEntry(events::Name client_id) const {
  if (client_id.id() != last_client_id_) {
    auto it = clients_.find(client_id.id());
    last_client_ = it == clients_.end() ? nullptr : &it->second;
    last_client_id_ = client_id.id();
  }
  return last_client_;
}

const Ledger::InstanceRecord* Ledger::InstanceOfThread(events::Name thread) const {
  auto it = thread_instance_index_.find(thread.id());
  return it == thread_instance_index_.end() ? nullptr : it->second;
}

void Ledger::OnClientConnection(std::string_view instance, std::string_view base_id,
                                std::string_view wire_id, bool open) {
  InstanceRecord& r = instances[Str(instance)];
  if (!open) {
    r.open_wires.erase(Str(wire_id));
    return;
  }
  r.open_wires.insert(Str(wire_id));
  const events::Name wire(wire_id);
  // The first claimer keeps it.
  if (wire_instance.emplace(Str(wire_id), Str(instance)).second) {
    ClientIndex& client = MutableClient(wire);
    RS_CHECK(client.instance == nullptr, "wire {} indexed twice", wire_id);
    client.instance = &r;
  }
  // The wire id is the base id's client: same owner thread (thread_confinement).
  if (auto owner = client_owner.find(base_id); owner != client_owner.end()) {
    client_owner[Str(wire_id)] = owner->second;
    MutableClient(wire).owner = events::Name(owner->second);
    r.threads.insert(owner->second);
    thread_instance[owner->second] = Str(instance);
    thread_instance_index_[events::Name(owner->second).id()] = &r;  // (`instances` keeps it)
  }
}

void Ledger::OnCheckpointNotice(std::string_view instance, CheckpointNotice notice) {
  InstanceRecord& r = instances[Str(instance)];
  switch (notice) {
    case CheckpointNotice::kCheckpointBegin: r.in_cycle = true; break;
    case CheckpointNotice::kFrozen: r.frozen = true; break;
    case CheckpointNotice::kAbandoned: r.in_cycle = false; break;
    case CheckpointNotice::kRestoreBegin:
      r.frozen = false;
      r.end_at_restore.clear();
      for (const auto& [key, reg] : registered) {
        if (!r.threads.contains(key.first) || reg.type != TaskType::kActive || reg.completed) {
          continue;
        }
        auto h = history.find(key.second);
        r.end_at_restore[key] = {reg.owner, h == history.end() ? 0 : h->second.end()};
      }
      break;
    case CheckpointNotice::kRestored: r.in_cycle = false; break;
  }
}

void Ledger::OnClientOwner(events::Name client_id, events::Name thread) {
  client_owner[client_id.str()] = thread.str();
  MutableClient(client_id).owner = thread;
  finished_threads.erase(Str(thread));
}

// ---- history ----

// One walk over the history's keys and the store's, both sorted by key: a key's expectation
// is a binary search of its offsets, its contents a step of the walk (a lookup per key in
// each map, as before, cost a log factor of string comparisons per key, at every batch).
// The text is as before: the history's keys' differences first, then keys no record named,
// at most five in all.
std::string DiffFromHistory(const ChangelogHistory& history, int64_t upto,
                            int64_t compacted_below,
                            const std::map<std::string, std::string>& actual, bool or_later) {
  std::vector<std::string> differ;  // per history key, in key order
  std::vector<std::string> extra;   // keys no record named, in key order
  constexpr size_t kShownMax = 5;
  auto show = [](const std::string* v) { return v != nullptr ? *v : std::string("nothing"); };
  using Entry = ChangelogHistory::Entry;
  auto a = actual.begin();
  for (const auto& [key, entries] : history.keys()) {
    // One comparison per step: where the store's key sorts against the history's.
    int order = 1;
    for (; a != actual.end() && (order = a->first.compare(key)) < 0; ++a) {
      if (extra.size() < kShownMax) {
        extra.push_back(fmt::format("{}: expected nothing, found {}", a->first, a->second));
      }
    }
    const std::string* found = nullptr;
    if (a != actual.end() && order == 0) found = &(a++)->second;
    // The key's last record below `upto`, if any (most often its last record of all: no
    // search then; a key has at least one record, Abort drops keys it empties).
    auto after = entries.back().offset < upto
                     ? entries.end()
                     : std::lower_bound(entries.begin(), entries.end(), upto,
                                        [](const Entry& e, int64_t o) { return e.offset < o; });
    const bool seen = after != entries.begin();
    const std::string* expected =
        seen && std::prev(after)->value.has_value() ? &*std::prev(after)->value : nullptr;
    if (!seen && !or_later) {
      if (found != nullptr && differ.size() < kShownMax) {
        differ.push_back(fmt::format("{}: expected nothing, found {}", key, *found));
      }
      continue;
    }
    const bool same = found == nullptr ? expected == nullptr
                                       : expected != nullptr && *found == *expected;
    if (same) continue;
    if (found == nullptr && seen && std::prev(after)->offset < compacted_below) continue;
    // Ahead of `upto` for this key: what a later record of it says.
    if (or_later && std::any_of(after, entries.end(), [&](const Entry& e) {
          return found == nullptr ? !e.value.has_value() : e.value == *found;
        })) {
      continue;
    }
    if (differ.size() < kShownMax) {
      differ.push_back(
          fmt::format("{}: expected {}, found {}", key, show(expected), show(found)));
    }
  }
  for (; a != actual.end() && extra.size() < kShownMax; ++a) {
    extra.push_back(fmt::format("{}: expected nothing, found {}", a->first, a->second));
  }
  std::string diff;
  size_t shown = 0;
  for (const std::vector<std::string>* notes : {&differ, &extra}) {
    for (const std::string& note : *notes) {
      if (shown++ < kShownMax) diff += " " + note + ";";
    }
  }
  return diff;
}

}  // namespace restoresim::properties
