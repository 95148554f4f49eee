// Simulation: the deterministic scheduler. Runs a program's simulated threads as fibers on the
// calling OS thread, one at a time; at every scheduling point (each primitive operation of
// core/sync, explicit yields, transport calls) its Strategy picks the next runnable thread.
// Virtual time stands still while any thread can run and jumps to the earliest deadline when
// all are blocked; all blocked with no deadline is a deadlock, reported with what every thread
// waits on. A run past its step budget fails instead of hanging. Every decision and event goes
// into the Trace, whose hash fingerprints the run.
//
// A failed run (check failure, deadlock, budget, uncaught exception) unwinds every simulated
// thread by throwing SimAbort through it, so destructors run and nothing leaks.
//
// Thread-safety: a Simulation belongs to the OS thread that calls Run(); several simulations
// may run at once on different OS threads.
#ifndef RESTORESIM_SIM_SIMULATION_H_
#define RESTORESIM_SIM_SIMULATION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/util/failure.h"
#include "core/util/sim_hooks.h"
#include "sim/fiber.h"
#include "sim/strategy.h"
#include "sim/trace.h"

namespace restoresim::sim {

struct SimOptions {
  uint64_t steps_max = 1'000'000;            // scheduling decisions before the run fails
  uint32_t spurious_wakeup_per_mille = 10;   // chance that a condition wait wakes spuriously
  size_t fiber_stack_bytes = 256 * 1024;
  TraceMode trace_mode = TraceMode::kHashOnly;
  bool record_choices = false;               // keep every strategy answer (for replay/shrink)
};

struct RunOutcome {
  enum class Kind : uint8_t { kOk = 0, kFailed, kDeadlock, kStepBudget };
  Kind kind = Kind::kOk;
  Failure failure;      // why it failed, as data (kind kNone when kOk)
  std::string message;  // failure.Render(): the text form, empty when kOk
  bool ok() const { return kind == Kind::kOk; }
};
std::string_view OutcomeKindName(RunOutcome::Kind kind);
std::optional<RunOutcome::Kind> ParseOutcomeKind(std::string_view name);

class Simulation final : public SimHooks {
 public:
  Simulation(const SimOptions& options, std::unique_ptr<Strategy> strategy);
  ~Simulation() override;
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Runs `main` as simulated thread 0 ("main") until every thread has finished or the run
  // fails. Call once.
  RunOutcome Run(std::function<void()> main);

  // ---- results ----
  const Trace& trace() const { return trace_; }
  uint64_t steps() const { return steps_; }
  TimeNs now_ns() const { return now_ns_; }
  size_t thread_count() const { return threads_.size(); }
  const std::string& thread_name(SimThreadId t) const { return threads_[t]->name; }
  // Every strategy answer, in order (when options.record_choices).
  const std::vector<uint64_t>& choices() const { return choices_; }
  // What each of choices() was (same length; when options.record_choices).
  const std::vector<ChoiceInfo>& choice_infos() const { return choice_infos_; }
  // Registered objects: kind and name (may be null), index id-1.
  struct ObjectInfo {
    SimObjectKind kind;
    const char* name;
  };
  const std::vector<ObjectInfo>& objects() const { return objects_; }
  Strategy& strategy() { return *strategy_; }

  // Coverage marks ("cover" category) this run made, by name, with how many times each.
  const std::map<std::string, uint64_t>& coverage() const { return coverage_; }
  static constexpr std::string_view kCoverCategory = "cover";

  // Every thread with its state and, if blocked, what it waits on (as in deadlock reports):
  // for debugging a run that does not make progress.
  std::string ThreadsReport() const;

  // A program-level choice in [0, n) through the strategy (recorded like scheduling choices).
  uint64_t Choose(uint64_t n, ChoiceKind kind = ChoiceKind::kData);

  // ---- SimHooks ----
  uint32_t Register(SimObjectState& state, SimObjectKind kind, const char* name) override;
  SimThreadId CurrentThread() const override { return current_; }
  std::string_view ThreadName(SimThreadId thread) const override;
  void Point(SimOp op, uint32_t object) override;
  void ReadPoint(SimOp op, uint32_t object) override;
  SimWake Block(SimWaitList* list, SimOp op, uint32_t object, TimeNs deadline_ns) override;
  int WakeOne(SimWaitList& list, uint32_t object) override;
  int WakeAll(SimWaitList& list, uint32_t object) override;
  void NoteLockHeld(uint32_t object, bool held) override;
  bool SpuriousWakeup(uint32_t object) override;
  SimThreadId Spawn(std::string name, std::function<void()> body) override;
  void Join(SimThreadId thread) override;
  TimeNs NowNs() const override { return now_ns_; }
  void Mark(std::string_view category, std::string_view name, int64_t arg) override;
  using SimHooks::Fail;
  [[noreturn]] void Fail(Failure failure) override;
  bool Aborting() const override { return aborting_; }

