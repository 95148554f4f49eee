// The runtime's events as data: one struct per kind of RuntimeObserver call (and three the
// world reports: a changelog record appended, a file-system crash, the end of a run), each
// behind a header naming the thread that emitted it, that thread's sequence number and a clock
// reading. The EventRecorder (event_recorder.h) turns observer calls into these in both
// worlds; the invariant oracle (properties/oracle.h) judges nothing else; event_codec.h writes
// and reads them as text (docs/EVENTS.md is the field table, versioned by kEventFormatVersion).
//
// Events hold values only: a task or a state manager appears as a snapshot of what the oracle
// reads of it (TaskInfo, StateInfo); a state manager's identity is an opaque number (its
// address while it lives), used for equality only, never for ordering.
//
// Each struct names its kind (kName, the codec's first token) and lists its fields in order
// with Fields(v): v("name", field) for each.
//
// Thread-safety: plain values.
#ifndef RESTORESIM_CORE_EVENTS_EVENT_H_
#define RESTORESIM_CORE_EVENTS_EVENT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "core/events/name.h"
#include "core/runtime/runtime_observer.h"

namespace restoresim::events {

// The text format's version (event_codec.h); bump it on any change of a kind or a field.
inline constexpr int kEventFormatVersion = 7;

struct EventHeader {
  Name thread;    // the emitting thread's name ("" outside any named thread)
  uint64_t seq = 0;      // 1, 2, ... per thread name, in the order that thread emitted
  int64_t clock_ns = 0;  // the run's clock: virtual time in simulation, the Clock port else
};

// A task as the oracle reads it when an event names it.
struct TaskInfo {
  TaskIncarnation who;
  std::string task_dir;
  TaskType type = TaskType::kActive;       // effective type (a prepared conversion counts)
  std::vector<TopicPartition> changelogs;  // of its registered stores
  uint64_t state_id = 0;                   // its state manager's identity
  bool exactly_once = false;               // its state manager runs under exactly_once_v2
};

// One store read at the event (only where an invariant reads stores: see StateInfo::stores).
struct StoreSnapshot {
  std::string name;
  TopicPartition changelog;
  bool readable = false;  // ReadAll succeeded (`data` is empty otherwise)
  uint64_t entries = 0;   // NumEntries
  std::map<std::string, std::string> data;
};

// A state manager as the oracle reads it when an event names it: its identity and directory
// always; its offsets and stores only in the events whose invariants read them (full
// snapshots): StoresRegistered, StoresClosing (clean), CheckpointWritten, and a drained
// kRestored RestoreEventMoved. A recorder told not to read stores leaves `stores` empty and
// stores_read false; the store checks then count the store as skipped.
struct StateInfo {
  uint64_t state_id = 0;
  std::string task_dir;
  CheckpointOffsets flushed;
  CheckpointOffsets pending;
  bool stores_read = false;
  std::vector<StoreSnapshot> stores;
  // The store that holds `changelog` (null: none, or not read).
  const StoreSnapshot* StoreFor(const TopicPartition& changelog) const;
  const StoreSnapshot* Store(std::string_view name) const;
};

// RestoreEvent (restore_thread.h) as data: `task` is the task it carries, if any.
struct RestoreEventInfo {
  RestoreEvent::Kind kind = RestoreEvent::Kind::kWarning;
  TaskIncarnation incarnation;
  std::optional<TaskInfo> task;
  std::optional<StateInfo> state;  // the task's state manager (with stores when read)
  std::set<TopicPartition> corrupted_changelogs;
  absl::Status error;
};

#define RS_EVENT(Type, name) \
  static constexpr std::string_view kName = name
#define RS_FIELDS(...)              \
  template <typename V>             \
  void Fields(V& v) {               \
    __VA_ARGS__;                    \
  }

struct TaskOpened { RS_EVENT(TaskOpened, "task_opened"); TaskInfo task;
  RS_FIELDS(v("task", task)) };
struct TaskTransitioned { RS_EVENT(TaskTransitioned, "task_transition"); TaskInfo task;
  TaskState from{}; TaskState to{};
  RS_FIELDS(v("task", task); v("from", from); v("to", to)) };
struct TaskDestroyed { RS_EVENT(TaskDestroyed, "task_destroyed"); TaskIncarnation who;
  TaskState state{}; RS_FIELDS(v("who", who); v("state", state)) };
struct Processed { RS_EVENT(Processed, "process"); TaskInfo task; uint64_t records = 0;
  RS_FIELDS(v("task", task); v("records", records)) };
struct HandedOff { RS_EVENT(HandedOff, "hand_off"); Name restore_thread;
  TaskIncarnation who; TaskHolder from{}; TaskHolder to{};
  RS_FIELDS(v("restore_thread", restore_thread); v("who", who); v("from", from); v("to", to)) };
struct CloseApplied { RS_EVENT(CloseApplied, "close_applied"); Name restore_thread;
  TaskIncarnation who; RS_FIELDS(v("restore_thread", restore_thread); v("who", who)) };
struct TypeConverted { RS_EVENT(TypeConverted, "type_conversion"); StateInfo state;
  TaskType from{}; TaskType to{};
  RS_FIELDS(v("state", state); v("from", from); v("to", to)) };
struct RestoreEventMoved { RS_EVENT(RestoreEventMoved, "restore_event");
  Name restore_thread; RestoreEventInfo event; bool drained = false;
  RS_FIELDS(v("restore_thread", restore_thread); v("event", event); v("drained", drained)) };
struct CorruptionHandled { RS_EVENT(CorruptionHandled, "corruption_handled");
  TaskIncarnation reported; std::optional<TaskIncarnation> acted_on;
  RS_FIELDS(v("reported", reported); v("acted_on", acted_on)) };
struct RoundQueued { RS_EVENT(RoundQueued, "round_queued"); Name restore_thread;
  uint64_t items = 0; RS_FIELDS(v("restore_thread", restore_thread); v("items", items)) };
struct RestoreLoopBegan { RS_EVENT(RestoreLoopBegan, "restore_loop");
  Name restore_thread; RS_FIELDS(v("restore_thread", restore_thread)) };
struct RestoreIdled { RS_EVENT(RestoreIdled, "restore_idle"); Name restore_thread;
  bool begin = false; bool woken = false;
  RS_FIELDS(v("restore_thread", restore_thread); v("begin", begin); v("woken", woken)) };
struct RoundsDrained { RS_EVENT(RoundsDrained, "rounds_drained"); Name restore_thread;
  uint64_t rounds = 0; RS_FIELDS(v("restore_thread", restore_thread); v("rounds", rounds)) };
struct RestoreShutdownRequested { RS_EVENT(RestoreShutdownRequested, "restore_shutdown");
  Name restore_thread; RS_FIELDS(v("restore_thread", restore_thread)) };
struct RestoreStopped { RS_EVENT(RestoreStopped, "restore_stopped");
  Name restore_thread; RS_FIELDS(v("restore_thread", restore_thread)) };
struct AssignmentChanged { RS_EVENT(AssignmentChanged, "assignment");
  Name stream_thread; std::set<TaskId> active; std::set<TaskId> standby; bool revocation = false;
  RS_FIELDS(v("stream_thread", stream_thread); v("active", active); v("standby", standby);
            v("revocation", revocation)) };
struct DecisionTaken { RS_EVENT(DecisionTaken, "decision"); Name stream_thread;
  TaskIncarnation who; TaskDecision decision{}; TaskType type{};
  RS_FIELDS(v("stream_thread", stream_thread); v("who", who); v("decision", decision);
            v("type", type)) };
struct TaskFailed { RS_EVENT(TaskFailed, "task_failed"); Name stream_thread;
  TaskIncarnation who; absl::Status error;
  RS_FIELDS(v("stream_thread", stream_thread); v("who", who); v("error", error)) };
struct TaskManagerViewed { RS_EVENT(TaskManagerViewed, "task_manager_view");
  Name stream_thread; std::vector<TaskView> tasks;
  RS_FIELDS(v("stream_thread", stream_thread); v("tasks", tasks)) };
struct StreamLoopBegan { RS_EVENT(StreamLoopBegan, "stream_loop"); Name stream_thread;
  Name restore_thread;
  RS_FIELDS(v("stream_thread", stream_thread); v("restore_thread", restore_thread)) };
struct StreamThreadStateChanged { RS_EVENT(StreamThreadStateChanged, "stream_thread_state");
  Name stream_thread; StreamThreadState from{}; StreamThreadState to{};
  RS_FIELDS(v("stream_thread", stream_thread); v("from", from); v("to", to)) };
struct ProcessingStopped { RS_EVENT(ProcessingStopped, "processing_stopped");
  Name stream_thread; RS_FIELDS(v("stream_thread", stream_thread)) };
struct ProcessBegan { RS_EVENT(ProcessBegan, "process_begin"); Name stream_thread;
  RS_FIELDS(v("stream_thread", stream_thread)) };
struct TopologyPaused { RS_EVENT(TopologyPaused, "topology_pause"); Name topology;
  bool paused = false; std::vector<std::string> threads;
  RS_FIELDS(v("topology", topology); v("paused", paused); v("threads", threads)) };
struct TaskPaused { RS_EVENT(TaskPaused, "task_paused"); Name thread;
  TaskIncarnation who; bool paused = false;
  RS_FIELDS(v("thread", thread); v("who", who); v("paused", paused)) };
struct RuntimeStateChanged { RS_EVENT(RuntimeStateChanged, "runtime_state");
  Name instance; RuntimeState from{}; RuntimeState to{};
  std::vector<std::string> threads;
  RS_FIELDS(v("instance", instance); v("from", from); v("to", to); v("threads", threads)) };
struct ClientOwned { RS_EVENT(ClientOwned, "client_owner"); Name client_id;
  Name thread; RS_FIELDS(v("client_id", client_id); v("thread", thread)) };
struct TransportCalled { RS_EVENT(TransportCalled, "transport_call"); Name client_id;
  Name call; RS_FIELDS(v("client_id", client_id); v("call", call)) };
struct ClientConnected { RS_EVENT(ClientConnected, "client_connection");
  Name instance; Name base_id; Name wire_id; bool open = false;
  RS_FIELDS(v("instance", instance); v("base_id", base_id); v("wire_id", wire_id);
            v("open", open)) };
struct CheckpointNoticed { RS_EVENT(CheckpointNoticed, "checkpoint_notice");
  Name instance; CheckpointNotice notice{};
  RS_FIELDS(v("instance", instance); v("notice", notice)) };
struct EndOffsetRefreshed { RS_EVENT(EndOffsetRefreshed, "end_offset_refreshed");
  Name reader; TopicPartition changelog; int64_t end_offset = 0;
  RS_FIELDS(v("reader", reader); v("changelog", changelog); v("end_offset", end_offset)) };
// `owner_state`: whether the owner was an open task with a state manager when it registered,
// and `start_offset` that state manager's StartOffset (nullopt: from the beginning).
struct Registered { RS_EVENT(Registered, "registered"); Name reader;
  TopicPartition changelog; TaskIncarnation owner; TaskType type{};
  bool owner_state = false; std::optional<int64_t> start_offset;
  RS_FIELDS(v("reader", reader); v("changelog", changelog); v("owner", owner); v("type", type);
            v("owner_state", owner_state); v("start_offset", start_offset)) };
struct Unregistered { RS_EVENT(Unregistered, "unregistered"); Name reader;
  TopicPartition changelog; TaskIncarnation owner;
  RS_FIELDS(v("reader", reader); v("changelog", changelog); v("owner", owner)) };
// `log_start`: the changelog's log start offset at the event (-1: the recorder cannot tell).
// `state`: under exactly once only, the owner's state manager after the batch, full (with its
// stores when read): what eos_restored_batch compares with the committed history.
struct BatchRestored { RS_EVENT(BatchRestored, "restored_batch"); Name reader;
  TopicPartition changelog; TaskIncarnation owner; TaskType type{}; int64_t next_offset = 0;
  int64_t records = 0; int64_t log_start = -1; bool exactly_once = false;
  std::optional<StateInfo> state;
  RS_FIELDS(v("reader", reader); v("changelog", changelog); v("owner", owner); v("type", type);
            v("next_offset", next_offset); v("records", records); v("log_start", log_start);
            v("exactly_once", exactly_once); v("state", state)) };
struct Completed { RS_EVENT(Completed, "completed"); Name reader;
  TopicPartition changelog; TaskIncarnation owner; int64_t position = 0; int64_t end_offset = 0;
  int64_t log_start = -1;
  RS_FIELDS(v("reader", reader); v("changelog", changelog); v("owner", owner);
            v("position", position); v("end_offset", end_offset); v("log_start", log_start)) };
struct ListenerCalled { RS_EVENT(ListenerCalled, "listener"); Name reader;
  TopicPartition changelog; ListenerCall call{};
  RS_FIELDS(v("reader", reader); v("changelog", changelog); v("call", call)) };
struct ReaderDestroyed { RS_EVENT(ReaderDestroyed, "reader_destroyed"); Name reader;
  RS_FIELDS(v("reader", reader)) };
struct ReaderModeChanged { RS_EVENT(ReaderModeChanged, "reader_mode"); Name reader;
  ReaderMode mode{}; RS_FIELDS(v("reader", reader); v("mode", mode)) };
struct StoresRegistered { RS_EVENT(StoresRegistered, "stores_registered"); StateInfo state;
  RS_FIELDS(v("state", state)) };
struct StoresReleased { RS_EVENT(StoresReleased, "stores_released"); StateInfo state;
  RS_FIELDS(v("state", state)) };
struct StoresClosing { RS_EVENT(StoresClosing, "stores_closing"); StateInfo state;
  bool clean = false; RS_FIELDS(v("state", state); v("clean", clean)) };
struct Advanced { RS_EVENT(Advanced, "advance"); StateInfo state; TopicPartition changelog;
  int64_t next_offset = 0;
  RS_FIELDS(v("state", state); v("changelog", changelog); v("next_offset", next_offset)) };
struct Flushed { RS_EVENT(Flushed, "flushed"); StateInfo state; RS_FIELDS(v("state", state)) };
struct CheckpointWritten { RS_EVENT(CheckpointWritten, "checkpoint_written"); StateInfo state;
  CheckpointOffsets offsets; RS_FIELDS(v("state", state); v("offsets", offsets)) };
struct CheckpointResult { RS_EVENT(CheckpointResult, "checkpoint_result"); StateInfo state;
  bool written = false; RS_FIELDS(v("state", state); v("written", written)) };
// CheckpointNeeded's answer for a registered state manager, with the offsets it judged.
struct CheckpointDecided { RS_EVENT(CheckpointDecided, "checkpoint_decision"); StateInfo state;
  CheckpointOffsets pending; bool enforced = false; int64_t delta_min = 0;
  bool standby_without_checkpoint = false; bool needed = false;
  RS_FIELDS(v("state", state); v("pending", pending); v("enforced", enforced);
            v("delta_min", delta_min);
            v("standby_without_checkpoint", standby_without_checkpoint); v("needed", needed)) };
struct Wiped { RS_EVENT(Wiped, "wiped"); StateInfo state; RS_FIELDS(v("state", state)) };
// The task directory's checkpoint file is gone (deleted, or there was none): under exactly-once
// at load and before the task processes.
struct CheckpointDeleted { RS_EVENT(CheckpointDeleted, "checkpoint_deleted"); StateInfo state;
  RS_FIELDS(v("state", state)) };
struct StoreWipedOnOpen { RS_EVENT(StoreWipedOnOpen, "store_wiped_on_open"); StateInfo state;
  TopicPartition changelog; RS_FIELDS(v("state", state); v("changelog", changelog)) };
struct CheckpointClaimDropped { RS_EVENT(CheckpointClaimDropped, "checkpoint_claim_dropped");
  StateInfo state; TopicPartition changelog; int64_t claimed = 0;
  RS_FIELDS(v("state", state); v("changelog", changelog); v("claimed", claimed)) };

// ---- reported by the world, not the runtime ----
// A record appended to a changelog (a topic whose name ends in "-changelog"): the changelogs'
// history, which the store checks fold. A stream without these has `history` unknown.
struct Appended { RS_EVENT(Appended, "appended"); TopicPartition tp; int64_t offset = 0;
  std::string key; std::optional<std::string> value;
  RS_FIELDS(v("tp", tp); v("offset", offset); v("key", key); v("value", value)) };
// An abort marker took back the records [first, end) of a changelog (exactly once): read_committed
// never returns them, so they are no part of the changelog's committed history.
struct Aborted { RS_EVENT(Aborted, "aborted"); TopicPartition tp; int64_t first = 0;
  int64_t end = 0; RS_FIELDS(v("tp", tp); v("first", first); v("end", end)) };
// The file system crashed: unsynced changes are gone.
struct FsCrashed { RS_EVENT(FsCrashed, "fs_crashed"); RS_FIELDS((void)v) };
// The run ended with the runtime shut down: the end-of-run checks apply from here.
struct RunFinished { RS_EVENT(RunFinished, "run_finished"); RS_FIELDS((void)v) };
// A client's close (Runtime::Close): begun (after any checkpoint/restore cycle or thread
// replacement it waits for) with its timeout, or returned with its status code and the
// client's state then; on the calling thread.
struct ClientClosed { RS_EVENT(ClientClosed, "client_close"); Name instance;
  bool returned = false; int64_t timeout_ns = 0; int64_t code = 0; RuntimeState state{};
  RS_FIELDS(v("instance", instance); v("returned", returned); v("timeout_ns", timeout_ns);
            v("code", code); v("state", state)) };
// Runtime::Close called, before any wait for a checkpoint/restore cycle or a replacement; on
// the calling thread.
struct ClientCloseCalled { RS_EVENT(ClientCloseCalled, "client_close_call"); Name instance;
  int64_t timeout_ns = 0; RS_FIELDS(v("instance", instance); v("timeout_ns", timeout_ns)) };
// A client begins starting the replacement `thread` of a failed stream thread, or it started
// (`done`); under the client's lock.
struct ThreadReplacing { RS_EVENT(ThreadReplacing, "thread_replacement"); Name instance;
  Name thread; bool done = false;
  RS_FIELDS(v("instance", instance); v("thread", thread); v("done", done)) };
// After a step, the restore thread's published standby progress: records written to standby
// stores so far, as its stream thread reads them.
struct StandbyProgressPublished { RS_EVENT(StandbyProgressPublished, "standby_progress");
  Name restore_thread; int64_t records = 0;
  RS_FIELDS(v("restore_thread", restore_thread); v("records", records)) };
// The task offset sums a stream thread reports in its subscription for the Streams assignor
// (Kafka's TaskManager.getTaskOffsetSums): -2 (LATEST) for a running active.
struct OffsetSumsReported { RS_EVENT(OffsetSumsReported, "offset_sums"); Name stream_thread;
  std::map<TaskId, int64_t> sums;
  RS_FIELDS(v("stream_thread", stream_thread); v("sums", sums)) };

#undef RS_EVENT
#undef RS_FIELDS

using EventBody = std::variant<
    TaskOpened, TaskTransitioned, TaskDestroyed, Processed, HandedOff, CloseApplied,
    TypeConverted, RestoreEventMoved, CorruptionHandled, RoundQueued, RestoreLoopBegan,
    RestoreIdled, RoundsDrained, RestoreShutdownRequested, RestoreStopped, AssignmentChanged,
    DecisionTaken, TaskFailed, TaskManagerViewed, StreamLoopBegan, StreamThreadStateChanged,
    ProcessingStopped, ProcessBegan, TopologyPaused, TaskPaused, RuntimeStateChanged,
    ClientOwned, TransportCalled, ClientConnected, CheckpointNoticed, EndOffsetRefreshed,
    Registered, Unregistered, BatchRestored, Completed, ListenerCalled, ReaderDestroyed,
    ReaderModeChanged, StoresRegistered, StoresReleased, StoresClosing, Advanced, Flushed,
    CheckpointWritten, CheckpointResult, Wiped, CheckpointDeleted, StoreWipedOnOpen,
    CheckpointClaimDropped, Appended, Aborted, FsCrashed, RunFinished, ClientClosed,
    ClientCloseCalled, ThreadReplacing, StandbyProgressPublished, CheckpointDecided,
    OffsetSumsReported>;

struct Event {
  EventHeader header;
  EventBody body;
};

std::string_view EventKindName(const EventBody& body);

// Receives events, one at a time. Whoever calls OnEvent from several threads serialises the
// calls (the EventRecorder does).
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const Event& event) = 0;
};

}  // namespace restoresim::events

#endif  // RESTORESIM_CORE_EVENTS_EVENT_H_
