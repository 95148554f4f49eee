// Ledger: the oracle's own account of a run — who holds each task, what each changelog reader
// has registered, what each task directory's stores hold and checkpointed, what each stream
// thread is assigned, who owns each transport client, and the whole history of every
// changelog. The checkers (checker.h) read it; the Oracle updates it after every checker saw an
// event, so a checker sees the state *before* the event it judges. It is built from events
// (core/events/event.h) alone.
//
// It keeps facts only; it judges nothing (every violation is a checker's). Identity of state
// managers is the events' state_id, used for lookup only and never for ordering.
//
// Thread-safety: not thread-safe; the oracle's caller only.
#ifndef RESTORESIM_PROPERTIES_LEDGER_H_
#define RESTORESIM_PROPERTIES_LEDGER_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/events/event.h"

namespace restoresim::properties {

// A view as an owned string: the ledger and the checkers key their maps by std::string.
inline std::string Str(std::string_view s) { return std::string(s); }

struct TaskRecord {
  TaskHolder holder = TaskHolder::kStreamThread;
  TaskState state = TaskState::kCreated;
  std::string restore_thread;  // once handed to one
  std::string stream_thread;   // the stream thread whose task manager made it ("" if none)
  std::string task_dir;
  TaskType type = TaskType::kActive;   // effective type at creation
  std::set<TopicPartition> completed;  // changelogs completed under this incarnation
  uint64_t state_id = 0;  // its state manager (events::TaskInfo::state_id)
};

struct Registration {
  TaskIncarnation owner;
  TaskType type = TaskType::kActive;
  bool completed = false;
  int64_t position = -1;
  std::string task_dir;  // empty for a reader driven directly by a test
  bool from_scratch = false;   // registered without a checkpointed position
  bool scratch_noted = false;  // its log start noted (Ledger::NoteScratchStart)
};

// What a clean close left in a directory: the checkpoint and the stores' contents.
struct CleanClose {
  CheckpointOffsets checkpoint;
  std::map<std::string, std::map<std::string, std::string>> contents;  // per store
};

struct DirRecord {
  std::map<TopicPartition, int64_t> pending;  // the oracle's account of Advance
  std::map<TopicPartition, int64_t> flushed;  // and of flushes
  std::set<TopicPartition> corrupted;         // reported corrupted, not wiped since
  // The last checkpoint written (or read at the last open), and whether a write failed since.
  CheckpointOffsets checkpointed;
  bool checkpoint_failed = false;
  uint64_t checkpoint_crashes = 0;  // Ledger::crashes when that write began
  // The highest offset ever checkpointed since the last wipe or crash: restoring below it is
  // restoring records again.
  std::map<TopicPartition, int64_t> checkpointed_high;
  // Restored from the log start while the log started here: records below it may be missing
  // from the store (compaction), and only those.
  std::map<TopicPartition, int64_t> compacted_below;
  std::optional<CleanClose> clean_close;  // the last close, when clean and nothing since
  bool wiped = false;                     // wiped, not opened since
  // Under exactly-once, an open deletes the checkpoint it read before it registers: the state
  // manager that did, until it registers or lets the stores go (then the checkpoint is gone).
  std::optional<uint64_t> deleted_at_load_by;
};

struct Wanted {
  std::set<TaskId> active;
  std::set<TaskId> standby;
  std::optional<TaskType> Of(TaskId id) const;
};

// A changelog's whole history (every record ever appended, from offset 0), indexed by key: what
// a store must hold at an offset is then a binary search per key, not a scan of the log.
class ChangelogHistory {
 public:
  struct Entry {
    int64_t offset = 0;
    std::optional<std::string> value;  // nullopt: a tombstone
  };

  void Append(const ConsumerRecord& record);
  // The same from an event's fields (the key copied only at its first record).
  void Append(int64_t offset, std::string_view key, const std::optional<std::string>& value);
  // Forgets the records in [first, end): an abort marker took them back (read_committed never
  // returns them, so no store restored from the changelog holds them).
  void Abort(int64_t first, int64_t end);
  int64_t aborted() const { return aborted_; }
  // Every key's records, in offset order.
  const std::map<std::string, std::vector<Entry>, std::less<>>& keys() const { return keys_; }
  int64_t end() const { return end_; }

 private:
  std::map<std::string, std::vector<Entry>, std::less<>> keys_;
  int64_t end_ = 0;
  int64_t aborted_ = 0;  // records forgotten by Abort
};
using LogHistory = std::map<TopicPartition, ChangelogHistory>;

// A changelog of a reader, as a lookup key that builds no string.
struct ReaderKeyView {
  std::string_view reader;
  const TopicPartition& changelog;
};

// The order of std::pair<std::string, TopicPartition> (reader, then changelog), which also
// compares ReaderKeyViews: the maps keyed by a reader's changelog are looked up with a hook's
// string_view and iterated in the same order as before.
struct ReaderKeyLess {
  using is_transparent = void;
  static std::string_view Reader(const std::pair<std::string, TopicPartition>& k) {
    return k.first;
  }
  static std::string_view Reader(const ReaderKeyView& k) { return k.reader; }
  static const TopicPartition& Changelog(const std::pair<std::string, TopicPartition>& k) {
    return k.second;
  }
  static const TopicPartition& Changelog(const ReaderKeyView& k) { return k.changelog; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    if (const int c = Reader(a).compare(Reader(b)); c != 0) return c < 0;
    return Changelog(a) < Changelog(b);
  }
};

class Ledger final {
 public:
  using ReaderKey = std::pair<std::string, TopicPartition>;

