// demo.missed_notification: a consumer checks a flag outside the lock and then waits once,
// without re-checking under the lock. If the producer sets the flag and notifies in between,
// the notification is lost and the consumer waits forever (a deadlock: no thread can wake it,
// no timer is pending). A spurious wake-up can hide the bug in one run, never in all of them.
#include "core/sync/atomic.h"
#include "core/sync/condvar.h"
#include "core/sync/mutex.h"
#include "core/sync/thread.h"
#include "sim/demos/demos.h"

namespace restoresim::sim {
namespace {

void RunMissedNotification(bool fixed) {
  Mutex mu("ready_mu");
  CondVar cv("ready_cv");
  Atomic<bool> ready(false, "ready");
  Thread consumer("consumer", [&]() {
    if (fixed) {
      MutexLock lock(mu);
      while (!ready.Load()) cv.Wait(mu);
      return;
    }
    if (!ready.Load()) {  // BUG: checked outside the lock, and waited on only once
      MutexLock lock(mu);
      cv.Wait(mu);
    }
  });
  Thread producer("producer", [&]() {
    MutexLock lock(mu);
    ready.Store(true);
    cv.NotifyAll();
  });
  producer.Join();
  consumer.Join();
}

}  // namespace

absl::Status RegisterMissedNotification(ProgramRegistry& registry) {
  if (absl::Status s = registry.Add(Program{
          .name = "demo.missed_notification",
          .description = "a flag checked outside the lock: the wake-up is missed, a deadlock",
          .bug_expected = true,
          .steps_hint = 20,
          .body = [](RunEnv&) { RunMissedNotification(/*fixed=*/false); }});
      !s.ok()) {
    return s;
  }
  return registry.Add(Program{
      .name = "demo.missed_notification_fixed",
      .description = "the flag checked under the lock in a loop: never misses the wake-up",
      .steps_hint = 20,
      .body = [](RunEnv&) { RunMissedNotification(/*fixed=*/true); }});
}

}  // namespace restoresim::sim
