// The seam between the runtime's synchronisation primitives and a deterministic scheduler.
//
// restoresim compiles the runtime once. Its primitives (Mutex, CondVar, Thread, Atomic,
// BlockingQueue, clocks) consult CurrentSim(), the simulator channel of the run context
// (core/util/run_context.h): outside a simulation it is null and they are plain Abseil/std
// primitives on OS threads; inside one it is the simulation that owns the calling OS thread,
// and every primitive operation becomes a scheduling point it controls. core/ only sees this
// interface; sim/ implements it. It sits in core/util, the lowest layer, because RS_CHECK
// (core/util/check.cc) fails the current simulation's run and every layer above uses both.
//
// Thread-safety: CurrentSim() is per OS thread. A SimHooks is used only by the OS thread that
// runs its simulation (all simulated threads are fibers on that one OS thread), so none of
// these methods needs to be thread-safe.
#ifndef RESTORESIM_CORE_UTIL_SIM_HOOKS_H_
#define RESTORESIM_CORE_UTIL_SIM_HOOKS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "core/util/failure.h"
#include "core/util/run_context.h"

namespace restoresim {

using TimeNs = int64_t;  // nanoseconds on a clock's own monotonic time line
inline constexpr TimeNs kNoDeadline = INT64_MAX;

using SimThreadId = uint16_t;
inline constexpr SimThreadId kNoSimThread = UINT16_MAX;

// What a simulated thread does at a scheduling point; recorded in traces, shown in timelines
// and in deadlock reports. Append only: the numeric values enter trace hashes.
enum class SimOp : uint8_t {
  kYield = 0,
  kMutexLock,
  kMutexUnlock,
  kCondWait,
  kCondNotify,
  kAtomic,
  kSpawn,
  kJoin,
  kSleep,
  kQueue,
  kTransport,
  kMark,
  kCount,
};
std::string_view SimOpName(SimOp op);

enum class SimObjectKind : uint8_t {
  kMutex = 0,
  kCondVar,
  kAtomic,
  kThread,
  kQueue,
  kOther,
};
std::string_view SimObjectKindName(SimObjectKind kind);

// Per-object simulation state, embedded in each primitive. Its fields belong to the simulation
// named by `epoch`; a primitive first used under another simulation (or none) is re-registered.
struct SimObjectState {
  uint64_t epoch = 0;  // 0: never registered
  uint32_t id = 0;     // stable id within the simulation: registration order, never an address
};

// Simulated threads blocked on one object, in arrival order. Which of them a notify_one wakes
// is the strategy's choice, not the order here.
struct SimWaitList {
  absl::InlinedVector<SimThreadId, 4> waiters;
};

enum class SimWake : uint8_t { kNotified, kTimedOut, kAborting };

// Thrown through a simulated thread to unwind its stack when a run ends early (failure,
// deadlock, step budget). Deliberately not a std::exception; code must not swallow it.
struct SimAbort {};

class SimHooks {
 public:
  virtual ~SimHooks() = default;

  // Registers a primitive (first use) and returns its stable id. `name` may be null.
  virtual uint32_t Register(SimObjectState& state, SimObjectKind kind, const char* name) = 0;
  // Register's answer without a virtual call, for a primitive this simulation registered
  // already (every use but the first: each lock, unlock and atomic access asks).
  uint32_t Id(SimObjectState& state, SimObjectKind kind, const char* name) {
    if (registration_epoch_ != 0 && state.epoch == registration_epoch_) return state.id;
    return Register(state, kind, name);
  }
  virtual SimThreadId CurrentThread() const = 0;
  virtual std::string_view ThreadName(SimThreadId thread) const = 0;

  // A scheduling point: the strategy may switch to another runnable thread here.
  virtual void Point(SimOp op, uint32_t object) = 0;
  // The same scheduling point (the same trace event) before an operation that only reads
  // `object`, e.g. an atomic load: a strategy that looks at conflicting accesses (POS) knows
  // that it does not race with other reads. Anything that may write uses Point.
  virtual void ReadPoint(SimOp op, uint32_t object) { Point(op, object); }

  // Blocks the current thread on `list` (may be null: a pure timer) until woken or until the
  // virtual clock reaches `deadline_ns`. Never returns kAborting unless Aborting().
  virtual SimWake Block(SimWaitList* list, SimOp op, uint32_t object, TimeNs deadline_ns) = 0;
  // Makes one waiter (the strategy picks which) or all waiters of `list` runnable. Not a
  // scheduling point by itself. Returns how many were woken.
  virtual int WakeOne(SimWaitList& list, uint32_t object) = 0;
  virtual int WakeAll(SimWaitList& list, uint32_t object) = 0;
  // Lock bookkeeping for deadlock reports: the current thread now holds / no longer holds the
  // lock `object`.
  virtual void NoteLockHeld(uint32_t object, bool held) = 0;
  // Whether a condition-variable wait should return spuriously now (strategy's choice).
  virtual bool SpuriousWakeup(uint32_t object) = 0;

  virtual SimThreadId Spawn(std::string name, std::function<void()> body) = 0;
  virtual void Join(SimThreadId thread) = 0;

  virtual TimeNs NowNs() const = 0;

  // Records a user-level event (e.g. "task 0_1 RESTORING") in the trace; `arg` is free-form.
  virtual void Mark(std::string_view category, std::string_view name, int64_t arg) = 0;

  // Ends the run as failed (the simulation fills in failure.step), then unwinds the calling
  // thread (throws SimAbort). Called while a failed run is torn down, it adds a note to the
  // run's first failure and unwinds (or abandons) the thread: never the process.
  [[noreturn]] virtual void Fail(Failure failure) = 0;
  // A program's own failure in text (FailureKind::kOther).
  [[noreturn]] void Fail(std::string message) {
    Fail(OtherFailure(FailureKind::kOther, std::move(message)));
  }

  // True while a failed or finished run unwinds its threads: primitives stop blocking.
  virtual bool Aborting() const = 0;

  // Brackets code in which SimAbort must not be thrown (see SimNoAbortScope).
  virtual void EnterNoAbort() = 0;
  virtual void ExitNoAbort() = 0;

 protected:
  // The epoch an implementation's Register stamps into SimObjectState (0: Id always asks
  // Register). Set once, before any primitive is used.
  uint64_t registration_epoch_ = 0;
};

// Marks a scope — typically a destructor that locks, waits or joins — in which the simulator
// must not unwind the thread by throwing SimAbort (an exception leaving a destructor ends the
// process). When a failed run is torn down inside such a scope, primitives stop blocking and
// the thread runs on to the end of the scope; it is unwound at its next scheduling point.
// Unlock, notify and join points never throw, so RAII locks and joining owners need no scope.
class SimNoAbortScope {
 public:
  SimNoAbortScope();
  ~SimNoAbortScope();
  SimNoAbortScope(const SimNoAbortScope&) = delete;
  SimNoAbortScope& operator=(const SimNoAbortScope&) = delete;

 private:
  class SimHooks* sim_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_UTIL_SIM_HOOKS_H_
