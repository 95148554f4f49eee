// RuntimeObserver: the runtime's observation port. The runtime reports every event an
// invariant is about — task lifecycle, hand-offs between the stream thread and its restore
// thread, changelog registration and restore progress, restore listener calls, store flushes
// and checkpoints — to the observer installed on the calling OS thread, if any. The observer
// of both worlds is the EventRecorder (core/events/event_recorder.h), which turns each call
// into a typed event (core/events/event.h) for the invariant oracle (properties/oracle.h) or a
// file; runs that install none pay one thread-local load per hook.
//
// Why ambient and not injected: the hooks sit deep in parts (Task, StateManager,
// ChangelogReader) that scenario tests also build by hand, and the simulator runs every
// simulated thread of one run on one OS thread, so the observer is a channel of the run
// context (core/util/run_context.h: CurrentObserver, ScopedObserver), beside the simulator and
// the mutations. On real threads a Thread inherits the observer of the thread that started it.
// Observers see events on whichever thread raised them; they must not block or yield (they
// run inside the runtime's critical sections).
//
// Thread-safety: the run context is per OS thread. An observer installed on a
// thread that starts OS threads is called from all of them: it must be thread-safe (the
// EventRecorder is); under the simulator it is called from the one OS thread of the run.
#ifndef RESTORESIM_CORE_RUNTIME_RUNTIME_OBSERVER_H_
#define RESTORESIM_CORE_RUNTIME_RUNTIME_OBSERVER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/restore_thread.h"
#include "core/runtime/runtime_state.h"
#include "core/runtime/state_manager.h"
#include "core/runtime/stream_thread_state.h"
#include "core/runtime/task.h"
#include "core/util/run_context.h"

namespace restoresim {

// Who holds an open task. A task moves only along these edges:
//   kStreamThread -> kToRestore (AddItems) -> kRestoreThread (CREATE applied)
//   kRestoreThread -> kFromRestore (event emitted) -> kStreamThread (DrainEvents)
//   kToRestore -> kStreamThread (refused at shutdown) | kFromRestore (returned at shutdown)
enum class TaskHolder : uint8_t {
  kStreamThread,
  kToRestore,
  kRestoreThread,
  kFromRestore,
};
std::string_view TaskHolderName(TaskHolder holder);

// kStart..kSuspended: the restore listener (actives); kStandby*: the standby update listener.
enum class ListenerCall : uint8_t {
  kStart, kBatch, kEnd, kSuspended, kStandbyStart, kStandbyBatch, kStandbySuspended
};

// The phases of one checkpoint/restore cycle of a runtime instance, in order: kCheckpointBegin,
// then kFrozen (every BeforeCheckpoint succeeded: nothing of the instance may run or reach the
// broker) or kAbandoned (a notification failed; everything was restored at once); after kFrozen,
// kRestoreBegin and kRestored.
enum class CheckpointNotice : uint8_t {
  kCheckpointBegin, kFrozen, kAbandoned, kRestoreBegin, kRestored
};
std::string_view CheckpointNoticeName(CheckpointNotice notice);

// What a stream thread decides about one task, against the assignment it works to now.
enum class TaskDecision : uint8_t {
  kCreate,        // a new incarnation of the wanted type
  kRecycle,       // a new incarnation over the same stores, of type `type` (may be the same)
  kResume,        // handed back by the restore thread and wanted as it is: handed over again
  kStartRunning,  // restored: RUNNING
  kSendClose,     // held by the restore thread and not wanted in that form: CLOSE sent
  kClose,         // closed because the assignment no longer wants it in that form
  kCloseLost,     // closed dirty: its partition was lost
  kCloseStale,    // a corrupted incarnation no longer wanted: closed, nothing applied
  kRevive,        // corrupted and still wanted: closed dirty, wiped, a new incarnation
  kCloseShutdown, // closed because the thread shuts down
  kCloseFailed,   // closed dirty: it failed (a restore-thread failure or task.timeout.ms)
};
std::string_view TaskDecisionName(TaskDecision decision);

// One task as a stream thread's task manager holds it.
struct TaskView {
  // kRevoked: running, its partition revoked, its fate waiting for the assignment.
  enum class Where : uint8_t {
    kRunning,
    kRevoked,
    kRestored,  // restored, waiting to read its input's committed offset
    kPendingInit,
    kReady,
    kInRestore,
    kAwaiting,
  };
  TaskIncarnation who;
  TaskType type = TaskType::kActive;  // the effective type (a prepared conversion counts)
  Where where = Where::kRunning;
};
std::string_view TaskViewWhereName(TaskView::Where where);

// (The default implementations ignore their arguments.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
class RuntimeObserver {
 public:
  virtual ~RuntimeObserver() = default;