  // For the process's terminate handler: ends the current simulated thread without unwinding
  // it (the run fails, or, while tearing down, notes the abandoned stack). Returns only when
  // called outside a simulated thread.
  // `noted`: the caller has recorded why (a teardown note), so nothing more is said.
  void AbandonCurrentThread(bool noted = false);
  void EnterNoAbort() override;
  void ExitNoAbort() override;

 private:
  enum class ThreadState : uint8_t { kRunnable, kBlocked, kFinished };
  struct SimThread {
    std::string name;
    std::function<void()> body;
    FiberContext context;
    FiberStack stack;
    ThreadState state = ThreadState::kRunnable;
    bool started = false;
    // While blocked:
    SimWaitList* waiting_on = nullptr;
    SimOp wait_op = SimOp::kYield;
    uint32_t wait_object = 0;
    TimeNs deadline_ns = kNoDeadline;
    SimWake wake = SimWake::kNotified;
    SimWaitList joiners;
    absl::InlinedVector<uint32_t, 4> locks_held;
    int no_abort_depth = 0;  // inside SimNoAbortScope: points never throw SimAbort
  };

  SimThread& sim_thread(SimThreadId id) { return *threads_[id]; }
  const SimThread& sim_thread(SimThreadId id) const { return *threads_[id]; }
  static void FiberMain(void* arg);
  // Inline: every scheduling point records two or three events.
  void Record(TraceKind kind, SimThreadId thread, SimOp op, uint32_t object, int64_t arg) {
    trace_.Record(TraceEvent{now_ns_, steps_, arg, object, thread, kind, op});
  }
  // Point and ReadPoint (`read_only`: what the strategy's pending operation says).
  void PointAs(SimOp op, uint32_t object, bool read_only);
  // Picks and switches to the next thread (possibly the current one). Advances virtual time
  // or stops the run when nothing can run.
  void Schedule(SimOp op);
  // Returns the next thread to run, or kNoSimThread when the run must stop.
  SimThreadId Decide();
  bool AdvanceTime();
  void MakeRunnable(SimThreadId t, SimWake wake);
  void RemoveRunnable(SimThreadId t);
  void SwitchTo(SimThreadId next);
  // The context to switch to for `next` (the OS stack for kNoSimThread); starts its fiber.
  FiberContext& TargetContext(SimThreadId next);
  [[noreturn]] void ExitCurrent();
  void Stop(RunOutcome::Kind kind, Failure failure);
  std::string DeadlockReport() const;
  // What the blocked threads wait on, for a deadlock's identity: "mutex 'lock_a'" (sorted).
  std::vector<std::string> DeadlockWaits() const;
  std::string DescribeWait(const SimThread& t) const;
  void UnwindAll();
  // After resuming in a simulated thread: leave if the run is being torn down.
  void CheckAbort(SimOp op);
  bool MayThrowAbort(SimOp op) const;

  const SimOptions options_;
  std::unique_ptr<Strategy> strategy_;
  const uint64_t epoch_;
  Trace trace_;
  // Owned one by one: a context must not move while its fiber is suspended.
  std::vector<std::unique_ptr<SimThread>> threads_;
  std::vector<SimThreadId> runnable_;  // sorted ascending
  // By thread id: the operation of the scheduling point each thread is suspended at (a new
  // thread's is its start); kept only when the strategy uses it (track_pending_).
  std::vector<PendingOp> pending_;
  const bool track_pending_;
  std::vector<ObjectInfo> objects_;
  std::vector<uint64_t> choices_;
  std::vector<ChoiceInfo> choice_infos_;
  FiberContext main_context_;
  SimThreadId current_ = kNoSimThread;  // kNoSimThread: the OS thread's own stack
  uint64_t steps_ = 0;
  TimeNs now_ns_ = 0;
  bool stopped_ = false;   // the run ended (failure or completion): return to Run()
  bool aborting_ = false;  // unwinding the remaining threads
  bool ran_ = false;
  uint64_t teardown_ops_ = 0;  // primitive calls while unwinding; bounded by kTeardownOpsMax
  std::map<std::string, uint64_t> coverage_;
  std::vector<std::string> teardown_notes_;  // appended to the outcome's message
  RunOutcome outcome_;
};

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_SIMULATION_H_
