// The scheduler's own contract: interleaving, determinism, virtual time, deadlocks, budgets,
// failure unwinding.
#include "sim/simulation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/sync/condvar.h"
#include "core/sync/mutex.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "sim/sim_test_util.h"
#include "sim/virtual_clock.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
// An abandoned fiber stack leaks what its frames owned: that is the documented cost of
// abandonment, not a bug, in the two tests that provoke it.
using AbandonmentLeaksAllowed = __lsan::ScopedDisabler;
#else
struct [[maybe_unused]] AbandonmentLeaksAllowed {};
#endif

namespace restoresim::sim {
namespace {

using ::testing::HasSubstr;

TEST(SimulationTest, RunsMainToCompletion) {
  int ran = 0;
  TestRun r = RunUnderSim([&]() { ran = 1; });
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(r.sim->thread_count(), 1u);
}

TEST(SimulationTest, ThreadsInterleaveAndJoin) {
  std::vector<int> order;
  std::set<std::vector<int>> orders;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    order.clear();
    TestRun r = RunUnderSim(
        [&]() {
          Thread a("a", [&]() { for (int i = 0; i < 3; ++i) { order.push_back(1); Yield(); } });
          Thread b("b", [&]() { for (int i = 0; i < 3; ++i) { order.push_back(2); Yield(); } });
          a.Join();
          b.Join();
        },
        seed);
    ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
    ASSERT_EQ(order.size(), 6u);
    orders.insert(order);
  }
  EXPECT_GT(orders.size(), 5u) << "50 seeds should explore several interleavings";
}

void Racy() {
  int shared = 0;
  Thread a("a", [&]() { for (int i = 0; i < 5; ++i) { shared = shared * 3 + 1; Yield(); } });
  Thread b("b", [&]() { for (int i = 0; i < 5; ++i) { shared = shared * 5 + 2; Yield(); } });
  a.Join();
  b.Join();
}

TEST(SimulationTest, SameSeedSameTraceHash) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    TestRun r1 = RunUnderSim(Racy, seed);
    TestRun r2 = RunUnderSim(Racy, seed);
    EXPECT_EQ(r1.hash, r2.hash) << "seed " << seed;
    EXPECT_EQ(r1.steps, r2.steps);
  }
  std::set<uint64_t> hashes;
  for (uint64_t seed = 0; seed < 20; ++seed) hashes.insert(RunUnderSim(Racy, seed).hash);
  EXPECT_GT(hashes.size(), 5u);
}

TEST(SimulationTest, FullTraceAndHashOnlyGiveTheSameHash) {
  SimOptions full;
  full.trace_mode = TraceMode::kFull;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    TestRun a = RunUnderSim(Racy, seed);
    TestRun b = RunUnderSim(Racy, seed, full);
    EXPECT_EQ(a.hash, b.hash);
    EXPECT_EQ(b.sim->trace().events().size(), b.sim->trace().event_count());
  }
}

TEST(SimulationTest, DeadlockReportNamesThreadsLocksAndHolders) {
  bool found = false;
  for (uint64_t seed = 0; seed < 200 && !found; ++seed) {
    TestRun r = RunUnderSim(
        [&]() {
          Mutex x("lock_x");
          Mutex y("lock_y");
          Thread t1("first", [&]() { MutexLock l1(x); MutexLock l2(y); });
          Thread t2("second", [&]() { MutexLock l1(y); MutexLock l2(x); });
          t1.Join();
          t2.Join();
        },
        seed);
    if (r.outcome.kind != RunOutcome::Kind::kDeadlock) continue;
    found = true;
    EXPECT_THAT(r.outcome.message, HasSubstr("thread 'first'"));
    EXPECT_THAT(r.outcome.message, HasSubstr("thread 'second'"));
    EXPECT_THAT(r.outcome.message, HasSubstr("mutex.lock on mutex 'lock_y'"));
    EXPECT_THAT(r.outcome.message, HasSubstr("holding mutex 'lock_x'"));
    EXPECT_THAT(r.outcome.message, HasSubstr("thread.join of thread 'first'"));
  }
  EXPECT_TRUE(found);
}

TEST(SimulationTest, RelockingAHeldMutexIsReported) {
  // Misuse on purpose: clang's static analysis would refuse what the simulator must catch.
  TestRun r = RunUnderSim([]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    Mutex mu("m");
    mu.Lock();
    mu.Lock();  // self-deadlock
  });
  EXPECT_EQ(r.outcome.kind, RunOutcome::Kind::kFailed);
  EXPECT_THAT(r.outcome.message, HasSubstr("already holds"));
}