  // ---- tasks (on the thread that holds the task) ----
  virtual void OnTaskOpened(const Task& task) {}
  virtual void OnTaskTransition(const Task& task, TaskState from, TaskState to) {}
  virtual void OnTaskDestroyed(const TaskIncarnation& who, TaskState state) {}
  virtual void OnProcess(const Task& task, size_t records) {}

  // ---- the restore thread's boundary ----
  virtual void OnHandOff(std::string_view restore_thread, const TaskIncarnation& who,
                         TaskHolder from, TaskHolder to) {}
  // A CLOSE item was applied: every changelog of `who` is unregistered now.
  virtual void OnCloseApplied(std::string_view restore_thread, const TaskIncarnation& who) {}
  // A prepared type conversion completes, on whichever thread completes it (by design the
  // restore thread, before the task's changelogs register again).
  virtual void OnTypeConversion(const StateManager& state, TaskType from, TaskType to) {}
  // An event left the restore thread (drained = false) or reached the stream thread (true).
  virtual void OnRestoreEvent(std::string_view restore_thread, const RestoreEvent& event,
                              bool drained) {}
  // The stream thread handled a corruption report about `reported`, acting on `acted_on`
  // (null: the report was stale and nothing was applied).
  virtual void OnCorruptionHandled(const TaskIncarnation& reported, const Task* acted_on) {}
  // A round of `items` items is in the restore thread's queue (observed after the push).
  virtual void OnRoundQueued(std::string_view restore_thread, size_t items) {}
  // The restore thread's loop begins an iteration.
  virtual void OnRestoreLoop(std::string_view restore_thread) {}
  // It waits for work (begin), or the wait ended (`woken`: by a round or by shutdown).
  virtual void OnRestoreIdle(std::string_view restore_thread, bool begin, bool woken) {}
  // It drained `rounds` rounds from its queue in this iteration (0 included).
  virtual void OnRoundsDrained(std::string_view restore_thread, size_t rounds) {}
  // Its shutdown was requested (after its stop flag was set), and it stopped (its loop ended).
  virtual void OnRestoreShutdownRequested(std::string_view restore_thread) {}
  virtual void OnRestoreStopped(std::string_view restore_thread) {}

