// Execution contexts for simulated threads: Boost.Context's fcontext (about 6 ns a switch on
// this machine, against ~1.2 us for ucontext and several us for an OS-thread hand-off), with
// stacks from a per-OS-thread pool and the sanitizer fiber hooks that Boost 1.74 does not call
// itself (ASan's start/finish_switch_fiber, TSan's fiber API).
//
// Switches are symmetric: a fiber hands control straight to the next one, no scheduler context
// in between.
//
// Thread-safety: contexts belong to one OS thread.
#ifndef RESTORESIM_SIM_FIBER_H_
#define RESTORESIM_SIM_FIBER_H_

#include <cstddef>

namespace restoresim::sim {

// A stack: mmap'ed, with an inaccessible guard page below it.
struct FiberStack {
  void* base = nullptr;  // lowest usable address
  size_t size = 0;       // usable bytes

  // From this OS thread's pool (or a fresh mapping).
  static FiberStack Acquire(size_t size);
  // Back to the pool (or unmapped when the pool is full).
  static void Release(FiberStack stack);
};

// Entry point of a fiber: receives the `arg` given to InitFiber on its first switch-in. It must
// never return: a finished fiber leaves with ExitFiber.
using FiberEntry = void (*)(void* arg);

// One execution context: a fiber, or the OS thread's own stack (then stack_* stay unknown until
// the first switch away from it tells the sanitizers).
struct FiberContext {
  void* fctx = nullptr;  // boost::context::detail::fcontext_t
  const void* stack_bottom = nullptr;
  size_t stack_size = 0;
  void* asan_fake_stack = nullptr;
  void* tsan_fiber = nullptr;
  bool owns_tsan_fiber = false;
  FiberEntry start_entry = nullptr;  // what the first switch-in runs
  void* start_arg = nullptr;
  // The C++ runtime's per-OS-thread exception state (caught-exception stack, uncaught count),
  // saved while this context is suspended: each fiber has its own, as folly's fibers do, so a
  // fiber switched out inside a catch block or during unwinding cannot corrupt another's.
  void* eh_caught = nullptr;
  unsigned int eh_uncaught = 0;
};

// Prepares `ctx` to run `entry(arg)` on `stack` at its first SwitchFiber.
void InitFiber(FiberContext& ctx, FiberStack stack, FiberEntry entry, void* arg);
// Prepares a context for the OS thread's own stack (the caller of the simulation).
void InitMainContext(FiberContext& ctx);
// Releases sanitizer state of a fiber that finished (not of the main context).
void DestroyFiber(FiberContext& ctx);

// Suspends `from` (the running context) and resumes `to`; returns when someone switches back.
void SwitchFiber(FiberContext& from, FiberContext& to);
// Leaves a finished fiber for good; its stack is never touched again by this switch.
[[noreturn]] void ExitFiber(FiberContext& from, FiberContext& to);

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_FIBER_H_
