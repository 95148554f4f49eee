#include "properties/oracle.h"

#include <fmt/format.h>

#include <atomic>

namespace restoresim::properties {
namespace {

std::atomic<bool> oracle_enabled{true};

}  // namespace

void Oracle::SetEnabled(bool enabled) { oracle_enabled.store(enabled); }
bool Oracle::Enabled() { return oracle_enabled.load(); }

// ---- the context every checker uses ----

OracleContext::OracleContext(sim::Simulation& sim, Ledger& ledger) : sim_(sim), ledger_(ledger) {}

std::string OracleContext::CurrentThreadName() const {
  return sim_.thread_name(sim_.CurrentThread());
}

std::string_view OracleContext::CurrentThreadView() const {
  return sim_.thread_name(sim_.CurrentThread());
}

bool OracleContext::ThreadExists(std::string_view name) {
  if (thread_names_.size() != sim_.thread_count()) {
    thread_names_.clear();
    for (SimThreadId t = 0; t < sim_.thread_count(); ++t) {
      thread_names_.push_back(sim_.thread_name(t));
    }
  }
  return std::find(thread_names_.begin(), thread_names_.end(), name) != thread_names_.end();
}

void OracleContext::Violation(std::string_view invariant, std::string_view who,
                              std::string detail) {
  sim_.Fail(InvariantFailure(invariant, who, std::move(detail)));
}

// ---- the oracle ----

Oracle::Oracle(sim::Simulation& sim, LogStartPeek log_start)
    : ledger_([&sim]() { return sim.thread_name(sim.CurrentThread()); }, std::move(log_start)),
      context_(sim, ledger_),
      checkers_(AllCheckers(context_)) {}

Oracle::~Oracle() = default;

void Oracle::OnAppend(const TopicPartition& tp, const ConsumerRecord& record) {
  ledger_.OnAppend(tp, record);
}

void Oracle::NoteCrash() { ledger_.OnCrash(); }

void Oracle::CheckFinal() {
  if (Off()) return;
  for (auto& c : checkers_) c->Final();
}

// Every hook: each checker judges the event against the ledger as it was, then the ledger
// records it.
void Oracle::OnTaskOpened(const Task& task) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnTaskOpened(task);
  ledger_.OnTaskOpened(task);
}

void Oracle::OnTaskTransition(const Task& task, TaskState from, TaskState to) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnTaskTransition(task, from, to);
  ledger_.OnTaskTransition(task, from, to);
}

void Oracle::OnTaskDestroyed(const TaskIncarnation& who, TaskState state) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnTaskDestroyed(who, state);
  ledger_.OnTaskDestroyed(who, state);
}

void Oracle::OnProcess(const Task& task, size_t records) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnProcess(task, records);
  ledger_.OnProcess(task, records);
}

void Oracle::OnHandOff(std::string_view restore_thread, const TaskIncarnation& who, TaskHolder from, TaskHolder to) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnHandOff(restore_thread, who, from, to);
  ledger_.OnHandOff(restore_thread, who, from, to);
}

void Oracle::OnCloseApplied(std::string_view restore_thread, const TaskIncarnation& who) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnCloseApplied(restore_thread, who);
  ledger_.OnCloseApplied(restore_thread, who);
}

void Oracle::OnTypeConversion(const StateManager& state, TaskType from, TaskType to) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnTypeConversion(state, from, to);
  ledger_.OnTypeConversion(state, from, to);
}

void Oracle::OnRestoreEvent(std::string_view restore_thread, const RestoreEvent& event, bool drained) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnRestoreEvent(restore_thread, event, drained);
  ledger_.OnRestoreEvent(restore_thread, event, drained);
}

void Oracle::OnCorruptionHandled(const TaskIncarnation& reported, const Task* acted_on) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnCorruptionHandled(reported, acted_on);
  ledger_.OnCorruptionHandled(reported, acted_on);
}