  // ---- the stream thread (on the stream thread) ----
  // The assignment its task manager now works to (after each rebalance callback).
  // `revocation`: reported by a revocation callback, whose view is partial — the rebalance's
  // own assignment (Kafka's onPartitionsAssigned, or a loss) is still to come.
  virtual void OnAssignment(std::string_view stream_thread, const std::set<TaskId>& active,
                            const std::set<TaskId>& standby, bool revocation) {}
  // A decision about one incarnation (see TaskDecision), taken against that assignment.
  virtual void OnDecision(std::string_view stream_thread, const TaskIncarnation& who,
                          TaskDecision decision, TaskType type) {}
  // A task failed on the stream thread itself (its committed offset could not be read before
  // it ran: task.timeout.ms ran out, or a fatal error), reported before it is closed failed.
  virtual void OnTaskFailed(std::string_view stream_thread, const TaskIncarnation& who,
                            const absl::Status& error) {}
  // Every task its task manager holds, after it handled an assignment, a hand-over or the
  // restore thread's events.
  virtual void OnTaskManagerView(std::string_view stream_thread,
                                 const std::vector<TaskView>& tasks) {}
  // An iteration of its loop begins; `restore_thread` is its restore thread's name.
  virtual void OnStreamLoop(std::string_view stream_thread, std::string_view restore_thread) {}
  virtual void OnStreamThreadState(std::string_view stream_thread, StreamThreadState from,
                                   StreamThreadState to) {}
  // Its processing gate closed (its client is shutting down or failed: nothing may begin
  // processing from now on), on the thread that closed it; and it begins processing its
  // running tasks (observed with no scheduling point after it found the gate open).
  virtual void OnProcessingStopped(std::string_view stream_thread) {}
  virtual void OnProcessBegin(std::string_view stream_thread) {}

  // ---- pause and resume (KIP-834; topology_pause.h) ----
  // A client paused (or resumed) `topology`; `threads` read the flag (each takes it up at its
  // next loop iteration). Reported on the calling thread right after the flag changed.
  virtual void OnTopologyPause(std::string_view topology, bool paused,
                               const std::vector<std::string>& threads) {}
  // `thread` paused (or resumed) the task it holds: a restore thread took `who` out of its
  // reader (its stores kept) or put it back; a stream thread stopped (or restarted) processing
  // the running active `who`. A pause by a restore thread also ends when the task leaves it.
  virtual void OnTaskPaused(std::string_view thread, const TaskIncarnation& who, bool paused) {}

  // ---- the runtime (the client; on the thread that changed its state) ----
  // `threads`: the names of every stream thread it made so far.
  virtual void OnRuntimeState(std::string_view instance, RuntimeState from, RuntimeState to,
                              const std::vector<std::string>& threads) {}
  // Runtime::Close on the calling thread: begun (returned false) with its timeout, once any
  // checkpoint/restore cycle or replacement it waits for is over; or returned, with its status
  // code (0: OK) and the client's state.
  virtual void OnClientClose(std::string_view instance, bool returned, TimeNs timeout_ns,
                             int64_t code, RuntimeState state) {}
  // Runtime::Close called, on the calling thread, before any wait for a checkpoint/restore
  // cycle or a replacement.
  virtual void OnClientCloseCalled(std::string_view instance, TimeNs timeout_ns) {}
  // The client begins starting `thread` to replace a failed stream thread, or it started
  // (`done`); under the client's lock, so that a close waiting for it sees both ends.
  virtual void OnThreadReplacement(std::string_view instance, std::string_view thread,
                                   bool done) {}

  // ---- transport clients ----
  // `client_id` is used by `thread` only (reported before that thread uses it).
  virtual void OnClientOwner(std::string_view client_id, std::string_view thread) {}
  // A call of a transport client, on the calling thread (the transport reports it).
  virtual void OnTransportCall(std::string_view client_id, std::string_view call) {}
  // A suspendable transport (suspendable_transport.h) of `instance` opened (or closed) the
  // connection of the client the runtime knows as `base_id`, on the wire `wire_id`.
  virtual void OnClientConnection(std::string_view instance, std::string_view base_id,
                                  std::string_view wire_id, bool open) {}
  // A checkpoint/restore notification of a runtime instance (runtime.h: Checkpoint, Restore).
  virtual void OnCheckpointNotice(std::string_view instance, CheckpointNotice notice) {}
  // The changelog reader re-read an active changelog's end offset after a restore.
  virtual void OnEndOffsetRefreshed(std::string_view reader, const TopicPartition& changelog,
                                    int64_t end_offset) {}