TEST(SimulationTest, UnlockingAMutexNotHeldIsReported) {
  TestRun r = RunUnderSim([]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    Mutex mu("m");
    mu.Unlock();
  });
  EXPECT_EQ(r.outcome.kind, RunOutcome::Kind::kFailed);
  EXPECT_THAT(r.outcome.message, HasSubstr("held by nobody"));
}

TEST(SimulationTest, VirtualTimeJumpsToTheEarliestTimer) {
  VirtualClock clock;
  std::vector<std::pair<std::string, TimeNs>> wakeups;
  TestRun r = RunUnderSim([&]() {
    Thread slow("slow", [&]() {
      clock.SleepFor(5 * kSecond);
      wakeups.emplace_back("slow", clock.NowNs());
    });
    Thread fast("fast", [&]() {
      clock.SleepFor(2 * kSecond);
      wakeups.emplace_back("fast", clock.NowNs());
    });
    slow.Join();
    fast.Join();
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  ASSERT_EQ(wakeups.size(), 2u);
  EXPECT_EQ(wakeups[0], std::make_pair(std::string("fast"), 2 * kSecond));
  EXPECT_EQ(wakeups[1], std::make_pair(std::string("slow"), 5 * kSecond));
  EXPECT_EQ(r.end_ns, 5 * kSecond);
}

TEST(SimulationTest, TimedWaitTimesOutAtItsDeadlineAndNotifyBeatsIt) {
  VirtualClock clock;
  SimOptions no_spurious;
  no_spurious.spurious_wakeup_per_mille = 0;
  bool timed_out = false;
  TestRun r = RunUnderSim(
      [&]() {
        Mutex mu("mu");
        CondVar cv("cv");
        MutexLock lock(mu);
        timed_out = !cv.WaitUntil(mu, clock, 3 * kSecond);
      },
      1, no_spurious);
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_TRUE(timed_out);
  EXPECT_EQ(r.end_ns, 3 * kSecond);

  bool notified = false;
  r = RunUnderSim(
      [&]() {
        Mutex mu("mu");
        CondVar cv("cv");
        bool ready = false;
        Thread notifier("notifier", [&]() {
          clock.SleepFor(1 * kSecond);
          MutexLock lock(mu);
          ready = true;
          cv.NotifyOne();
        });
        {
          MutexLock lock(mu);
          while (!ready) {
            if (!cv.WaitUntil(mu, clock, 10 * kSecond)) break;
          }
          notified = ready;
        }
        notifier.Join();
      },
      2, no_spurious);
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_TRUE(notified);
  EXPECT_EQ(r.end_ns, 1 * kSecond);
}

TEST(SimulationTest, StepBudgetStopsALivelock) {
  SimOptions options;
  options.steps_max = 1000;
  TestRun r = RunUnderSim([]() {
    for (;;) Yield();
  }, 1, options);
  EXPECT_EQ(r.outcome.kind, RunOutcome::Kind::kStepBudget);
  EXPECT_THAT(r.outcome.message, HasSubstr("1000"));
}

TEST(SimulationTest, UncaughtExceptionFailsTheRun) {
  TestRun r = RunUnderSim([]() {
    Thread t("thrower", []() { throw std::runtime_error("boom"); });
    t.Join();
  });
  EXPECT_EQ(r.outcome.kind, RunOutcome::Kind::kFailed);
  EXPECT_THAT(r.outcome.message, HasSubstr("thread 'thrower'"));
  EXPECT_THAT(r.outcome.message, HasSubstr("boom"));
}

TEST(SimulationTest, CheckFailureFailsTheRunInsteadOfTheProcess) {
  TestRun r = RunUnderSim([]() {
    const int x = 2;
    RS_CHECK(x == 3, "x is {}", x);
  });
  EXPECT_EQ(r.outcome.kind, RunOutcome::Kind::kFailed);
  EXPECT_THAT(r.outcome.message, HasSubstr("x == 3"));
  EXPECT_THAT(r.outcome.message, HasSubstr("x is 2"));
}

struct DestructionCounter {
  int* count;
  ~DestructionCounter() { ++*count; }
};

TEST(SimulationTest, FailureUnwindsEveryThreadsStack) {
  int destroyed = 0;
  TestRun r = RunUnderSim([&]() {
    Mutex mu("mu");
    CondVar cv("never");
    Thread waiter("waiter", [&]() {
      DestructionCounter guard{&destroyed};
      MutexLock lock(mu);
      for (;;) cv.Wait(mu);  // never notified
    });
    Thread failer("failer", [&]() {
      DestructionCounter guard{&destroyed};
      Yield();
      RS_CHECK(false, "planned failure");
    });
    waiter.Join();
    failer.Join();
  });
  EXPECT_EQ(r.outcome.kind, RunOutcome::Kind::kFailed);
  EXPECT_THAT(r.outcome.message, HasSubstr("planned failure"));
  EXPECT_EQ(destroyed, 2);
}

TEST(SimulationTest, SpuriousWakeupsFollowTheConfiguredRate) {
  auto count_wakeups = [](uint32_t per_mille) {
    SimOptions options;
    options.spurious_wakeup_per_mille = per_mille;
    int returns = 0;
    TestRun r = RunUnderSim(
        [&]() {
          Mutex mu("mu");
          CondVar cv("cv");
          bool stop = false;
          Thread waiter("waiter", [&]() {
            MutexLock lock(mu);
            while (!stop) {
              cv.Wait(mu);
              ++returns;
            }
          });
          for (int i = 0; i < 20; ++i) Yield();
          {
            MutexLock lock(mu);
            stop = true;
            cv.NotifyAll();
          }
          waiter.Join();
        },
        7, options);
    EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
    return returns;
  };
  EXPECT_EQ(count_wakeups(0), 1);   // only the real notification
  EXPECT_GT(count_wakeups(1000), 5);  // every wait returns at once
}

TEST(SimulationTest, NotifyOneWakesExactlyOneWaiter) {
  SimOptions options;
  options.spurious_wakeup_per_mille = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    int woken = 0;
    TestRun r = RunUnderSim(
        [&]() {
          Mutex mu("mu");
          CondVar cv("cv");
          int tokens = 0;
          int waiting = 0;
          auto consume = [&]() {
            MutexLock lock(mu);
            ++waiting;
            while (tokens == 0) cv.Wait(mu);
            --tokens;
            ++woken;
          };
          Thread a("a", consume);
          Thread b("b", consume);
          Thread c("c", consume);
          for (;;) {  // wait until all three wait, then release them one by one
            MutexLock lock(mu);
            if (waiting == 3) break;
          }
          for (int i = 0; i < 3; ++i) {
            MutexLock lock(mu);
            ++tokens;
            cv.NotifyOne();
          }
          a.Join();
          b.Join();
          c.Join();
        },
        seed, options);
    ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
    EXPECT_EQ(woken, 3);
  }
}

TEST(SimulationTest, PrimitivesOutliveASimulationAndWorkInTheNext) {
  Mutex shared("shared");
  for (uint64_t seed = 0; seed < 3; ++seed) {
    TestRun r = RunUnderSim([&]() {
      MutexLock lock(shared);
      Yield();
    }, seed);
    EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
  }
  MutexLock real_lock(shared);  // and on OS threads afterwards
}

TEST(SimulationTest, AbortedRunLeavesMutexesUsable) {
  Mutex shared("shared");
  TestRun r = RunUnderSim([&]() {
    shared.Lock();
    RS_CHECK(false, "fail while holding a lock");
  });
  EXPECT_EQ(r.outcome.kind, RunOutcome::Kind::kFailed);
  r = RunUnderSim([&]() { MutexLock lock(shared); });
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
}

// A destructor that blocks while a failed run is torn down cannot be unwound (SimAbort would
// leave a noexcept frame): the run still reports its own failure, the thread's stack is
// abandoned with a note, and the process survives.
TEST(SimulationTest, BlockingDestructorDuringTeardownIsAbandonedNotFatal) {
  struct WaitsOnDestruction {
    Mutex* mu;
    CondVar* cv;
    ~WaitsOnDestruction() {
      MutexLock lock(*mu);
      cv->Wait(*mu);  // a point that throws SimAbort while the run is torn down
    }
  };
  [[maybe_unused]] AbandonmentLeaksAllowed leaks_allowed;
  int abandoned = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    TestRun r = RunUnderSim(
        []() {
          Mutex mu("mu");
          CondVar cv("cv");
          Thread t("waiter", [&]() {
            WaitsOnDestruction w{&mu, &cv};
          });  // ~WaitsOnDestruction waits forever
          for (int i = 0; i < 5; ++i) Yield();
          RS_CHECK(false, "planned failure");
          t.Join();
        },
        seed);
    EXPECT_EQ(r.outcome.kind, RunOutcome::Kind::kFailed);
    EXPECT_THAT(r.outcome.message, HasSubstr("planned failure"));
    if (r.outcome.message.find("thread 'waiter' could not be unwound") != std::string::npos) {
      ++abandoned;
    }
  }
  EXPECT_GT(abandoned, 0) << "no seed suspended the waiter inside its destructor";
}

