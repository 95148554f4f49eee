// Scheduling strategies: at every scheduling point the simulation asks its strategy which
// runnable thread runs next, and every other choice of a run (which waiter a notify_one wakes,
// whether a condition wait wakes spuriously, program data choices) is asked of it too. A run is
// therefore a pure function of (program, strategy, seed), and the sequence of answers is enough
// to replay it (ReplayStrategy) — which is what schedule shrinking and later strategies
// (bounded exhaustive search) build on. PickThread also sees what each runnable thread is about
// to do (PendingOp), which POS uses to tell racing operations from independent ones.
//
// Thread-safety: owned by one simulation; not thread-safe.
#ifndef RESTORESIM_SIM_STRATEGY_H_
#define RESTORESIM_SIM_STRATEGY_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/util/prng.h"
#include "core/util/sim_hooks.h"

namespace restoresim::sim {

// Append only: values enter trace hashes.
enum class ChoiceKind : uint8_t {
  kThread = 0,    // which runnable thread runs next
  kNotifyTarget,  // which waiter a notify_one wakes
  kSpurious,      // whether a condition wait returns spuriously (value < per-mille => yes)
  kData,          // a program's own choice (fault injection, workload shape)
};

// What a recorded choice was, beside its answer: kept with the answers when a run records its
// choices, so a shrinker can tell a preemption from a free pick and a data choice from a thread
// pick without re-running.
struct ChoiceInfo {
  ChoiceKind kind = ChoiceKind::kThread;
  // The answer makes something happen: kThread, a preemption (the current thread could have
  // run on and another was picked); kSpurious, a spurious wake-up; kNotifyTarget and kData,
  // any answer but 0.
  bool eventful = false;
  uint64_t n = 0;  // the range: how many threads were runnable (kThread), or the value range
  // The answer that adds nothing (what QuietStrategy answers, before its run-length limit):
  // kThread, the current thread when runnable, else the next runnable thread after it; kSpurious,
  // n - 1 (no wake-up); kNotifyTarget and kData, 0.
  uint64_t quiet = 0;
};

// How a thread's pending operation touches its object, for strategies that look at conflicts
// (POS). The simulation derives it from the scheduling point (see PendingOpAt).
enum class Access : uint8_t {
  kNone,   // no shared object: a thread's start, spawn, join, yield, sleep; never races
  kRead,   // only reads its object (an atomic load, SimHooks::ReadPoint)
  kWrite,  // may change its object: every other operation on one (lock, unlock, wait, notify,
           // atomic store/exchange/CAS/add, transport call)
};

// The operation a thread performs when it next runs: the op and object of the scheduling point
// it is suspended at (for a point after its operation, e.g. mutex.unlock, the one just done).
struct PendingOp {
  SimOp op = SimOp::kSpawn;  // a thread that has not started yet
  uint32_t object = 0;       // the object id; 0 for none
  Access access = Access::kNone;
  bool operator==(const PendingOp&) const = default;
};

// The pending operation of a thread at the scheduling point (op, object): Point(op, object)
// with `read_only` false, ReadPoint with true, Block(..., op, object, ...) likewise. Spawn,
// join (whose object is a thread id, not an object id), yield and sleep never race. Inline: the
// simulation calls it at every scheduling point of a POS run.
inline PendingOp PendingOpAt(SimOp op, uint32_t object, bool read_only) {
  const bool no_object = object == 0 || op == SimOp::kYield || op == SimOp::kSpawn ||
                         op == SimOp::kJoin || op == SimOp::kSleep || op == SimOp::kMark;
  return PendingOp{.op = op,
                   .object = object,
                   .access = no_object   ? Access::kNone
                             : read_only ? Access::kRead
                                         : Access::kWrite};
}

// POS's race: two pending operations (of different threads) race when they touch the same
// object and at least one may write it. kNone never races.
bool Races(const PendingOp& a, const PendingOp& b);

// The quiet answers, shared by QuietStrategy and the recorded ChoiceInfo. REQUIRES: `runnable`
// sorted ascending and not empty; n > 0.
SimThreadId QuietThreadPick(std::span<const SimThreadId> runnable, SimThreadId current);
uint64_t QuietValue(uint64_t n, ChoiceKind kind);

class Strategy {
 public:
  virtual ~Strategy() = default;