void Oracle::OnRoundQueued(std::string_view restore_thread, size_t items) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnRoundQueued(restore_thread, items);
  ledger_.OnRoundQueued(restore_thread, items);
}

void Oracle::OnRestoreLoop(std::string_view restore_thread) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnRestoreLoop(restore_thread);
  ledger_.OnRestoreLoop(restore_thread);
}

void Oracle::OnRestoreIdle(std::string_view restore_thread, bool begin, bool woken) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnRestoreIdle(restore_thread, begin, woken);
  ledger_.OnRestoreIdle(restore_thread, begin, woken);
}

void Oracle::OnRoundsDrained(std::string_view restore_thread, size_t rounds) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnRoundsDrained(restore_thread, rounds);
  ledger_.OnRoundsDrained(restore_thread, rounds);
}

void Oracle::OnRestoreShutdownRequested(std::string_view restore_thread) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnRestoreShutdownRequested(restore_thread);
  ledger_.OnRestoreShutdownRequested(restore_thread);
}

void Oracle::OnRestoreStopped(std::string_view restore_thread) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnRestoreStopped(restore_thread);
  ledger_.OnRestoreStopped(restore_thread);
}

void Oracle::OnAssignment(std::string_view stream_thread, const std::set<TaskId>& active, const std::set<TaskId>& standby) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnAssignment(stream_thread, active, standby);
  ledger_.OnAssignment(stream_thread, active, standby);
}

void Oracle::OnTaskFailed(std::string_view stream_thread, const TaskIncarnation& who,
                          const absl::Status& error) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnTaskFailed(stream_thread, who, error);
}

void Oracle::OnDecision(std::string_view stream_thread, const TaskIncarnation& who, TaskDecision decision, TaskType type) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnDecision(stream_thread, who, decision, type);
  ledger_.OnDecision(stream_thread, who, decision, type);
}

void Oracle::OnTaskManagerView(std::string_view stream_thread, const std::vector<TaskView>& tasks) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnTaskManagerView(stream_thread, tasks);
  ledger_.OnTaskManagerView(stream_thread, tasks);
}

void Oracle::OnStreamLoop(std::string_view stream_thread, std::string_view restore_thread) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnStreamLoop(stream_thread, restore_thread);
  ledger_.OnStreamLoop(stream_thread, restore_thread);
}

void Oracle::OnStreamThreadState(std::string_view stream_thread, StreamThreadState from, StreamThreadState to) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnStreamThreadState(stream_thread, from, to);
  ledger_.OnStreamThreadState(stream_thread, from, to);
}

// (Seen only by the checkers: the ledger keeps no client state.)
void Oracle::OnProcessingStopped(std::string_view stream_thread) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnProcessingStopped(stream_thread);
}

void Oracle::OnProcessBegin(std::string_view stream_thread) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnProcessBegin(stream_thread);
}

void Oracle::OnTopologyPause(std::string_view topology, bool paused,
                             const std::vector<std::string>& threads) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnTopologyPause(topology, paused, threads);
}

void Oracle::OnTaskPaused(std::string_view thread, const TaskIncarnation& who, bool paused) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnTaskPaused(thread, who, paused);
}

void Oracle::OnRuntimeState(std::string_view instance, RuntimeState from, RuntimeState to,
                            const std::vector<std::string>& threads) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnRuntimeState(instance, from, to, threads);
}

void Oracle::OnClientOwner(std::string_view client_id, std::string_view thread) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnClientOwner(client_id, thread);
  ledger_.OnClientOwner(client_id, thread);
}

void Oracle::OnTransportCall(std::string_view client_id, std::string_view call) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnTransportCall(client_id, call);
  ledger_.OnTransportCall(client_id, call);
}

void Oracle::OnClientConnection(std::string_view instance, std::string_view base_id,
                                std::string_view wire_id, bool open) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnClientConnection(instance, base_id, wire_id, open);
  ledger_.OnClientConnection(instance, base_id, wire_id, open);
}

