#include "sim/simulation.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "core/util/check.h"

namespace restoresim::sim {
namespace {

constexpr size_t kSimThreadsMax = 1024;
constexpr uint64_t kTeardownOpsMax = 1'000'000;

std::atomic<uint64_t> next_epoch{1};

// The simulation whose Run() is on this OS thread's stack, for the terminate handler.
thread_local Simulation* running_simulation = nullptr;
std::terminate_handler previous_terminate_handler = nullptr;
std::once_flag terminate_handler_once;

// std::terminate inside a simulated thread (an exception left a noexcept function, typically a
// destructor) ends that run, not the process: the thread's stack is abandoned and the sweep
// goes on. Anywhere else the previous handler runs.
[[noreturn]] void SimTerminateHandler() {
  if (Simulation* sim = running_simulation; sim != nullptr) sim->AbandonCurrentThread();
  if (previous_terminate_handler != nullptr) previous_terminate_handler();
  std::abort();
}


}  // namespace

Simulation::Simulation(const SimOptions& options, std::unique_ptr<Strategy> strategy)
    : options_(options),
      strategy_(std::move(strategy)),
      epoch_(next_epoch.fetch_add(1, std::memory_order_relaxed)),
      trace_(options.trace_mode),
      track_pending_(strategy_ != nullptr && strategy_->UsesPendingOps()) {
  RS_CHECK(strategy_ != nullptr);
  InitMainContext(main_context_);
  registration_epoch_ = epoch_;  // Register stamps epoch_: Id answers registered objects
}

Simulation::~Simulation() {
  for (auto& owned : threads_) {
    SimThread& t = *owned;
    if (t.stack.base != nullptr) {
      DestroyFiber(t.context);
      FiberStack::Release(t.stack);
    }
  }
}

RunOutcome Simulation::Run(std::function<void()> main) {
  RS_CHECK(!ran_, "a Simulation runs once");
  RS_CHECK(CurrentSim() == nullptr, "simulations do not nest");
  ran_ = true;
  std::call_once(terminate_handler_once, []() {
    previous_terminate_handler = std::set_terminate(&SimTerminateHandler);
  });
  ScopedCurrentSim scope(this);
  Simulation* const outer = running_simulation;
  running_simulation = this;
  Spawn("main", std::move(main));
  Schedule(SimOp::kSpawn);  // returns on the OS stack when the run has stopped
  UnwindAll();
  running_simulation = outer;
  for (std::string& note : teardown_notes_) outcome_.failure.notes.push_back(std::move(note));
  teardown_notes_.clear();
  outcome_.message = outcome_.failure.Render();
  return outcome_;
}

void Simulation::AbandonCurrentThread(bool noted) {
  if (current_ == kNoSimThread) return;  // on the OS stack: not ours to handle
  SimThread& t = sim_thread(current_);
  if (noted) {
    // The caller said why.
  } else if (aborting_) {
    teardown_notes_.push_back(fmt::format(
        "thread '{}' could not be unwound (SimAbort reached a noexcept frame, e.g. a destructor "
        "that blocks; see SimNoAbortScope): its stack was abandoned and may leak",
        t.name));
  } else {
    Stop(RunOutcome::Kind::kFailed,
         OtherFailure(FailureKind::kException,
                      fmt::format("std::terminate in thread '{}': an exception left a noexcept "
                                  "function (a destructor?)",
                                  t.name)));
  }
  ExitCurrent();  // never returns
}

// ---- registration and bookkeeping ----

uint32_t Simulation::Register(SimObjectState& state, SimObjectKind kind, const char* name) {
  if (state.epoch == epoch_) return state.id;
  objects_.push_back(ObjectInfo{kind, name});
  state.epoch = epoch_;
  state.id = static_cast<uint32_t>(objects_.size());
  return state.id;
}

std::string_view Simulation::ThreadName(SimThreadId thread) const {
  if (thread == kNoSimThread || thread >= threads_.size()) return "<scheduler>";
  return sim_thread(thread).name;
}

void Simulation::NoteLockHeld(uint32_t object, bool held) {
  if (current_ == kNoSimThread) return;
  auto& locks = sim_thread(current_).locks_held;
  if (held) {
    locks.push_back(object);
    return;
  }
  auto it = std::find(locks.begin(), locks.end(), object);
  if (it != locks.end()) locks.erase(it);
}

void Simulation::MakeRunnable(SimThreadId t, SimWake wake) {
  SimThread& th = sim_thread(t);
  th.state = ThreadState::kRunnable;
  th.waiting_on = nullptr;
  th.deadline_ns = kNoDeadline;
  th.wake = wake;
  runnable_.insert(std::lower_bound(runnable_.begin(), runnable_.end(), t), t);
}

void Simulation::RemoveRunnable(SimThreadId t) {
  auto it = std::lower_bound(runnable_.begin(), runnable_.end(), t);
  if (it != runnable_.end() && *it == t) runnable_.erase(it);
}

// ---- scheduling ----

bool Simulation::MayThrowAbort(SimOp op) const {
  // Unlocks, notifications and joins are what destructors do (RAII locks, owners joining
  // their threads); SimAbort must not leave a destructor, so these points never throw. The
  // thread then runs on, with every primitive non-blocking, to its next throwing point.
  if (op == SimOp::kMutexUnlock || op == SimOp::kCondNotify || op == SimOp::kJoin) return false;
  return current_ != kNoSimThread && sim_thread(current_).no_abort_depth == 0 &&
         std::uncaught_exceptions() == 0;
}

void Simulation::CheckAbort(SimOp op) {
  if (!aborting_) return;
  if (++teardown_ops_ > kTeardownOpsMax && current_ != kNoSimThread) {
    // A loop in a destructor: this thread cannot be unwound; the run (already failed) says
    // so, and the sweep goes on.
    teardown_notes_.push_back(fmt::format(
        "thread '{}' kept calling primitives while being unwound (a loop in a destructor?)",
        ThreadName(current_)));
    teardown_ops_ = 0;
    AbandonCurrentThread(/*noted=*/true);
  }
  if (MayThrowAbort(op)) throw SimAbort{};
}

void Simulation::EnterNoAbort() {
  if (current_ != kNoSimThread) ++sim_thread(current_).no_abort_depth;
}

void Simulation::ExitNoAbort() {
  if (current_ != kNoSimThread) --sim_thread(current_).no_abort_depth;
}

SimThreadId Simulation::Decide() {
  if (stopped_) return kNoSimThread;
  if (runnable_.empty() && !AdvanceTime()) return kNoSimThread;
  if (++steps_ > options_.steps_max) {
    Stop(RunOutcome::Kind::kStepBudget,
         OtherFailure(FailureKind::kStepBudget,
                      fmt::format("step budget exceeded: {} scheduling decisions (steps_max) "
                                  "without the run finishing; a livelock, a busy wait, or a "
                                  "budget too small",
                                  options_.steps_max)));
    return kNoSimThread;
  }
  const std::span<const PendingOp> pending =
      track_pending_ ? std::span<const PendingOp>(pending_) : std::span<const PendingOp>();
  const SimThreadId next = strategy_->PickThread(runnable_, pending, current_, steps_);
  RS_CHECK(std::binary_search(runnable_.begin(), runnable_.end(), next),
           "strategy {} picked thread {} which is not runnable", strategy_->Spec(), next);
  if (options_.record_choices) {
    const bool current_runnable = current_ != kNoSimThread &&
                                  std::binary_search(runnable_.begin(), runnable_.end(), current_);
    choices_.push_back(next);
    choice_infos_.push_back(ChoiceInfo{.kind = ChoiceKind::kThread,
                                       .eventful = current_runnable && next != current_,
                                       .n = runnable_.size(),
                                       .quiet = QuietThreadPick(runnable_, current_)});
  }
  Record(TraceKind::kDecision, next, SimOp::kYield, 0, static_cast<int64_t>(runnable_.size()));
  return next;
}

bool Simulation::AdvanceTime() {
  TimeNs earliest = kNoDeadline;
  bool any_unfinished = false;
  for (const auto& owned : threads_) {
    const SimThread& t = *owned;
    if (t.state == ThreadState::kFinished) continue;
    any_unfinished = true;
    if (t.state == ThreadState::kBlocked) earliest = std::min(earliest, t.deadline_ns);
  }
  if (earliest == kNoDeadline) {
    if (any_unfinished) {
      Failure deadlock = OtherFailure(FailureKind::kDeadlock, DeadlockReport());
      deadlock.waits = DeadlockWaits();
      Stop(RunOutcome::Kind::kDeadlock, std::move(deadlock));
    } else {
      Stop(RunOutcome::Kind::kOk, Failure{});
    }
    return false;
  }
  RS_CHECK(earliest >= now_ns_, "virtual time would go backwards: {} -> {}", now_ns_, earliest);
  now_ns_ = earliest;
  Record(TraceKind::kTimeAdvance, current_, SimOp::kSleep, 0, now_ns_);
  for (SimThreadId id = 0; id < threads_.size(); ++id) {
    SimThread& t = sim_thread(id);
    if (t.state != ThreadState::kBlocked || t.deadline_ns > now_ns_) continue;
    if (t.waiting_on != nullptr) {
      auto& w = t.waiting_on->waiters;
      w.erase(std::find(w.begin(), w.end(), id));
    }
    Record(TraceKind::kTimeout, id, t.wait_op, t.wait_object, now_ns_);
    MakeRunnable(id, SimWake::kTimedOut);
  }
  return true;
}

void Simulation::Schedule(SimOp op) {
  const SimThreadId next = Decide();
  if (next == kNoSimThread) {
    if (current_ == kNoSimThread) return;  // already on the OS stack
    SwitchTo(kNoSimThread);                // back to Run(), which unwinds us
    CheckAbort(op);
    return;  // a non-throwing point: run on, non-blocking, to the next one
  }
  if (next != current_) SwitchTo(next);
  CheckAbort(op);
}

FiberContext& Simulation::TargetContext(SimThreadId next) {
  if (next == kNoSimThread) return main_context_;
  SimThread& t = sim_thread(next);
  if (!t.started) {
    t.started = true;
    t.stack = FiberStack::Acquire(options_.fiber_stack_bytes);
    InitFiber(t.context, t.stack, &Simulation::FiberMain, this);
  }
  return t.context;
}

void Simulation::SwitchTo(SimThreadId next) {
  const SimThreadId prev = current_;
  FiberContext& to = TargetContext(next);
  current_ = next;
  SwitchFiber(prev == kNoSimThread ? main_context_ : sim_thread(prev).context, to);
}

void Simulation::FiberMain(void* arg) {
  auto* sim = static_cast<Simulation*>(arg);
  const SimThreadId self = sim->current_;
  if (!sim->aborting_) {
    try {
      sim->sim_thread(self).body();
    } catch (const SimAbort&) {
      // The run ended early; this thread's stack is unwound.
    } catch (const std::exception& e) {
      sim->Stop(RunOutcome::Kind::kFailed,
                OtherFailure(FailureKind::kException,
                             fmt::format("thread '{}' ended with an uncaught exception: {}",
                                         sim->sim_thread(self).name, e.what())));
    } catch (...) {
      sim->Stop(RunOutcome::Kind::kFailed,
                OtherFailure(FailureKind::kException,
                             fmt::format("thread '{}' ended with an uncaught non-standard "
                                         "exception",
                                         sim->sim_thread(self).name)));
    }
  }
  sim->ExitCurrent();
}

void Simulation::ExitCurrent() {
  const SimThreadId self = current_;
  SimThread& t = sim_thread(self);
  t.state = ThreadState::kFinished;
  RemoveRunnable(self);
  Record(TraceKind::kExit, self, SimOp::kYield, 0, 0);
  if (!aborting_) WakeAll(t.joiners, self);
  const SimThreadId next = aborting_ ? kNoSimThread : Decide();
  FiberContext& to = TargetContext(next);
  current_ = next;
  ExitFiber(t.context, to);
}

void Simulation::Stop(RunOutcome::Kind kind, Failure failure) {
  if (stopped_) return;
  stopped_ = true;
  outcome_.kind = kind;
  failure.step = steps_;
  outcome_.failure = std::move(failure);
  if (kind != RunOutcome::Kind::kOk) {
    Record(TraceKind::kFailure, current_, SimOp::kYield, static_cast<uint32_t>(kind), 0);
  }
}

void Simulation::UnwindAll() {
  RS_CHECK(current_ == kNoSimThread);
  aborting_ = true;
  // Newest first: a thread's locals (queues, mutexes) are used by the threads it spawned, so
  // those must be unwound before it, as their lifetimes would nest in a real program.
  for (size_t i = threads_.size(); i-- > 0;) {
    const auto id = static_cast<SimThreadId>(i);
    SimThread& t = sim_thread(id);
    if (t.state == ThreadState::kFinished) continue;
    if (!t.started) {
      t.state = ThreadState::kFinished;
      continue;
    }
    SwitchTo(id);  // it resumes at its scheduling point, throws SimAbort and exits to us
    RS_CHECK(t.state == ThreadState::kFinished, "thread '{}' did not finish unwinding", t.name);
  }
  current_ = kNoSimThread;
  runnable_.clear();
}

// ---- SimHooks: points, blocking, waking ----

void Simulation::Point(SimOp op, uint32_t object) { PointAs(op, object, /*read_only=*/false); }

void Simulation::ReadPoint(SimOp op, uint32_t object) { PointAs(op, object, /*read_only=*/true); }

void Simulation::PointAs(SimOp op, uint32_t object, bool read_only) {
  if (aborting_) {
    CheckAbort(op);
    return;
  }
  RS_CHECK(current_ != kNoSimThread, "scheduling point outside a simulated thread");
  Record(TraceKind::kPoint, current_, op, object, 0);
  if (track_pending_) pending_[current_] = PendingOpAt(op, object, read_only);
  Schedule(op);
}

SimWake Simulation::Block(SimWaitList* list, SimOp op, uint32_t object, TimeNs deadline_ns) {
  if (aborting_) {
    CheckAbort(op);
    return SimWake::kAborting;
  }
  RS_CHECK(current_ != kNoSimThread, "blocking outside a simulated thread");
  const SimThreadId self = current_;
  if (track_pending_) pending_[self] = PendingOpAt(op, object, /*read_only=*/false);
  if (deadline_ns <= now_ns_) {  // already late: a timeout that still lets others run
    Record(TraceKind::kTimeout, self, op, object, now_ns_);
    Schedule(op);
    return aborting_ ? SimWake::kAborting : SimWake::kTimedOut;
  }
  SimThread& t = sim_thread(self);
  t.state = ThreadState::kBlocked;
  t.waiting_on = list;
  t.wait_op = op;
  t.wait_object = object;
  t.deadline_ns = deadline_ns;
  t.wake = SimWake::kNotified;
  if (list != nullptr) list->waiters.push_back(self);
  RemoveRunnable(self);
  Record(TraceKind::kBlock, self, op, object, deadline_ns == kNoDeadline ? -1 : deadline_ns);
  Schedule(op);
  return aborting_ ? SimWake::kAborting : sim_thread(self).wake;
}

int Simulation::WakeOne(SimWaitList& list, uint32_t object) {
  if (list.waiters.empty()) return 0;
  if (aborting_) {
    list.waiters.clear();
    return 0;
  }
  const size_t index = list.waiters.size() == 1
                           ? 0
                           : static_cast<size_t>(Choose(list.waiters.size(),
                                                        ChoiceKind::kNotifyTarget));
  const SimThreadId t = list.waiters[index];
  list.waiters.erase(list.waiters.begin() + static_cast<ptrdiff_t>(index));
  Record(TraceKind::kWake, current_, sim_thread(t).wait_op, object, t);
  MakeRunnable(t, SimWake::kNotified);
  return 1;
}

int Simulation::WakeAll(SimWaitList& list, uint32_t object) {
  if (aborting_) {
    list.waiters.clear();
    return 0;
  }
  const int woken = static_cast<int>(list.waiters.size());
  for (SimThreadId t : list.waiters) {
    Record(TraceKind::kWake, current_, sim_thread(t).wait_op, object, t);
    MakeRunnable(t, SimWake::kNotified);
  }
  list.waiters.clear();
  return woken;
}

uint64_t Simulation::Choose(uint64_t n, ChoiceKind kind) {
  RS_CHECK(n > 0);
  const uint64_t value = n == 1 ? 0 : strategy_->PickValue(n, kind);
  RS_CHECK(value < n, "strategy {} chose {} out of {}", strategy_->Spec(), value, n);
  if (n > 1 && options_.record_choices) {
    choices_.push_back(value);
    const bool eventful = kind == ChoiceKind::kSpurious
                              ? value < options_.spurious_wakeup_per_mille
                              : value != 0;
    choice_infos_.push_back(
        ChoiceInfo{.kind = kind, .eventful = eventful, .n = n, .quiet = QuietValue(n, kind)});
  }
  Record(TraceKind::kChoice, current_, SimOp::kYield, static_cast<uint32_t>(kind),
         static_cast<int64_t>(value));
  return value;
}

bool Simulation::SpuriousWakeup(uint32_t /*object*/) {
  if (options_.spurious_wakeup_per_mille == 0 || aborting_) return false;
  return Choose(1000, ChoiceKind::kSpurious) < options_.spurious_wakeup_per_mille;
}

// ---- threads ----

SimThreadId Simulation::Spawn(std::string name, std::function<void()> body) {
  RS_CHECK(threads_.size() < kSimThreadsMax, "more than {} simulated threads", kSimThreadsMax);
  const auto id = static_cast<SimThreadId>(threads_.size());
  SimThread& t = *threads_.emplace_back(std::make_unique<SimThread>());
  t.name = std::move(name);
  t.body = std::move(body);
  pending_.push_back(PendingOp{});  // its start: races with nothing
  if (aborting_) {  // a destructor spawning while the run unwinds: the thread never runs
    t.state = ThreadState::kFinished;
    return id;
  }
  runnable_.push_back(id);  // the largest id: stays sorted
  strategy_->OnSpawn(id);
  Record(TraceKind::kSpawn, current_, SimOp::kSpawn, 0, id);
  if (current_ != kNoSimThread) Point(SimOp::kSpawn, id);
  return id;
}

void Simulation::Join(SimThreadId thread) {
  RS_CHECK(thread < threads_.size(), "join of unknown thread {}", thread);
  if (aborting_) {
    CheckAbort(SimOp::kJoin);
    return;
  }
  if (thread == current_) Fail(fmt::format("thread '{}' joins itself", sim_thread(thread).name));
  Point(SimOp::kJoin, thread);
  while (sim_thread(thread).state != ThreadState::kFinished) {
    if (Block(&sim_thread(thread).joiners, SimOp::kJoin, thread, kNoDeadline) ==
        SimWake::kAborting) {
      return;
    }
  }
}

void Simulation::Mark(std::string_view category, std::string_view name, int64_t arg) {
  if (aborting_) return;
  Record(TraceKind::kMark, current_, SimOp::kMark, trace_.MarkId(category, name), arg);
  // Coverage marks are counted in every trace mode (FoundationDB's CODE_PROBE).
  if (category == kCoverCategory) ++coverage_[std::string(name)];
}

void Simulation::Fail(Failure failure) {
  if (aborting_) {
    // The run failed already and is being torn down: this failure is a consequence (or a bug
    // of the teardown). It fails nothing more — the run keeps its first failure and its repro
    // — and never the process: the thread is unwound, or abandoned where it cannot be.
    failure.step = steps_;
    teardown_notes_.push_back("while tearing the run down: " + failure.Render());
    if (current_ != kNoSimThread && std::uncaught_exceptions() > 0) {
      AbandonCurrentThread(/*noted=*/true);  // throwing here would terminate
    }
    throw SimAbort{};
  }
  Stop(RunOutcome::Kind::kFailed, std::move(failure));
  if (current_ == kNoSimThread) throw SimAbort{};
  SwitchTo(kNoSimThread);  // Run() takes over and resumes us only to unwind
  if (std::uncaught_exceptions() > 0) {
    // Failed inside a destructor during exception unwinding: throwing would terminate.
    teardown_notes_.push_back(fmt::format(
        "thread '{}' failed inside a destructor during exception unwinding: its stack was "
        "abandoned",
        ThreadName(current_)));
    AbandonCurrentThread(/*noted=*/true);
  }
  throw SimAbort{};  // a failed check must not return, even inside a no-abort scope
}

// ---- reports ----

std::string Simulation::DescribeWait(const SimThread& t) const {
  std::string what{SimOpName(t.wait_op)};
  if (t.wait_op == SimOp::kJoin) {
    what += fmt::format(" of thread '{}'", ThreadName(static_cast<SimThreadId>(t.wait_object)));
  } else if (t.wait_object != 0 && t.wait_object <= objects_.size()) {
    const ObjectInfo& o = objects_[t.wait_object - 1];
    what += fmt::format(" on {} '{}' (#{})", SimObjectKindName(o.kind), o.name ? o.name : "?",
                        t.wait_object);
  }
  if (t.deadline_ns != kNoDeadline) what += fmt::format(" until t={}ns", t.deadline_ns);
  if (!t.locks_held.empty()) {
    what += ", holding";
    for (uint32_t id : t.locks_held) {
      const ObjectInfo& o = objects_[id - 1];
      what += fmt::format(" {} '{}' (#{})", SimObjectKindName(o.kind), o.name ? o.name : "?", id);
    }
  }
  return what;
}

std::string Simulation::ThreadsReport() const {
  std::string report = fmt::format("virtual time {}ns, step {}", now_ns_, steps_);
  for (SimThreadId id = 0; id < threads_.size(); ++id) {
    const SimThread& t = sim_thread(id);
    const char* state = t.state == ThreadState::kRunnable  ? "runnable"
                        : t.state == ThreadState::kBlocked ? "blocked"
                                                           : "finished";
    report += fmt::format("\n  thread '{}' (#{}): {}", t.name, id, state);
    if (t.state == ThreadState::kBlocked) report += ": " + DescribeWait(t);
  }
  return report;
}

std::vector<std::string> Simulation::DeadlockWaits() const {
  std::set<std::string> waits;  // sorted and unique: independent of thread order
  for (const auto& owned : threads_) {
    const SimThread& t = *owned;
    if (t.state != ThreadState::kBlocked || t.wait_op == SimOp::kJoin) continue;
    if (t.wait_object == 0 || t.wait_object > objects_.size()) continue;
    const ObjectInfo& o = objects_[t.wait_object - 1];
    waits.insert(fmt::format("{} '{}'", SimObjectKindName(o.kind), o.name ? o.name : "?"));
  }
  return {waits.begin(), waits.end()};
}

std::string Simulation::DeadlockReport() const {
  std::string report = fmt::format(
      "deadlock: every thread is blocked and no timer is pending (virtual time {}ns, step {})",
      now_ns_, steps_);
  for (SimThreadId id = 0; id < threads_.size(); ++id) {
    const SimThread& t = sim_thread(id);
    if (t.state != ThreadState::kBlocked) continue;
    report += fmt::format("\n  thread '{}' (#{}): {}", t.name, id, DescribeWait(t));
  }
  return report;
}

}  // namespace restoresim::sim