  Ledger() = default;
  Ledger(const Ledger&) = delete;  // (RegistrationOf's memory points into its own map)
  Ledger& operator=(const Ledger&) = delete;

  // The header of the event being recorded (the Oracle sets it before each event).
  void SetCurrent(const events::EventHeader* header) { current_ = header; }

  const TaskRecord* Find(const TaskIncarnation& who) const;
  // Every record appended to `changelog` (empty for one nothing was appended to).
  const ChangelogHistory& HistoryOf(const TopicPartition& changelog) const;
  // For a batch restored into `task_dir`'s store of `changelog` by `reader`: below which offset
  // a key may be missing from it (what the directory's earlier from-scratch restorations found
  // removed, and, for this registration's first batch from scratch, `log_start` now: the ledger
  // notes it only after that batch's event).
  int64_t CompactedBelow(std::string_view reader, const TopicPartition& changelog,
                         std::string_view task_dir, int64_t log_start) const;
  // What `reader` has registered for `changelog` (null: nothing).
  // Remembers its last answer (five checkers ask for one batch's): `registered` changes only
  // through the Ledger's own methods, which forget it.
  const Registration* RegistrationOf(std::string_view reader,
                                     const TopicPartition& changelog) const;
  // The open task whose state manager this is (null: none, e.g. a test's own state manager).
  const TaskIncarnation* OwnerOf(const events::StateInfo& state) const;

  // ---- the facts ----
  std::map<TaskIncarnation, TaskRecord> open;
  std::set<TaskIncarnation> closed;
  std::map<TaskIncarnation, TaskHolder> dropped;  // destroyed without being closed
  std::map<std::string, uint64_t> dir_users;  // task directory -> state_id
  std::set<std::pair<std::string, TaskIncarnation>> close_applied;
  std::map<ReaderKey, Registration, ReaderKeyLess> registered;
  std::set<ReaderKey, ReaderKeyLess> listening;
  std::map<std::string, DirRecord, std::less<>> dirs;
  std::map<std::string, int64_t, std::less<>> events_in_flight;  // per restore thread
  std::set<TaskIncarnation> corruption_reported;
  std::set<std::string, std::less<>> restore_threads;
  // (Keyed by name with transparent lookups: a hook's string_view finds without allocating.)
  std::map<std::string, Wanted, std::less<>> wanted;             // per stream thread
  std::map<std::string, std::string, std::less<>> stream_of;     // restore thread -> stream
  std::map<std::string, std::string, std::less<>> client_owner;  // client id -> thread
  // Stream threads past their loop, stopped restore threads.
  std::set<std::string, std::less<>> finished_threads;
  LogHistory history;
  // Per changelog, the offset ranges [first, end) abort markers took back (exactly once).
  std::map<TopicPartition, std::vector<std::pair<int64_t, int64_t>>> aborted;

  // Checkpoint/restore (checks/checkpoint_restore.cc): per runtime instance ("" for a single
  // Runtime), its phase, its open connections, its threads; per wire client id, the instance
  // that connected under it first.
  struct InstanceRecord {
    bool in_cycle = false;  // between checkpoint begin and restored (or abandoned)
    bool frozen = false;    // between frozen and restore begin
    std::set<std::string, std::less<>> open_wires;
    std::set<std::string, std::less<>> threads;  // owners of its clients
    // Active changelogs restoring at the restore's begin, per reader: the registration's owner
    // and the broker's end offset then.
    std::map<ReaderKey, std::pair<TaskIncarnation, int64_t>> end_at_restore;
  };
  std::map<std::string, InstanceRecord, std::less<>> instances;
  std::map<std::string, std::string, std::less<>> wire_instance;
  std::map<std::string, std::string, std::less<>> thread_instance;
  // The instance a wire client id belongs to (null: not a suspendable transport's client).
  const InstanceRecord* InstanceOfWire(events::Name wire_id) const;
  // The thread that owns transport client `client_id` (null: none reported), as client_owner
  // has it.
  const events::Name* ClientOwnerOf(events::Name client_id) const;
  // The stream thread of `restore_thread` (null: none known), as stream_of has it.
  const events::Name* StreamOf(events::Name restore_thread) const;
  const InstanceRecord* InstanceOfThread(events::Name thread) const;

  // Reported by the world: every record appended to a changelog, and crashes of the file
  // system (what the disk keeps is no longer what the ledger last saw written).
  void OnAppend(const events::Appended& record);
  // Records an abort marker took back (exactly once): forgotten by the changelog's history.
  void OnAbort(const events::Aborted& abort);
  void OnCrash();
  uint64_t crashes = 0;  // file-system crashes so far