  // The spec that rebuilds this strategy, e.g. "random" or "pct:3:2000".
  virtual std::string Spec() const = 0;

  // A new thread exists (ids are dense, in creation order).
  virtual void OnSpawn(SimThreadId thread) { (void)thread; }

  // Whether PickThread looks at `pending`. Asked once, when the Simulation is built: only then
  // does it keep every thread's pending operation (a store at every scheduling point that the
  // other strategies need not pay for), else it passes an empty span.
  virtual bool UsesPendingOps() const { return false; }

  // Picks the next thread. `runnable` is sorted ascending and never empty; `pending`, indexed
  // by thread id, holds what each thread does when it next runs (every thread's when
  // UsesPendingOps(), else empty); `current` is the thread at the scheduling point
  // (kNoSimThread at the start; it may be blocked). `step` counts scheduling decisions from 1.
  virtual SimThreadId PickThread(std::span<const SimThreadId> runnable,
                                 std::span<const PendingOp> pending, SimThreadId current,
                                 uint64_t step) = 0;

  // Picks a value in [0, n). REQUIRES: n > 0.
  virtual uint64_t PickValue(uint64_t n, ChoiceKind kind) = 0;
};

// Uniformly random among runnable threads at every point.
class RandomWalkStrategy final : public Strategy {
 public:
  explicit RandomWalkStrategy(const Prng& prng) : prng_(prng) {}
  std::string Spec() const override { return "random"; }
  SimThreadId PickThread(std::span<const SimThreadId> runnable,
                         std::span<const PendingOp> pending, SimThreadId current,
                         uint64_t step) override;
  uint64_t PickValue(uint64_t n, ChoiceKind kind) override;

 private:
  Prng prng_;
};

// PCT, probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte; ASPLOS
// 2010): threads get random distinct priorities; the highest-priority runnable thread always
// runs; at d-1 change points drawn uniformly from the first `steps_estimate` steps the running
// thread drops below every other thread (each change point below the previous ones). A bug of
// depth d among n threads is found with probability at least 1/(n * k^(d-1)) per run.
class PctStrategy final : public Strategy {
 public:
  PctStrategy(const Prng& prng, uint32_t depth, uint64_t steps_estimate);
  std::string Spec() const override;
  void OnSpawn(SimThreadId thread) override;
  SimThreadId PickThread(std::span<const SimThreadId> runnable,
                         std::span<const PendingOp> pending, SimThreadId current,
                         uint64_t step) override;
  uint64_t PickValue(uint64_t n, ChoiceKind kind) override;

 private:
  Prng prng_;
  const uint32_t depth_;
  const uint64_t steps_estimate_;
  std::vector<uint64_t> change_steps_;  // sorted; index i lowers priority to i + 1
  size_t next_change_ = 0;
  std::vector<uint64_t> priority_;  // by thread id; larger runs first
};

// POS, partial order sampling (Yuan, Yang, Gu; CAV 2018). Each runnable thread's pending
// operation has a random priority; the thread whose pending operation has the highest priority
// runs, except that a pending operation that can race with nothing (Access::kNone: a thread's
// start, spawn, join, yield, a wake-up from sleep) runs first, as Fray's POS scheduler does:
// it commutes with every other operation, so running it early adds no new ordering. When a
// thread is picked, its next operation gets a fresh priority, and so does every other runnable
// thread's pending operation that races with the picked one (same object, at least one write;
// Races()). Racing operations are thus ordered by fresh coin flips each time one of them runs,
// which samples the partial orders of racing operations far more evenly than a random walk,
// while operations on unrelated objects keep their relative order. Priorities are 64-bit draws
// from the run's strategy stream, ties to the lower thread id; data choices are uniform, as in
// the random walk.
class PosStrategy final : public Strategy {
 public:
  explicit PosStrategy(const Prng& prng) : prng_(prng) {}
  std::string Spec() const override { return "pos"; }
  void OnSpawn(SimThreadId thread) override;
  bool UsesPendingOps() const override { return true; }
  // REQUIRES: pending[t] for every t in runnable.
  SimThreadId PickThread(std::span<const SimThreadId> runnable,
                         std::span<const PendingOp> pending, SimThreadId current,
                         uint64_t step) override;
  uint64_t PickValue(uint64_t n, ChoiceKind kind) override;
  // The priority of `thread`'s pending operation (for tests); larger runs first.
  uint64_t priority(SimThreadId thread) const { return priority_.at(thread); }

