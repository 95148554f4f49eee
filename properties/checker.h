// Checker: one invariant of the oracle (oracle.h), in a file of its own under checks/. A checker
// judges events (core/events/event.h), one hook per kind of event with the event's fields as
// arguments: it reads the Ledger (the state before the event; the Oracle updates it after every
// checker saw the event), and the event's header through its context (which thread, when), and
// fails the run with Violation, naming its invariant. It sees data only, never the simulator
// or the runtime's objects, so it judges a simulated run, a real-thread run and an event file
// alike.
//
// Registration where the checker is defined: RESTORESIM_CHECKER(rank, Type) at namespace scope in
// its file adds it to the oracle before main. The checks are a library of their own, linked whole
// (properties/meson.build), so a file nothing references still registers: a new invariant is a
// new file under checks/ and its line in properties/meson.build, and nothing else recompiles.
//
// Thread-safety: not thread-safe; called by one thread at a time (the oracle's caller).
#ifndef RESTORESIM_PROPERTIES_CHECKER_H_
#define RESTORESIM_PROPERTIES_CHECKER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/events/event.h"
#include "properties/ledger.h"
#include "properties/oracle_host.h"

namespace restoresim::properties {

// Budgets of work a scenario accepts as wasted (no_wasted_work); 0 by default.
struct WasteBudget {
  int64_t wanted_closes_max = 0;       // tasks closed while assigned as they were
  int64_t rerestored_records_max = 0;  // records restored below a checkpoint already written
};

struct OracleCounts {
  int64_t events = 0;                // runtime events judged
  int64_t store_checks = 0;          // store comparisons against the changelog's history
  int64_t store_checks_skipped = 0;  // stores that could not be read (or were not recorded)
  int64_t wanted_closes = 0;
  int64_t rerestored_records = 0;
};

// What every checker may use.
class OracleContext {
 public:
  OracleContext(OracleHost& host, Ledger& ledger) : host_(host), ledger_(ledger) {}

  const Ledger& ledger() const { return ledger_; }
  OracleCounts& counts() { return counts_; }
  WasteBudget& budget() { return budget_; }
  // The header of the event being judged: the thread that emitted it, when.
  void SetCurrent(const events::EventHeader* header) { current_ = header; }
  std::string CurrentThreadName() const { return std::string(CurrentThreadView()); }
  std::string_view CurrentThreadView() const {
    return current_ == nullptr ? std::string_view() : std::string_view(current_->thread);
  }
  // The same interned: compared with another Name by identity, not by contents.
  events::Name CurrentThread() const {
    return current_ == nullptr ? events::Name() : current_->thread;
  }
  TimeNs now_ns() const { return current_ == nullptr ? 0 : current_->clock_ns; }
  // Whether a thread of this name has been started in the run (the host knows).
  bool ThreadExists(std::string_view name) { return host_.ThreadExists(name); }
  [[noreturn]] void Violation(std::string_view invariant, std::string_view who,
                              std::string detail);

 private:
  OracleHost& host_;
  Ledger& ledger_;
  const events::EventHeader* current_ = nullptr;
  OracleCounts counts_;
  WasteBudget budget_;
};

class Checker {
 public:
  Checker(OracleContext& context, std::string_view invariant)
      : context_(context), invariant_(invariant) {}
  virtual ~Checker() = default;
  std::string_view invariant() const { return invariant_; }
  // End-of-run checks, after the runtime shut down.
  virtual void Final() {}
  // Every runtime event, before its own hook (context().now_ns() is its clock): for a bound in
  // virtual time, judged at the first event past it.
  virtual void BeforeEvent() {}

  // ---- the hooks: one per kind of runtime event (core/runtime/runtime_observer.h says what
  // each means); the defaults ignore it ----
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
  // ---- tasks (on the thread that holds the task) ----
  virtual void OnTaskOpened(const events::TaskInfo& task) {}
  virtual void OnTaskTransition(const events::TaskInfo& task, TaskState from, TaskState to) {}
  virtual void OnTaskDestroyed(const TaskIncarnation& who, TaskState state) {}
  virtual void OnProcess(const events::TaskInfo& task, size_t records) {}

