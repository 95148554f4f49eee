#include "core/util/run_context.h"

#include "core/util/check.h"

namespace restoresim {

using run_context_internal::current;

RunContext InheritedByNewOsThread(const RunContext& context) {
  // Thread starts an OS thread only outside a simulation: inside one it spawns a fiber.
  RS_CHECK(context.sim == nullptr, "an OS thread started inside a simulation");
  return RunContext{.sim = nullptr, .observer = context.observer, .mutations = context.mutations};
}

ScopedRunContext::ScopedRunContext(const RunContext& context) : previous_(current) {
  RS_CHECK(context.sim == nullptr || previous_.sim == nullptr || previous_.sim == context.sim,
           "simulations do not nest");
  current = context;
}

ScopedRunContext::~ScopedRunContext() { current = previous_; }

ScopedCurrentSim::ScopedCurrentSim(SimHooks* sim) : previous_(current.sim) {
  RS_CHECK(sim == nullptr || previous_ == nullptr, "simulations do not nest");
  current.sim = sim;
}

ScopedCurrentSim::~ScopedCurrentSim() { current.sim = previous_; }

ScopedObserver::ScopedObserver(RuntimeObserver* observer) : previous_(current.observer) {
  current.observer = observer;
}

ScopedObserver::~ScopedObserver() { current.observer = previous_; }

ScopedMutations::ScopedMutations(MutationSet mutations) : previous_(current.mutations) {
  current.mutations = mutations;
}

ScopedMutations::~ScopedMutations() { current.mutations = previous_; }

}  // namespace restoresim
