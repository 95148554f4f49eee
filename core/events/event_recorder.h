// EventRecorder: the RuntimeObserver that turns every observer call into an Event (event.h)
// and hands it to one EventSink — the oracle, a file, or both. Install it with ScopedObserver:
// in simulation on the OS thread that runs the run, on real threads on the thread that starts
// the runtime (Threads inherit their creator's observer).
//
// Each event is stamped with the calling thread's name (CurrentThreadName(): the simulated
// thread's under the simulator), a per-thread sequence number and a clock reading (the
// simulator's virtual time, else the Clock given, else 0). Stamping, building the event and
// the sink's OnEvent happen under one lock, so the sink sees one order of all threads' events
// that is consistent with each thread's own order (the order in which each called the hooks).
// Building an event reads what it names (a task's directory, a state manager's offsets and,
// for the events whose invariants compare contents, its stores) on the calling thread, which
// holds that task then; reading adds no scheduling point.
//
// Cost: one uncontended lock and the event's copies per hook; the sink's own cost on top. On
// real threads every thread serialises on the lock while the sink runs.
//
// Thread-safety: thread-safe (one absl::Mutex, a leaf lock: the sink must not call back into
// the runtime).
#ifndef RESTORESIM_CORE_EVENTS_EVENT_RECORDER_H_
#define RESTORESIM_CORE_EVENTS_EVENT_RECORDER_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "absl/container/node_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "core/events/event.h"
#include "core/sync/clock.h"

namespace restoresim::events {

struct RecorderOptions {
  Clock* clock = nullptr;  // real threads: the run's clock (null: clock_ns 0)
  // A changelog's log start offset now (null: unknown, BatchRestored/Completed say -1).
  std::function<int64_t(const TopicPartition&)> log_start;
  // Read store contents into the events that carry them (StateInfo::stores_read).
  bool read_stores = true;
};

class EventRecorder final : public RuntimeObserver {
 public:
  EventRecorder(EventSink& sink, RecorderOptions options);

  // ---- reported by the world ----
  void OnAppend(const TopicPartition& tp, const ConsumerRecord& record);
  // An abort marker took back [first, end) of `tp` (changelogs only, like OnAppend).
  void OnAbort(const TopicPartition& tp, int64_t first, int64_t end);
  void OnCrash();
  void OnRunFinished();