  // ---- the restore thread's boundary ----
  // (Thread names come interned, events::Name, where a hook runs at every loop or call: a
  // checker keys its per-thread state by the name's identity, never ordering by it.)
  virtual void OnHandOff(std::string_view restore_thread, const TaskIncarnation& who,
                         TaskHolder from, TaskHolder to) {}
  // A CLOSE item was applied: every changelog of `who` is unregistered now.
  virtual void OnCloseApplied(std::string_view restore_thread, const TaskIncarnation& who) {}
  // A prepared type conversion completes, on whichever thread completes it (by design the
  // restore thread, before the task's changelogs register again).
  virtual void OnTypeConversion(const events::StateInfo& state, TaskType from, TaskType to) {}
  // An event left the restore thread (drained = false) or reached the stream thread (true).
  virtual void OnRestoreEvent(events::Name restore_thread,
                              const events::RestoreEventInfo& event, bool drained) {}
  // The stream thread handled a corruption report about `reported`, acting on `acted_on`
  // (none: the report was stale and nothing was applied).
  virtual void OnCorruptionHandled(const TaskIncarnation& reported,
                                   const std::optional<TaskIncarnation>& acted_on) {}
  // A round of `items` items is in the restore thread's queue (observed after the push).
  virtual void OnRoundQueued(events::Name restore_thread, size_t items) {}
  // The restore thread's loop begins an iteration.
  virtual void OnRestoreLoop(events::Name restore_thread) {}
  // It waits for work (begin), or the wait ended (`woken`: by a round or by shutdown).
  virtual void OnRestoreIdle(events::Name restore_thread, bool begin, bool woken) {}
  // It drained `rounds` rounds from its queue in this iteration (0 included).
  virtual void OnRoundsDrained(events::Name restore_thread, size_t rounds) {}
  // Its shutdown was requested (after its stop flag was set), and it stopped (its loop ended).
  virtual void OnRestoreShutdownRequested(events::Name restore_thread) {}
  virtual void OnRestoreStopped(events::Name restore_thread) {}

  // ---- the stream thread (on the stream thread) ----
  // The assignment its task manager now works to (after each rebalance callback);
  // `revocation`: the partial view of a revocation callback, the rebalance's assignment to come.
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
  virtual void OnStreamLoop(events::Name stream_thread, events::Name restore_thread) {}
  virtual void OnStreamThreadState(std::string_view stream_thread, StreamThreadState from,
                                   StreamThreadState to) {}
  // Its processing gate closed (its client is shutting down or failed: nothing may begin
  // processing from now on), on the thread that closed it; and it begins processing its
  // running tasks (observed with no scheduling point after it found the gate open).
  virtual void OnProcessingStopped(events::Name stream_thread) {}
  virtual void OnProcessBegin(events::Name stream_thread) {}

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
  virtual void OnClientClose(std::string_view instance, bool returned, TimeNs timeout_ns,
                             int64_t code, RuntimeState state) {}
  virtual void OnClientCloseCalled(std::string_view instance, TimeNs timeout_ns) {}
  virtual void OnThreadReplacement(std::string_view instance, std::string_view thread,
                                   bool done) {}
  virtual void OnStandbyProgressPublished(std::string_view restore_thread, int64_t records) {}
  virtual void OnOffsetSumsReported(std::string_view stream_thread,
                                    const std::map<TaskId, int64_t>& sums) {}
  virtual void OnRuntimeState(std::string_view instance, RuntimeState from, RuntimeState to,
                              const std::vector<std::string>& threads) {}

  // ---- transport clients ----
  // `client_id` is used by `thread` only (reported before that thread uses it).
  virtual void OnClientOwner(std::string_view client_id, std::string_view thread) {}
  // A call of a transport client, on the calling thread (the transport reports it). The
  // names come interned: a quarter of a run's events are these, looked up by identity.
  virtual void OnTransportCall(events::Name client_id, events::Name call) {}
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
  // The same batch with the owner's state manager after it (`state`, its stores when read),
  // the changelog's log start then (-1: unknown) and the owner's processing guarantee. After
  // OnRestoredBatch; not called when the recorder had no open state manager of the owner.
  virtual void OnRestoredBatchState(std::string_view reader, const TopicPartition& changelog,
                                    const TaskIncarnation& owner, int64_t next_offset,
                                    int64_t log_start, bool exactly_once,
                                    const events::StateInfo& state) {}
  virtual void OnCompleted(std::string_view reader, const TopicPartition& changelog,
                           const TaskIncarnation& owner, int64_t position,
                           int64_t end_offset) {}
  virtual void OnListener(std::string_view reader, const TopicPartition& changelog,
                          ListenerCall call) {}
  // The reader is gone (its restore thread stopped): nothing is registered in it any more.
  virtual void OnReaderDestroyed(std::string_view reader) {}
  // Its mode changed (standbys paused while an active restores, or updated).
  virtual void OnReaderMode(std::string_view reader, ReaderMode mode) {}