  // ---- runtime events (as the checkers' hooks): bookkeeping only ----
  void OnClientConnection(std::string_view instance, std::string_view base_id,
                          std::string_view wire_id, bool open);
  void OnCheckpointNotice(std::string_view instance, CheckpointNotice notice);
  void OnTaskOpened(const events::TaskInfo& task);
  void OnTaskTransition(const events::TaskInfo& task, TaskState from, TaskState to);
  void OnTaskDestroyed(const TaskIncarnation& who, TaskState state);
  void OnHandOff(events::Name restore_thread, const TaskIncarnation& who, TaskHolder from,
                 TaskHolder to);
  void OnCloseApplied(std::string_view restore_thread, const TaskIncarnation& who);
  void OnRestoreEvent(std::string_view restore_thread, const events::RestoreEventInfo& event,
                      bool drained);
  void OnRegistered(const events::Registered& e);
  void OnUnregistered(std::string_view reader, const TopicPartition& changelog,
                      const TaskIncarnation& owner);
  void OnRestoredBatch(const events::BatchRestored& e);
  void OnCompleted(const events::Completed& e);
  void OnListener(std::string_view reader, const TopicPartition& changelog,
                  ListenerCall call);
  void OnReaderDestroyed(std::string_view reader);
  void OnStoresRegistered(const events::StateInfo& state);
  void OnStoresReleased(const events::StateInfo& state);
  void OnCheckpointDeleted(const events::StateInfo& state);
  void OnStoresClosing(const events::StateInfo& state, bool clean);
  void OnAdvance(const events::StateInfo& state, const TopicPartition& changelog,
                 int64_t next_offset);
  void OnFlushed(const events::StateInfo& state);
  void OnCheckpointWritten(const events::StateInfo& state, const CheckpointOffsets& offsets);
  void OnCheckpointResult(const events::StateInfo& state, bool written);
  void OnWiped(const events::StateInfo& state);
  void OnStoreWipedOnOpen(const events::StateInfo& state, const TopicPartition& changelog);
  void OnAssignment(std::string_view stream_thread, const std::set<TaskId>& active,
                    const std::set<TaskId>& standby);
  void OnDecision(std::string_view stream_thread, const TaskIncarnation& who,
                  TaskDecision decision, TaskType type);
  void OnStreamLoop(events::Name stream_thread, events::Name restore_thread);
  void OnStreamThreadState(std::string_view stream_thread, StreamThreadState from,
                           StreamThreadState to);
  void OnRestoreStopped(std::string_view restore_thread);
  void OnClientOwner(events::Name client_id, events::Name thread);

 private:
  // What a transport call asks of a client, indexed by its interned name (every transport
  // call asks: a hashed lookup of the name's identity, where client_owner and wire_instance,
  // the ordered record, compare strings). Lookup only, never iterated.
  struct ClientIndex {
    std::optional<events::Name> owner;        // client_owner's entry
    const InstanceRecord* instance = nullptr;  // wire_instance's, in `instances` (never erased)
  };
  absl::flat_hash_map<const void*, ClientIndex> clients_;  // by events::Name::id()
  // The last client looked up (a transport call asks two checkers' questions of one client,
  // and calls come in runs), and its entry (null: none); forgotten whenever clients_ changes.
  mutable const void* last_client_id_ = nullptr;
  mutable const ClientIndex* last_client_ = nullptr;
  const ClientIndex* ClientEntry(events::Name client_id) const;
  ClientIndex& MutableClient(events::Name client_id) {
    last_client_id_ = nullptr;
    return clients_[client_id.id()];
  }
  // thread_instance's instances by the thread's name's identity (every loop asks).
  absl::flat_hash_map<const void*, const InstanceRecord*> thread_instance_index_;
  // stream_of by the restore thread's name's identity (every stream loop names the pair).
  absl::flat_hash_map<const void*, events::Name> stream_of_index_;
  void SetStreamOf(events::Name restore_thread, events::Name stream_thread);

  void NoteScratchStart(Registration& reg, const TopicPartition& changelog, int64_t log_start);

  const events::EventHeader* current_ = nullptr;
  // RegistrationOf's last answer (null: none); its key is compared by contents at each use.
  mutable const std::pair<const ReaderKey, Registration>* last_registration_ = nullptr;
  // OnAppend's last changelog (null: none yet); `history` never drops an entry, so it stays.
  std::pair<const TopicPartition, ChangelogHistory>* last_history_ = nullptr;
  std::map<uint64_t, TaskIncarnation> owner_of_;  // state_id -> its open task; lookup only
};

// What a store restored or written up to `upto` may hold: the fold of the history below
// `upto`, where a key whose last record lies below `compacted_below` may also be missing
// (removed with the records the log no longer has). With `or_later`, a key may instead hold
// what a later record of it says (the store is ahead of `upto` for that key: data newer than
// a checkpoint). Returns "" when `actual` fits, else what differs (at most a few keys).
std::string DiffFromHistory(const ChangelogHistory& history, int64_t upto,
                            int64_t compacted_below,
                            const std::map<std::string, std::string>& actual,
                            bool or_later = false);

}  // namespace restoresim::properties

#endif  // RESTORESIM_PROPERTIES_LEDGER_H_
