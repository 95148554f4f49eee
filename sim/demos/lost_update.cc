// demo.lost_update: two workers increment a shared counter with a load and a separate store.
// A switch between one worker's load and its store loses the other worker's increment.
#include <fmt/format.h>

#include "core/sync/atomic.h"
#include "core/sync/mutex.h"
#include "core/sync/thread.h"
#include "sim/demos/demos.h"

namespace restoresim::sim {
namespace {

constexpr int kWorkers = 2;
constexpr int kIncrementsPerWorker = 3;

void RunLostUpdate(RunEnv& env, bool fixed) {
  Atomic<int> counter(0, "counter");
  Mutex mu("counter_mu");
  auto work = [&]() {
    for (int i = 0; i < kIncrementsPerWorker; ++i) {
      if (fixed) {
        MutexLock lock(mu);
        counter.Store(counter.Load() + 1);
      } else {
        const int seen = counter.Load();
        counter.Store(seen + 1);  // BUG: not atomic with the load
      }
    }
  };
  Thread a("worker-a", work);
  Thread b("worker-b", work);
  a.Join();
  b.Join();
  const int total = counter.Load();
  if (total != kWorkers * kIncrementsPerWorker) {
    env.Fail(fmt::format("lost update: counter is {} after {} increments", total,
                         kWorkers * kIncrementsPerWorker));
  }
}

}  // namespace

absl::Status RegisterLostUpdate(ProgramRegistry& registry) {
  if (absl::Status s = registry.Add(Program{
          .name = "demo.lost_update",
          .description = "two workers increment a counter with load+store: updates get lost",
          .bug_expected = true,
          .steps_hint = 30,
          .body = [](RunEnv& env) { RunLostUpdate(env, /*fixed=*/false); }});
      !s.ok()) {
    return s;
  }
  return registry.Add(Program{
      .name = "demo.lost_update_fixed",
      .description = "the same counter, each increment under a mutex: never loses one",
      .steps_hint = 60,
      .body = [](RunEnv& env) { RunLostUpdate(env, /*fixed=*/true); }});
}

}  // namespace restoresim::sim
