// The run context: the three ambient channels a run (or a test) gives every thread of the
// runtime, held in one place.
//
//   sim        the simulation owning this OS thread (core/util/sim_hooks.h), or null: the
//              real world. The sync primitives ask it at every operation.
//   observer   the runtime's observation port (core/runtime/runtime_observer.h), or null: no
//              one listens. RS_OBSERVE calls it.
//   mutations  the zoo's mutations planted in this run (core/util/mutation.h), empty for the
//              correct runtime. RS_MUTANT tests them.
//
// Why ambient and not injected: the readers sit deep in parts that scenario tests also build by
// hand, and the simulator runs every simulated thread of a run on one OS thread, so one
// thread-local reaches them all without a pointer threaded through every constructor.
//
// Installed once per run or test, inherited in one place:
//  * A run installs a whole context with ScopedRunContext (sim::RunProgram installs an empty
//    one around every run, so a run starts with no observer and no mutations and leaves none
//    behind). The narrow installers below change one channel of the current context for a
//    scope (the simulation installs itself, a world its event recorder, a bug program its
//    mutations) and restore that channel only.
//  * Simulated threads are fibers on the run's OS thread: they share its context. An OS thread
//    started by Thread (core/sync/os_thread.cc, the one thread-start path of core/) runs in
//    InheritedByNewOsThread of its starter's context: the observer and the mutations, never
//    the simulation (an OS thread is never part of one).
//
// Thread-safety: the current context is per OS thread; installers run on the thread they
// install on. An observer installed on a thread that starts OS threads is called from all of
// them and must be thread-safe (the event recorder is).
#ifndef RESTORESIM_CORE_UTIL_RUN_CONTEXT_H_
#define RESTORESIM_CORE_UTIL_RUN_CONTEXT_H_

#include "core/util/mutation.h"

namespace restoresim {

class SimHooks;         // core/util/sim_hooks.h
class RuntimeObserver;  // core/runtime/runtime_observer.h: held here, called by the runtime

struct RunContext {
  SimHooks* sim = nullptr;
  RuntimeObserver* observer = nullptr;
  MutationSet mutations;
};

// What an OS thread started by a thread running in `context` runs in: the same observer and
// mutations, no simulation.
RunContext InheritedByNewOsThread(const RunContext& context);

namespace run_context_internal {
// The context of this OS thread. Written only by the installers below.
inline thread_local constinit RunContext current{};
}  // namespace run_context_internal

inline const RunContext& CurrentRunContext() { return run_context_internal::current; }
// The simulation owning this OS thread, or null on ordinary threads.
inline SimHooks* CurrentSim() { return run_context_internal::current.sim; }
// The observer of this OS thread (null: none).
inline RuntimeObserver* CurrentObserver() { return run_context_internal::current.observer; }
inline MutationSet ActiveMutations() { return run_context_internal::current.mutations; }

// Installs `context` (every channel) on this OS thread for the scope's lifetime, then restores
// the previous context. Scopes are not nested strictly: fibers interleave on one OS thread and
// an abandoned fiber never ends its scopes, so an outer ScopedRunContext restores everything.
class ScopedRunContext {
 public:
  explicit ScopedRunContext(const RunContext& context);
  ~ScopedRunContext();
  ScopedRunContext(const ScopedRunContext&) = delete;
  ScopedRunContext& operator=(const ScopedRunContext&) = delete;

 private:
  RunContext previous_;
};

// Installs `sim` as the current simulation of this OS thread for the scope's lifetime.
// REQUIRES: no other simulation is current (simulations do not nest).
class ScopedCurrentSim {
 public:
  explicit ScopedCurrentSim(SimHooks* sim);
  ~ScopedCurrentSim();
  ScopedCurrentSim(const ScopedCurrentSim&) = delete;
  ScopedCurrentSim& operator=(const ScopedCurrentSim&) = delete;

 private:
  SimHooks* previous_;
};

// Installs `observer` on this OS thread for the scope's lifetime (restoring the previous one).
class ScopedObserver {
 public:
  explicit ScopedObserver(RuntimeObserver* observer);
  ~ScopedObserver();
  ScopedObserver(const ScopedObserver&) = delete;
  ScopedObserver& operator=(const ScopedObserver&) = delete;

 private:
  RuntimeObserver* previous_;
};

// Installs `mutations` on this OS thread for the scope's lifetime (restoring the previous set).
class ScopedMutations {
 public:
  explicit ScopedMutations(MutationSet mutations);
  ~ScopedMutations();
  ScopedMutations(const ScopedMutations&) = delete;
  ScopedMutations& operator=(const ScopedMutations&) = delete;

 private:
  MutationSet previous_;
};

}  // namespace restoresim

#ifndef RESTORESIM_MUTATIONS
#define RESTORESIM_MUTATIONS 1
#endif

// Whether mutation `name` is planted in this run. Cost on the normal path: one thread-local
// load and a predicted branch; -Dmutations=disabled compiles every site to the correct code.
#if RESTORESIM_MUTATIONS
#define RS_MUTANT(name)                                                                  \
  (__builtin_expect(::restoresim::run_context_internal::current.mutations.bits() != 0,  \
                    0) &&                                                                \
   ::restoresim::run_context_internal::current.mutations.contains(                      \
       ::restoresim::Mutation::name))
#else
#define RS_MUTANT(name) (static_cast<void>(::restoresim::Mutation::name), false)
#endif

#endif  // RESTORESIM_CORE_UTIL_RUN_CONTEXT_H_