  // ---- the changelog reader (on its restore thread) ----
  virtual void OnRegistered(std::string_view reader, const TopicPartition& changelog,
                            const TaskIncarnation& owner, TaskType type) {}
  virtual void OnUnregistered(std::string_view reader, const TopicPartition& changelog,
                              const TaskIncarnation& owner) {}
  // Records up to (not including) next_offset were written to the owner's store.
  virtual void OnRestoredBatch(std::string_view reader, const TopicPartition& changelog,
                               const TaskIncarnation& owner, TaskType type,
                               int64_t next_offset, int64_t records) {}
  virtual void OnCompleted(std::string_view reader, const TopicPartition& changelog,
                           const TaskIncarnation& owner, int64_t position,
                           int64_t end_offset) {}
  virtual void OnListener(std::string_view reader, const TopicPartition& changelog,
                          ListenerCall call) {}
  // The reader is gone (its restore thread stopped): nothing is registered in it any more.
  virtual void OnReaderDestroyed(std::string_view reader) {}
  // Its mode changed (standbys paused while an active restores, or updated).
  virtual void OnReaderMode(std::string_view reader, ReaderMode mode) {}
  // After a step, what its restore thread published as records written to standby stores so
  // far (UpdaterSnapshots: what the stream thread reads as standby progress).
  virtual void OnStandbyProgressPublished(std::string_view restore_thread, int64_t records) {}
  // The task offset sums a stream thread reports in its subscription (offset_sums.h).
  virtual void OnOffsetSumsReported(std::string_view stream_thread,
                                    const std::map<TaskId, int64_t>& sums) {}

  // ---- state managers (on the thread that holds the task) ----
  virtual void OnStoresRegistered(const StateManager& state) {}
  // The stores are closed (Close, Clear) or the state manager is destroyed.
  virtual void OnStoresReleased(const StateManager& state) {}
  // Close is about to close the stores: after a clean close's flush and checkpoint (`clean`),
  // or without them. The stores are still readable.
  virtual void OnStoresClosing(const StateManager& state, bool clean) {}
  virtual void OnAdvance(const StateManager& state, const TopicPartition& changelog,
                         int64_t next_offset) {}
  virtual void OnFlushed(const StateManager& state) {}
  // A checkpoint of `offsets` is about to be written (the claim), and whether it was.
  virtual void OnCheckpointWritten(const StateManager& state, const CheckpointOffsets& offsets) {}
  virtual void OnCheckpointResult(const StateManager& state, bool written) {}
  // A checkpoint decision (CheckpointNeeded) and its answer: `enforced` (a close, recycle or end
  // of restoration), the threshold, the exactly-once standby without one on disk.
  virtual void OnCheckpointDecision(const StateManager& state, bool enforced, int64_t delta_min,
                                    bool standby_without_checkpoint, bool needed) {}
  virtual void OnWiped(const StateManager& state) {}
  // The task directory's checkpoint file is gone (deleted, or there was none): under
  // exactly-once at load and before the task processes.
  virtual void OnCheckpointDeleted(const StateManager& state) {}
  // Under exactly-once, a store found with data but no checkpoint was wiped as it opened.
  virtual void OnStoreWipedOnOpen(const StateManager& state, const TopicPartition& changelog) {}
  // The checkpoint named `claimed` for a store that has lost its data (its directory missing
  // or empty): the claim was withdrawn on disk and the store restores from the beginning.
  virtual void OnCheckpointClaimDropped(const StateManager& state, const TopicPartition& changelog,
                                        int64_t claimed) {}
};

#pragma GCC diagnostic pop

// Calls observer->method(args...) when an observer is installed. The arguments are evaluated
// only then: they must be plain reads, never scheduling points (a run must be the same with and
// without an observer; `restoresim bench` checks it).
#define RS_OBSERVE(method, ...)                                              \
  do {                                                                       \
    if (::restoresim::RuntimeObserver* rs_observer_ =                        \
            ::restoresim::CurrentObserver()) {                               \
      rs_observer_->method(__VA_ARGS__);                                     \
    }                                                                        \
  } while (false)

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_RUNTIME_OBSERVER_H_