  // ---- RuntimeObserver ----
  void OnTaskOpened(const Task& task) override;
  void OnTaskTransition(const Task& task, TaskState from, TaskState to) override;
  void OnTaskDestroyed(const TaskIncarnation& who, TaskState state) override;
  void OnProcess(const Task& task, size_t records) override;
  void OnHandOff(std::string_view restore_thread, const TaskIncarnation& who, TaskHolder from,
                 TaskHolder to) override;
  void OnCloseApplied(std::string_view restore_thread, const TaskIncarnation& who) override;
  void OnTypeConversion(const StateManager& state, TaskType from, TaskType to) override;
  void OnRestoreEvent(std::string_view restore_thread, const RestoreEvent& event,
                      bool drained) override;
  void OnCorruptionHandled(const TaskIncarnation& reported, const Task* acted_on) override;
  void OnRoundQueued(std::string_view restore_thread, size_t items) override;
  void OnRestoreLoop(std::string_view restore_thread) override;
  void OnRestoreIdle(std::string_view restore_thread, bool begin, bool woken) override;
  void OnRoundsDrained(std::string_view restore_thread, size_t rounds) override;
  void OnRestoreShutdownRequested(std::string_view restore_thread) override;
  void OnRestoreStopped(std::string_view restore_thread) override;
  void OnAssignment(std::string_view stream_thread, const std::set<TaskId>& active,
                    const std::set<TaskId>& standby, bool revocation) override;
  void OnDecision(std::string_view stream_thread, const TaskIncarnation& who,
                  TaskDecision decision, TaskType type) override;
  void OnTaskFailed(std::string_view stream_thread, const TaskIncarnation& who,
                    const absl::Status& error) override;
  void OnTaskManagerView(std::string_view stream_thread,
                         const std::vector<TaskView>& tasks) override;
  void OnStreamLoop(std::string_view stream_thread, std::string_view restore_thread) override;
  void OnStreamThreadState(std::string_view stream_thread, StreamThreadState from,
                           StreamThreadState to) override;
  void OnProcessingStopped(std::string_view stream_thread) override;
  void OnProcessBegin(std::string_view stream_thread) override;
  void OnTopologyPause(std::string_view topology, bool paused,
                       const std::vector<std::string>& threads) override;
  void OnTaskPaused(std::string_view thread, const TaskIncarnation& who, bool paused) override;
  void OnClientClose(std::string_view instance, bool returned, TimeNs timeout_ns, int64_t code,
                     RuntimeState state) override;
  void OnClientCloseCalled(std::string_view instance, TimeNs timeout_ns) override;
  void OnThreadReplacement(std::string_view instance, std::string_view thread,
                           bool done) override;
  void OnStandbyProgressPublished(std::string_view restore_thread, int64_t records) override;
  void OnOffsetSumsReported(std::string_view stream_thread,
                            const std::map<TaskId, int64_t>& sums) override;
  void OnRuntimeState(std::string_view instance, RuntimeState from, RuntimeState to,
                      const std::vector<std::string>& threads) override;
  void OnClientOwner(std::string_view client_id, std::string_view thread) override;
  void OnTransportCall(std::string_view client_id, std::string_view call) override;
  void OnClientConnection(std::string_view instance, std::string_view base_id,
                          std::string_view wire_id, bool open) override;
  void OnCheckpointNotice(std::string_view instance, CheckpointNotice notice) override;
  void OnEndOffsetRefreshed(std::string_view reader, const TopicPartition& changelog,
                            int64_t end_offset) override;
  void OnRegistered(std::string_view reader, const TopicPartition& changelog,
                    const TaskIncarnation& owner, TaskType type) override;
  void OnUnregistered(std::string_view reader, const TopicPartition& changelog,
                      const TaskIncarnation& owner) override;
  void OnRestoredBatch(std::string_view reader, const TopicPartition& changelog,
                       const TaskIncarnation& owner, TaskType type, int64_t next_offset,
                       int64_t records) override;
  void OnCompleted(std::string_view reader, const TopicPartition& changelog,
                   const TaskIncarnation& owner, int64_t position, int64_t end_offset) override;
  void OnListener(std::string_view reader, const TopicPartition& changelog,
                  ListenerCall call) override;
  void OnReaderDestroyed(std::string_view reader) override;
  void OnReaderMode(std::string_view reader, ReaderMode mode) override;
  void OnStoresRegistered(const StateManager& state) override;
  void OnStoresReleased(const StateManager& state) override;
  void OnStoresClosing(const StateManager& state, bool clean) override;
  void OnAdvance(const StateManager& state, const TopicPartition& changelog,
                 int64_t next_offset) override;
  void OnFlushed(const StateManager& state) override;
  void OnCheckpointWritten(const StateManager& state, const CheckpointOffsets& offsets) override;
  void OnCheckpointResult(const StateManager& state, bool written) override;
  void OnCheckpointDecision(const StateManager& state, bool enforced, int64_t delta_min,
                            bool standby_without_checkpoint, bool needed) override;
  void OnWiped(const StateManager& state) override;
  void OnCheckpointDeleted(const StateManager& state) override;
  void OnStoreWipedOnOpen(const StateManager& state, const TopicPartition& changelog) override;
  void OnCheckpointClaimDropped(const StateManager& state, const TopicPartition& changelog,
                                int64_t claimed) override;

  // What an event names, as data. `full`: with offsets and (unless told not to) stores.
  static TaskInfo Snapshot(const Task& task);
  StateInfo Snapshot(const StateManager& state, bool full) const;

 private:
  // Stamps `body`, hands it to the sink. REQUIRES: mu_ held. The body is moved once, into
  // the event's variant (built in place), and the event is passed on by reference.
  template <typename T>
  void Emit(T&& body) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Event event{.header = {},
                .body = EventBody(std::in_place_type<std::decay_t<T>>, std::forward<T>(body))};
    Stamp(event.header);
    sink_.OnEvent(event);
  }
  void Stamp(EventHeader& header) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t LogStart(const TopicPartition& tp) const;

  EventSink& sink_;
  const RecorderOptions options_;
  absl::Mutex mu_;
  // Per thread name (by the interned name's identity: looked up, never iterated).
  // node_hash_map: a counter never moves, so the last thread's can be kept by address.
  absl::node_hash_map<const void*, uint64_t> seq_ ABSL_GUARDED_BY(mu_);
  // The last emitting thread (most events come in runs from one thread): its name's view as
  // CurrentThreadName gave it, the interned name and its counter. The view's contents are
  // compared on use, so a buffer reused for another name is only a miss.
  std::string_view last_thread_view_ ABSL_GUARDED_BY(mu_);
  Name last_thread_ ABSL_GUARDED_BY(mu_);
  uint64_t* last_seq_ ABSL_GUARDED_BY(mu_) = nullptr;
  // The open tasks' state managers (lookup only): Registered reads the owner's start offset.
  std::map<TaskIncarnation, const StateManager*> open_ ABSL_GUARDED_BY(mu_);
};

}  // namespace restoresim::events

#endif  // RESTORESIM_CORE_EVENTS_EVENT_RECORDER_H_