// A check that fails while an already-failed run is torn down (here: a destructor's own check,
// during unwinding, and a check in code that runs on after a non-throwing point) fails nothing
// more — the run keeps its first failure, notes the second — and never the process, so a
// sweep goes on. It used to call std::abort() and kill the sweep with every finding in it.
TEST(SimulationTest, ACheckFailingDuringTeardownFailsOnlyThatRun) {
  struct ChecksOnDestruction {
    ~ChecksOnDestruction() { RS_CHECK(false, "the destructor's own check"); }
  };
  [[maybe_unused]] AbandonmentLeaksAllowed leaks_allowed;
  int noted = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    TestRun r = RunUnderSim(
        []() {
          Thread t("checker", [&]() {
            ChecksOnDestruction c;
            for (int i = 0; i < 100; ++i) Yield();
          });
          for (int i = 0; i < 5; ++i) Yield();
          RS_CHECK(false, "planned failure");
          t.Join();
        },
        seed);
    EXPECT_EQ(r.outcome.kind, RunOutcome::Kind::kFailed);
    EXPECT_EQ(r.outcome.failure.kind, FailureKind::kCheck);
    EXPECT_THAT(r.outcome.failure.detail, HasSubstr("planned failure"));
    if (r.outcome.message.find("while tearing the run down: check failed") !=
        std::string::npos) {
      ++noted;
      EXPECT_THAT(r.outcome.message, HasSubstr("the destructor's own check"));
    }
  }
  EXPECT_GT(noted, 0) << "no seed had the checker inside its loop when the run failed";
  // The process is still here, and the next run is clean.
  EXPECT_TRUE(RunUnderSim([]() {}).outcome.ok());
}