void Oracle::OnCheckpointNotice(std::string_view instance, CheckpointNotice notice) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnCheckpointNotice(instance, notice);
  ledger_.OnCheckpointNotice(instance, notice);
}

void Oracle::OnEndOffsetRefreshed(std::string_view reader, const TopicPartition& changelog,
                                  int64_t end_offset) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnEndOffsetRefreshed(reader, changelog, end_offset);
}

void Oracle::OnRegistered(std::string_view reader, const TopicPartition& changelog, const TaskIncarnation& owner, TaskType type) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnRegistered(reader, changelog, owner, type);
  ledger_.OnRegistered(reader, changelog, owner, type);
}

void Oracle::OnUnregistered(std::string_view reader, const TopicPartition& changelog, const TaskIncarnation& owner) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnUnregistered(reader, changelog, owner);
  ledger_.OnUnregistered(reader, changelog, owner);
}

void Oracle::OnRestoredBatch(std::string_view reader, const TopicPartition& changelog, const TaskIncarnation& owner, TaskType type, int64_t next_offset, int64_t records) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnRestoredBatch(reader, changelog, owner, type, next_offset, records);
  ledger_.OnRestoredBatch(reader, changelog, owner, type, next_offset, records);
}

void Oracle::OnCompleted(std::string_view reader, const TopicPartition& changelog, const TaskIncarnation& owner, int64_t position, int64_t end_offset) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnCompleted(reader, changelog, owner, position, end_offset);
  ledger_.OnCompleted(reader, changelog, owner, position, end_offset);
}

void Oracle::OnListener(std::string_view reader, const TopicPartition& changelog, ListenerCall call) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnListener(reader, changelog, call);
  ledger_.OnListener(reader, changelog, call);
}

void Oracle::OnReaderDestroyed(std::string_view reader) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnReaderDestroyed(reader);
  ledger_.OnReaderDestroyed(reader);
}

void Oracle::OnReaderMode(std::string_view reader, ReaderMode mode) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnReaderMode(reader, mode);
  ledger_.OnReaderMode(reader, mode);
}

void Oracle::OnStoresRegistered(const StateManager& state) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnStoresRegistered(state);
  ledger_.OnStoresRegistered(state);
}

void Oracle::OnStoresReleased(const StateManager& state) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnStoresReleased(state);
  ledger_.OnStoresReleased(state);
}

void Oracle::OnStoresClosing(const StateManager& state, bool clean) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnStoresClosing(state, clean);
  ledger_.OnStoresClosing(state, clean);
}

void Oracle::OnAdvance(const StateManager& state, const TopicPartition& changelog, int64_t next_offset) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnAdvance(state, changelog, next_offset);
  ledger_.OnAdvance(state, changelog, next_offset);
}

void Oracle::OnFlushed(const StateManager& state) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnFlushed(state);
  ledger_.OnFlushed(state);
}

void Oracle::OnCheckpointWritten(const StateManager& state, const CheckpointOffsets& offsets) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnCheckpointWritten(state, offsets);
  ledger_.OnCheckpointWritten(state, offsets);
}

void Oracle::OnCheckpointResult(const StateManager& state, bool written) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnCheckpointResult(state, written);
  ledger_.OnCheckpointResult(state, written);
}

void Oracle::OnWiped(const StateManager& state) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnWiped(state);
  ledger_.OnWiped(state);
}

void Oracle::OnCheckpointClaimDropped(const StateManager& state, const TopicPartition& changelog,
                                      int64_t claimed) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnCheckpointClaimDropped(state, changelog, claimed);
}

void Oracle::OnStoreWipedOnOpen(const StateManager& state, const TopicPartition& changelog) {
  if (Off()) return;
  ++context_.counts().events;
  for (auto& c : checkers_) c->OnStoreWipedOnOpen(state, changelog);
  ledger_.OnStoreWipedOnOpen(state, changelog);
}

}  // namespace restoresim::properties