  // ---- state managers (on the thread that holds the task) ----
  virtual void OnStoresRegistered(const events::StateInfo& state) {}
  // The stores are closed (Close, Clear) or the state manager is destroyed.
  virtual void OnStoresReleased(const events::StateInfo& state) {}
  // Close is about to close the stores: after a clean close's flush and checkpoint (`clean`),
  // or without them. The stores are still readable.
  virtual void OnStoresClosing(const events::StateInfo& state, bool clean) {}
  virtual void OnAdvance(const events::StateInfo& state, const TopicPartition& changelog,
                         int64_t next_offset) {}
  virtual void OnFlushed(const events::StateInfo& state) {}
  // A checkpoint of `offsets` is about to be written (the claim), and whether it was.
  virtual void OnCheckpointWritten(const events::StateInfo& state,
                                   const CheckpointOffsets& offsets) {}
  virtual void OnCheckpointResult(const events::StateInfo& state, bool written) {}
  virtual void OnCheckpointDecision(const events::CheckpointDecided& decision) {}
  virtual void OnWiped(const events::StateInfo& state) {}
  virtual void OnCheckpointDeleted(const events::StateInfo& state) {}
  // Under exactly-once, a store found with data but no checkpoint was wiped as it opened.
  virtual void OnStoreWipedOnOpen(const events::StateInfo& state,
                                  const TopicPartition& changelog) {}
  // The checkpoint named `claimed` for a store that has lost its data (its directory missing
  // or empty): the claim was withdrawn on disk and the store restores from the beginning.
  virtual void OnCheckpointClaimDropped(const events::StateInfo& state,
                                        const TopicPartition& changelog, int64_t claimed) {}
#pragma GCC diagnostic pop

 protected:
  const Ledger& ledger() const { return context_.ledger(); }
  OracleContext& context() { return context_; }
  [[noreturn]] void Violation(std::string_view who, std::string detail) {
    context_.Violation(invariant_, who, std::move(detail));
  }
  // The store of `state` that holds `changelog`, to compare with the changelog's history, and
  // counted as a store check; null when there is none to compare: not recorded or unreadable
  // (counted as skipped; an unreadable store fails its task), or no store holds it.
  const events::StoreSnapshot* StoreToCheck(const events::StateInfo& state,
                                            const TopicPartition& changelog);

 private:
  OracleContext& context_;
  const std::string_view invariant_;
};

// Every registered checker, in the order they see each event: by rank, then by invariant name.
// The order decides which invariant a failure names when one event breaks two (the zoo's
// expected invariants, docs/ZOO.md, depend on it), so it is explicit in each registration and
// never the link's or static initialisation's order.
std::vector<std::unique_ptr<Checker>> AllCheckers(OracleContext& context);

using CheckerFactory = std::unique_ptr<Checker> (*)(OracleContext& context);

struct CheckerRegistration {
  CheckerRegistration(int rank, CheckerFactory make);
};

#define RESTORESIM_CHECKER_CONCAT_(a, b) a##b
#define RESTORESIM_CHECKER_NAME_(line) RESTORESIM_CHECKER_CONCAT_(checker_registration_, line)
// In the checker's file, inside its anonymous namespace: RESTORESIM_CHECKER(140, ErrorsChecker);
// `rank` places it among the others (lower sees each event first; today's run 10, 20, ... 210,
// so a new one fits between two). Type has a constructor from OracleContext&.
#define RESTORESIM_CHECKER(rank, Type)                                                       \
  [[maybe_unused]] const ::restoresim::properties::CheckerRegistration                      \
      RESTORESIM_CHECKER_NAME_(__COUNTER__)(                                                 \
          rank,                                                                             \
          [](::restoresim::properties::OracleContext& context)                              \
              -> std::unique_ptr<::restoresim::properties::Checker> {                       \
            return std::make_unique<Type>(context);                                         \
          })

}  // namespace restoresim::properties

#endif  // RESTORESIM_PROPERTIES_CHECKER_H_