 private:
  // Gives `thread` a priority if it has none yet (a thread a replay's fallback never saw).
  void EnsurePriority(SimThreadId thread);

  Prng prng_;
  std::vector<uint64_t> priority_;  // by thread id
  std::vector<bool> has_priority_;  // by thread id
};

// Answers with a recorded sequence of choices (a Decisions log), for exact replays of a
// schedule independent of any PRNG. When the log runs out it falls back to `fallback` (or, if
// none, to round-robin threads, no spurious wake-ups and value 0); a recorded thread that is
// not runnable is a divergence, reported by diverged(), answered by the fallback — or, with
// `skip_unrunnable` (the shrinker's edited schedules), skipped: the next recorded choice is
// tried, so a run of picks of a thread that blocked early is dropped rather than handed to
// other threads.
class ReplayStrategy final : public Strategy {
 public:
  ReplayStrategy(std::vector<uint64_t> choices, std::unique_ptr<Strategy> fallback,
                 bool skip_unrunnable = false);
  std::string Spec() const override { return "replay"; }
  void OnSpawn(SimThreadId thread) override;
  bool UsesPendingOps() const override { return fallback_ && fallback_->UsesPendingOps(); }
  SimThreadId PickThread(std::span<const SimThreadId> runnable,
                         std::span<const PendingOp> pending, SimThreadId current,
                         uint64_t step) override;
  uint64_t PickValue(uint64_t n, ChoiceKind kind) override;
  bool diverged() const { return diverged_; }
  size_t consumed() const { return next_; }

 private:
  std::vector<uint64_t> choices_;
  size_t next_ = 0;
  std::unique_ptr<Strategy> fallback_;
  const bool skip_unrunnable_;
  bool diverged_ = false;
};

// Non-preemptive and quiet, without randomness: keeps the current thread while it can run,
// else picks the next runnable thread after it (round-robin), and answers every other choice
// quietly (no spurious wake-up, the first waiter, 0). A thread picked kRunLengthMax times in a
// row while another could run is switched out, so that a busy wait cannot starve the thread it
// waits for. The shrinker replays candidates with it as the fallback: cutting a schedule's tail
// then removes the tail's preemptions and data events instead of drawing new ones.
class QuietStrategy final : public Strategy {
 public:
  static constexpr uint64_t kRunLengthMax = 1000;
  std::string Spec() const override { return "quiet"; }
  SimThreadId PickThread(std::span<const SimThreadId> runnable,
                         std::span<const PendingOp> pending, SimThreadId current,
                         uint64_t step) override;
  uint64_t PickValue(uint64_t n, ChoiceKind kind) override { return QuietValue(n, kind); }

 private:
  SimThreadId last_pick_ = kNoSimThread;
  uint64_t run_length_ = 0;  // consecutive picks of last_pick_
};

// A parsed --strategy value: "random", "pos", "pct:D" or "pct:D:K" (depth D >= 1, step
// estimate K).
struct StrategySpec {
  enum class Kind { kRandom, kPct, kPos } kind = Kind::kRandom;
  uint32_t pct_depth = 3;
  uint64_t pct_steps = 0;  // 0: the program's own estimate

  static absl::StatusOr<StrategySpec> Parse(std::string_view text);
  // Canonical text; Parse(ToString()) == *this.
  std::string ToString() const;
  bool operator==(const StrategySpec&) const = default;
};

// Builds a strategy for one run. `prng` is the run's strategy stream; `steps_hint` replaces a
// missing pct step estimate.
std::unique_ptr<Strategy> MakeStrategy(const StrategySpec& spec, const Prng& prng,
                                       uint64_t steps_hint);

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_STRATEGY_H_
