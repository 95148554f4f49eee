// The invariant oracle: a RuntimeObserver that checks the runtime's invariants at every event
// of a simulated run and fails the run at the first violation, naming the invariant, the step
// and what it is about (a structured core/util/failure.h Failure; as text):
//
//   [invariant:registration] step 8123, 0_2#14: changelog app-counts-changelog-2 registered
//   twice in a-StreamThread-1-restore (already by 0_2#11)
//
// It is a fan-out: every event goes to each checker (one invariant per file in checks/, listed
// in checks/checkers.cc), then into the Ledger (ledger.h), the oracle's own account of the run
// that the checkers read. docs/DESIGN.md ("The invariant oracle") states every invariant; in
// brief:
//   single_owner        one holder per live task at every step, moving only along hand-offs
//   registration        a changelog registered iff its task is in the restore thread, once,
//                       by the live incarnation; type conversions only while unregistered
//   assignment          what a stream thread holds equals its assignment after every
//                       callback, hand-over and drain; every decision agrees with the current
//                       assignment
//   checkpoint          never above what the stores hold (checked against the changelog's
//                       history at every write and at every open), never naming corruption
//   checkpoint_progress a task leaving the restore thread cleanly was checkpointed first
//   thread_confinement  clients, readers and RUNNING transitions on their own thread only
//   reader_mode         standbys update only while no active restores; mode changes real
//   liveness_bounds     rounds drained within a loop, no lost wake-ups, shutdown answered,
//                       events handled within two stream loops
//   running_gate        nothing processes before restored; a thread RUNNING only when every
//                       assigned active runs
//   listener_pairing    each start followed by exactly one end (completed) or suspended
//                       (unregistered first)
//   no_wasted_work      no close of a task wanted as it is, no records restored again below
//                       a checkpoint, past the scenario's budget (0 by default)
//   store_contents      a restored store equals the fold of its changelog's history
//   errors              every event delivered, applied only to its incarnation
//   restore_progress    restoration moves forward, completes at its end offset
//   stopped_processing  no processing begins once the client is PENDING_SHUTDOWN, PENDING_ERROR,
//                       ERROR or NOT_RUNNING; client transitions are Kafka's
//   failed_tasks        a failed task is owned by exactly one place: back to its stream thread
//                       once, never restored, run or listed again, closed
// The scenarios check liveness and the final state themselves (scenarios/scenario_checks.h).
//
// Cost: every hook is a few map operations per checker; the store checks read a store and
// fold the changelog's history. Observing adds no scheduling point (the history comes from the
// broker's append observer, the log start from FakeBroker's peek), so a run's schedule and
// trace hash are the same with the oracle on or off.
//
// Thread-safety: not thread-safe; installed on the OS thread that runs one simulation, whose
// simulated threads it observes.
#ifndef RESTORESIM_PROPERTIES_ORACLE_H_
#define RESTORESIM_PROPERTIES_ORACLE_H_

#include <functional>
#include <memory>
#include <vector>

#include "core/runtime/runtime_observer.h"
#include "properties/checker.h"
#include "properties/ledger.h"
#include "sim/simulation.h"

namespace restoresim::properties {

// A changelog partition's log start offset now.
using LogStartPeek = std::function<int64_t(const TopicPartition&)>;

class Oracle final : public RuntimeObserver {
 public:
  Oracle(sim::Simulation& sim, LogStartPeek log_start);
  ~Oracle() override;

  // Every record the broker appends (the world wires FakeBroker::SetAppendObserver here).
  void OnAppend(const TopicPartition& tp, const ConsumerRecord& record);
  // The file system crashed: unsynced changes are gone (the world wires MemFileSystem's
  // crash observer here).
  void NoteCrash();
  void SetWasteBudget(const WasteBudget& budget) { context_.budget() = budget; }
  // End-of-run checks, after the runtime shut down: nothing open, every event drained, every
  // listener start closed, ...
  void CheckFinal();
  const OracleCounts& counts() { return context_.counts(); }
  const Ledger& ledger() const { return ledger_; }

  // Process-wide switch (for benchmarks measuring the oracle's cost): when off, scenarios do
  // not install the oracle. On by default.
  static void SetEnabled(bool enabled);
  static bool Enabled();

  // ---- RuntimeObserver: each event to every checker, then to the ledger ----
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
                    const std::set<TaskId>& standby) override;
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
  void OnWiped(const StateManager& state) override;
  void OnStoreWipedOnOpen(const StateManager& state, const TopicPartition& changelog) override;
  void OnCheckpointClaimDropped(const StateManager& state, const TopicPartition& changelog,
                                int64_t claimed) override;

 private:
  bool Off() const { return context_.sim().Aborting(); }

  Ledger ledger_;
  OracleContext context_;
  std::vector<std::unique_ptr<Checker>> checkers_;
};

}  // namespace restoresim::properties

#endif  // RESTORESIM_PROPERTIES_ORACLE_H_