// A destructor that loops on primitives while the run is torn down is abandoned after a bound
// instead of aborting the process.
TEST(SimulationTest, ADestructorLoopingDuringTeardownIsAbandonedNotFatal) {
  struct SpinsOnDestruction {
    Mutex* mu;
    ~SpinsOnDestruction() {
      for (;;) {
        mu->Lock();  // never throws inside the scope below: the loop is endless
        mu->Unlock();
      }
    }
  };
  [[maybe_unused]] AbandonmentLeaksAllowed leaks_allowed;
  TestRun r = RunUnderSim([]() {
    Mutex mu("mu");
    Thread t("spinner", [&]() {
      SimNoAbortScope no_abort;
      SpinsOnDestruction s{&mu};
      for (int i = 0; i < 100; ++i) Yield();
    });
    Yield();
    RS_CHECK(false, "planned failure");
    t.Join();
  });
  EXPECT_EQ(r.outcome.kind, RunOutcome::Kind::kFailed);
  EXPECT_THAT(r.outcome.message, HasSubstr("planned failure"));
  EXPECT_THAT(r.outcome.message, HasSubstr("kept calling primitives while being unwound"));
}

// An exception escaping a noexcept function in simulated code fails that run with a clear
// message instead of terminating the process (and with it the whole sweep).
TEST(SimulationTest, StdTerminateInASimulatedThreadFailsTheRun) {
  [[maybe_unused]] AbandonmentLeaksAllowed leaks_allowed;
  TestRun r = RunUnderSim([]() {
    Thread t("thrower", []() {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wterminate"
      auto boom = []() noexcept { throw std::runtime_error("escaped"); };
#pragma GCC diagnostic pop
      boom();
    });
    t.Join();
  });
  EXPECT_EQ(r.outcome.kind, RunOutcome::Kind::kFailed);
  EXPECT_THAT(r.outcome.message, HasSubstr("std::terminate in thread 'thrower'"));
}

// Each fiber has its own C++ exception state: a thread switched out inside a catch block keeps
// its caught exception while another thread throws and catches its own.
TEST(SimulationTest, CatchBlocksInTwoThreadsDoNotInterfere) {
  for (uint64_t seed = 0; seed < 30; ++seed) {
    std::vector<std::string> caught;
    TestRun r = RunUnderSim(
        [&]() {
          auto body = [&](const char* what) {
            try {
              throw std::runtime_error(what);
            } catch (const std::exception& e) {
              Yield();  // switch while inside the catch block
              EXPECT_EQ(std::uncaught_exceptions(), 0);
              try {
                throw;  // the rethrown exception must be this thread's own
              } catch (const std::exception& again) {
                Yield();
                caught.push_back(again.what());
              }
            }
          };
          Thread a("a", [&]() { body("from-a"); });
          Thread b("b", [&]() { body("from-b"); });
          a.Join();
          b.Join();
        },
        seed);
    ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
    ASSERT_EQ(caught.size(), 2u);
    EXPECT_NE(caught[0], caught[1]) << "seed " << seed;
  }
}

}  // namespace
}  // namespace restoresim::sim
