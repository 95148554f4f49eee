// The invariant oracle: an EventSink that checks the runtime's invariants at every event of a
// run and fails the run at the first violation, naming the invariant, the step (in simulation)
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
//   standby_progress    the standby progress a restore thread publishes after each step is
//                       what its reader restored into standby changelogs
//   stopped_processing  no processing begins once the client is PENDING_SHUTDOWN, PENDING_ERROR,
//                       ERROR or NOT_RUNNING; client transitions are Kafka's
//   failed_tasks        a failed task is owned by exactly one place: back to its stream thread
//                       once, never restored, run or listed again, closed
//   client_close        a close passes its waits once no checkpoint/restore cycle and no
//                       replacement is under way, and returns by its timeout; returning with a
//                       stream thread alive, it is not OK and the client is not NOT_RUNNING
// The scenarios check liveness and the final state themselves (scenarios/scenario_checks.h).
//
// It judges events as data (core/events/event.h) and nothing of the simulator: the same oracle
// judges a simulated run (fed synchronously by the EventRecorder the world installs), a
// real-thread run (StandaloneJudge, fed under the recorder's lock) and an event file
// (`restoresim check`). What only the world knows — ending the run at a violation, its step
// numbers, whether it is being torn down, which threads exist — comes through an OracleHost
// (oracle_host.h; the simulator's is scenarios/sim_oracle_host.h).
//
// Cost: every event is a few map operations per checker; the store checks fold the changelog's
// history against the store contents the event recorded. Recording adds no scheduling point
// (the history comes from the broker's append observer, the log start from FakeBroker's
// peek), so a run's schedule and trace hash are the same with the oracle on or off.
//
// Thread-safety: not thread-safe; one caller at a time (the recorder serialises its calls).
#ifndef RESTORESIM_PROPERTIES_ORACLE_H_
#define RESTORESIM_PROPERTIES_ORACLE_H_

#include <memory>
#include <optional>
#include <vector>

#include "core/events/event.h"
#include "properties/checker.h"
#include "properties/ledger.h"
#include "properties/oracle_host.h"

namespace restoresim::properties {

class Oracle final : public events::EventSink {
 public:
  explicit Oracle(OracleHost& host);
  ~Oracle() override;

  // Judges one event: each checker sees it, then the ledger records it. Changelog appends
  // and crashes go to the ledger only; RunFinished runs the end-of-run checks.
  void OnEvent(const events::Event& event) override;
  // Every event judged (and a RunFinished at CheckFinal) also goes to `tap`, first (null:
  // none); e.g. an event file.
  void SetTap(events::EventSink* tap) { tap_ = tap; }
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
  // Process-wide: the tap every Oracle made from now on starts with (`restoresim replay
  // --events FILE`). REQUIRES: no oracle is running on another thread.
  static void SetDefaultTap(events::EventSink* tap);

 private:
  struct Judge;  // the visitor that hands each kind of event to the checkers and the ledger

  bool Off() const { return host_.Aborting(); }
  void RunFinal();
  void JudgeBody(const events::EventBody& body);  // oracle_judge.cc

  OracleHost& host_;
  Ledger ledger_;
  OracleContext context_;
  std::vector<std::unique_ptr<Checker>> checkers_;
  // The fan-out: per hook (oracle_judge.cc numbers them), the checkers that override it, in
  // the order of checkers_; made at the hook's first event. `no_hooks_` overrides nothing.
  std::unique_ptr<Checker> no_hooks_;
  std::vector<std::optional<std::vector<Checker*>>> hooked_;
  events::EventSink* tap_ = nullptr;
  events::EventHeader last_header_;  // for the RunFinished CheckFinal taps
};

}  // namespace restoresim::properties

#endif  // RESTORESIM_PROPERTIES_ORACLE_H_
