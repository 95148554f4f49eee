// demo.abba_deadlock: one thread takes lock A then B, the other B then A. If each gets its first
// lock before the other's second, both wait forever; the simulator reports a deadlock naming
// what each thread waits on and holds.
#include "core/sync/mutex.h"
#include "core/sync/thread.h"
#include "sim/demos/demos.h"

namespace restoresim::sim {
namespace {

void RunAbba(bool fixed) {
  Mutex a("lock_a");
  Mutex b("lock_b");
  int transfers = 0;
  Thread t1("transfer-ab", [&]() {
    MutexLock first(a);
    MutexLock second(b);
    ++transfers;
  });
  Thread t2("transfer-ba", [&]() {
    Mutex& x = fixed ? a : b;  // BUG when !fixed: the opposite lock order
    Mutex& y = fixed ? b : a;
    MutexLock first(x);
    MutexLock second(y);
    ++transfers;
  });
  t1.Join();
  t2.Join();
}

}  // namespace

absl::Status RegisterAbbaDeadlock(ProgramRegistry& registry) {
  if (absl::Status s = registry.Add(Program{
          .name = "demo.abba_deadlock",
          .description = "two threads take two locks in opposite orders: deadlock",
          .bug_expected = true,
          .steps_hint = 20,
          .body = [](RunEnv&) { RunAbba(/*fixed=*/false); }});
      !s.ok()) {
    return s;
  }
  return registry.Add(Program{
      .name = "demo.abba_deadlock_fixed",
      .description = "the same two threads with one global lock order: never deadlocks",
      .steps_hint = 20,
      .body = [](RunEnv&) { RunAbba(/*fixed=*/true); }});
}

}  // namespace restoresim::sim
