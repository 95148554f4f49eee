// The core/sync primitives under the simulator: the contracts of core/sync/sync_test.cc, now
// checked over many schedules (seeds), with virtual time (VirtualClock) instead of real time,
// and with the trace as evidence of what blocked.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/sync/atomic.h"
#include "core/sync/blocking_queue.h"
#include "core/sync/mutex.h"
#include "core/sync/shared_cell.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "core/util/sim_hooks.h"
#include "sim/sim_test_util.h"
#include "sim/simulation.h"
#include "sim/virtual_clock.h"

namespace restoresim::sim {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSeeds = 100;

SimOptions FullTrace() {
  SimOptions options;
  options.trace_mode = TraceMode::kFull;
  return options;
}

// Events of `kind` by `thread` at operation `op` (REQUIRES: a kFull trace).
std::vector<TraceEvent> EventsOf(const Trace& trace, TraceKind kind, SimThreadId thread, SimOp op) {
  std::vector<TraceEvent> found;
  for (const TraceEvent& e : trace.events()) {
    if (e.kind == kind && e.thread == thread && e.op == op) found.push_back(e);
  }
  return found;
}

Simulation& CurrentSimulation() {
  auto* sim = dynamic_cast<Simulation*>(CurrentSim());
  RS_CHECK(sim != nullptr, "not inside a Simulation");
  return *sim;
}

// Regression: a finished fiber leaves its stack with ExitFiber and never returns from its last
// frames, so their ASan redzones stayed poisoned; a later fiber reusing the pooled stack hit a
// stack-buffer-underflow. FiberStack::Acquire now unpoisons pooled stacks. Meaningful under
// tools/test --sanitize; first in the file so that an ASan run names it.
TEST(SyncSimTest, AFiberStackReusedFromAnEarlierRunIsClean) {
  for (uint64_t seed = 0; seed < 3; ++seed) {
    int popped = 0;
    TestRun r = RunUnderSim(
        [&]() {
          BlockingQueue<int> queue(1, "q");  // the first object on main's fiber stack
          Thread producer("producer", [&]() {
            RS_CHECK(queue.Push(1));
            queue.Close();
          });
          Thread consumer("consumer", [&]() {
            while (queue.Pop()) ++popped;
          });
          producer.Join();
          consumer.Join();
        },
        seed);
    ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
    EXPECT_EQ(popped, 1);
  }
}

// One producer pushes 0..items_count-1 then closes; one consumer pops until closed.
std::vector<int> RunProducerConsumer(size_t capacity_max, int items_count) {
  std::vector<int> received;
  BlockingQueue<int> queue(capacity_max, "jobs");
  Thread producer("producer", [&]() {
    for (int i = 0; i < items_count; ++i) RS_CHECK(queue.Push(i), "push {} refused", i);
    queue.Close();
  });
  Thread consumer("consumer", [&]() {
    while (std::optional<int> item = queue.Pop()) {
      RS_CHECK_LE(queue.Size(), capacity_max, "queue above its capacity");
      received.push_back(*item);
    }
  });
  producer.Join();
  consumer.Join();
  return received;
}

TEST(SyncSimTest, BlockingQueueDeliversEveryItemOnceInFifoOrder) {
  constexpr int kItems = 12;
  std::vector<int> expected;
  for (int i = 0; i < kItems; ++i) expected.push_back(i);
  int seeds_where_producer_blocked = 0;
  int seeds_where_consumer_blocked = 0;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    std::vector<int> received;
    TestRun r =
        RunUnderSim([&]() { received = RunProducerConsumer(2, kItems); }, seed, FullTrace());
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
    ASSERT_EQ(received, expected) << "seed " << seed;
    // Threads: 0 main, 1 producer, 2 consumer. Their only condition waits are the queue's.
    const Trace& trace = r.sim->trace();
    if (!EventsOf(trace, TraceKind::kBlock, 1, SimOp::kCondWait).empty()) {
      ++seeds_where_producer_blocked;
    }
    if (!EventsOf(trace, TraceKind::kBlock, 2, SimOp::kCondWait).empty()) {
      ++seeds_where_consumer_blocked;
    }
  }
  // The schedules explored include both a full queue and an empty one.
  EXPECT_GT(seeds_where_producer_blocked, 0);
  EXPECT_GT(seeds_where_consumer_blocked, 0);
}

TEST(SyncSimTest, BlockingQueueWithTwoProducersAndTwoConsumersLosesNothing) {
  constexpr int kItemsPerProducer = 6;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    std::vector<std::vector<int>> by_consumer(2);
    TestRun r = RunUnderSim(
        [&]() {
          BlockingQueue<int> queue(2, "jobs");
          Atomic<int> producers_left(2, "producers_left");
          auto produce = [&](int base) {
            for (int i = 0; i < kItemsPerProducer; ++i) RS_CHECK(queue.Push(base + i));
            if (producers_left.FetchSub(1) == 1) queue.Close();
          };
          auto consume = [&](int index) {
            while (std::optional<int> item = queue.Pop()) by_consumer[index].push_back(*item);
          };
          Thread p0("p0", [&]() { produce(0); });
          Thread p1("p1", [&]() { produce(100); });
          Thread c0("c0", [&]() { consume(0); });
          Thread c1("c1", [&]() { consume(1); });
          p0.Join();
          p1.Join();
          c0.Join();
          c1.Join();
        },
        seed);
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
    std::multiset<int> all;
    for (const auto& items : by_consumer) {
      all.insert(items.begin(), items.end());
      // FIFO: each consumer sees each producer's items in increasing order.
      int last_low = -1;
      int last_high = -1;
      for (int item : items) {
        int& last = item < 100 ? last_low : last_high;
        EXPECT_GT(item, last) << "seed " << seed;
        last = item;
      }
    }
    std::multiset<int> expected;
    for (int i = 0; i < kItemsPerProducer; ++i) expected.insert({i, 100 + i});
    EXPECT_EQ(all, expected) << "seed " << seed;
  }
}

TEST(SyncSimTest, FullQueueBlocksTheProducerUntilAPop) {
  VirtualClock clock;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    bool pushed_while_full = true;
    size_t size_while_full = 0;
    std::vector<int> popped;
    TestRun r = RunUnderSim(
        [&]() {
          BlockingQueue<int> queue(1, "one-slot");
          RS_CHECK(queue.Push(1));
          bool pushed = false;
          Thread producer("producer", [&]() {
            RS_CHECK(queue.Push(2));
            pushed = true;
          });
          // Virtual time only moves once every thread is blocked: the producer is, here.
          clock.SleepFor(1 * kSecond);
          pushed_while_full = pushed;
          size_while_full = queue.Size();
          popped.push_back(*queue.Pop());
          producer.Join();
          popped.push_back(*queue.Pop());
        },
        seed, FullTrace());
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
    EXPECT_FALSE(pushed_while_full) << "seed " << seed;
    EXPECT_EQ(size_while_full, 1u) << "seed " << seed;
    EXPECT_EQ(popped, (std::vector<int>{1, 2})) << "seed " << seed;
    // The producer (thread 1) blocked on the queue's not-full condition before time moved.
    const std::vector<TraceEvent> blocks =
        EventsOf(r.sim->trace(), TraceKind::kBlock, 1, SimOp::kCondWait);
    ASSERT_FALSE(blocks.empty()) << "seed " << seed;
    EXPECT_EQ(blocks.front().time_ns, 0) << "seed " << seed;
  }
}

TEST(SyncSimTest, PopUntilOnAnEmptyQueueReturnsExactlyAtTheVirtualDeadline) {
  VirtualClock clock;
  for (uint32_t spurious_per_mille : {0u, 10u, 500u}) {
    SimOptions options;
    options.spurious_wakeup_per_mille = spurious_per_mille;
    for (uint64_t seed = 0; seed < 10; ++seed) {
      std::optional<int> result = -1;
      TimeNs deadline_ns = 0;
      TimeNs returned_ns = 0;
      TestRun r = RunUnderSim(
          [&]() {
            BlockingQueue<int> queue(2, "empty");
            clock.SleepFor(1 * kSecond);  // start away from zero
            deadline_ns = clock.NowNs() + 250 * kMillisecond;
            result = queue.PopUntil(clock, deadline_ns);
            returned_ns = clock.NowNs();
          },
          seed, options);
      ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
      EXPECT_EQ(result, std::nullopt);
      EXPECT_EQ(deadline_ns, 1 * kSecond + 250 * kMillisecond);
      EXPECT_EQ(returned_ns, deadline_ns) << "spurious " << spurious_per_mille << " seed " << seed;
      EXPECT_EQ(r.end_ns, deadline_ns);
    }
  }
}

TEST(SyncSimTest, PopUntilReturnsAnItemPushedBeforeTheDeadline) {
  VirtualClock clock;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::optional<int> result;
    TimeNs returned_ns = -1;
    TestRun r = RunUnderSim(
        [&]() {
          BlockingQueue<int> queue(2, "late");
          Thread producer("producer", [&]() {
            clock.SleepFor(100 * kMillisecond);
            RS_CHECK(queue.Push(9));
          });
          result = queue.PopUntil(clock, 5 * kSecond);
          returned_ns = clock.NowNs();
          producer.Join();
        },
        seed);
    ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
    EXPECT_EQ(result, 9) << "seed " << seed;
    EXPECT_EQ(returned_ns, 100 * kMillisecond) << "seed " << seed;
    EXPECT_EQ(r.end_ns, 100 * kMillisecond) << "the deadline timer must not advance time";
  }
}

TEST(SyncSimTest, CloseWakesABlockedConsumer) {
  VirtualClock clock;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::optional<int> popped = -1;
    TimeNs popped_at_ns = -1;
    TestRun r = RunUnderSim(
        [&]() {
          BlockingQueue<int> queue(2, "jobs");
          Thread consumer("consumer", [&]() {
            popped = queue.Pop();
            popped_at_ns = clock.NowNs();
          });
          clock.SleepFor(1 * kSecond);  // the consumer is blocked in Pop by now
          queue.Close();
          consumer.Join();
        },
        seed);
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
    EXPECT_EQ(popped, std::nullopt);
    EXPECT_EQ(popped_at_ns, 1 * kSecond);
  }
}

TEST(SyncSimTest, WithoutCloseABlockedConsumerIsADeadlock) {
  TestRun r = RunUnderSim([]() {
    BlockingQueue<int> queue(2, "jobs");
    Thread consumer("consumer", [&]() { (void)queue.Pop(); });
    consumer.Join();
  });
  EXPECT_EQ(r.outcome.kind, RunOutcome::Kind::kDeadlock);
  EXPECT_THAT(r.outcome.message, HasSubstr("thread 'consumer'"));
  EXPECT_THAT(r.outcome.message, HasSubstr("cond.wait on condvar 'jobs'"));
}

// Tracks which objects are alive in a set that outlives the run, so a destructor can ask
// whether an object still exists without touching it.
struct Tracked {
  std::set<const void*>* alive;
  explicit Tracked(std::set<const void*>* a) : alive(a) { alive->insert(this); }
  ~Tracked() { alive->erase(this); }
};

// Regression: UnwindAll used to unwind in ascending id order, so "main" destroyed its locals
// (here `shared` and the queue) before the threads it spawned unwound against them. Threads are
// now unwound newest first, as their lifetimes nest in a real program.
TEST(SyncSimTest, UnwindingADeadlockedRunDestroysThreadsBeforeTheLocalsTheyUse) {
  std::set<const void*> alive;
  bool used_after_destruction = false;
  TestRun r = RunUnderSim([&]() {
    Tracked shared(&alive);
    BlockingQueue<int> queue(1, "jobs");
    Thread consumer("consumer", [&]() {
      struct UsesShared {
        const Tracked* shared;
        std::set<const void*>* alive;
        bool* bad;
        ~UsesShared() {
          if (alive->count(shared) == 0) *bad = true;
        }
      } guard{&shared, &alive, &used_after_destruction};
      (void)queue.Pop();  // never pushed, never closed: a deadlock
    });
    consumer.Join();
  });
  ASSERT_EQ(r.outcome.kind, RunOutcome::Kind::kDeadlock) << r.outcome.message;
  EXPECT_TRUE(alive.empty());
  EXPECT_FALSE(used_after_destruction)
      << "thread 'consumer' was unwound after main had destroyed the objects it uses";
}

// Regression: Mutex::Unlock is a scheduling point, usually reached from ~MutexLock (implicitly
// noexcept). A run that failed while another thread was parked there resumed it during
// teardown and threw SimAbort out of the destructor: std::terminate ended the whole process
// ("terminate called after throwing an instance of 'restoresim::SimAbort'") instead of the run
// reporting its failure. Unlock, notify and join points no longer throw. Run in a child process
// so that a regression does not take the rest of this file down with it.
TEST(SyncSimTest, FailureWhileAnotherThreadLeavesAMutexLockScopeIsReported) {
  EXPECT_EXIT(
      {
        int reported = 0;
        for (uint64_t seed = 0; seed < 20; ++seed) {
          TestRun r = RunUnderSim(
              []() {
                Mutex mu("mu");
                bool ready = false;
                Thread leaver("leaver", [&]() {
                  MutexLock lock(mu);
                  ready = true;
                });  // ~MutexLock: a scheduling point, where `leaver` may be parked
                while (!ready) Yield();
                RS_CHECK(false, "planned failure");
                leaver.Join();
              },
              seed);
          if (r.outcome.kind == RunOutcome::Kind::kFailed &&
              r.outcome.message.find("planned failure") != std::string::npos) {
            ++reported;
          }
        }
        std::exit(reported == 20 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// A destructor that locks (here BlockingQueue::Close) is a throwing point unless it runs inside
// SimNoAbortScope; with the scope, a run that fails while the destructor is parked there still
// ends with its failure reported rather than std::terminate.
TEST(SyncSimTest, ADestructorClosingAQueueInsideSimNoAbortScopeSurvivesTeardown) {
  EXPECT_EXIT(
      {
        int reported = 0;
        for (uint64_t seed = 0; seed < 20; ++seed) {
          TestRun r = RunUnderSim(
              []() {
                struct ClosesOnExit {
                  BlockingQueue<int>* queue;
                  ~ClosesOnExit() {
                    SimNoAbortScope no_abort;
                    queue->Close();
                  }
                };
                BlockingQueue<int> queue(1, "jobs");
                bool ready = false;
                Thread closer("closer", [&]() {
                  ClosesOnExit closes{&queue};
                  ready = true;
                });  // ~ClosesOnExit locks the queue: `closer` may be parked in it
                while (!ready) Yield();
                RS_CHECK(false, "planned failure");
                closer.Join();
              },
              seed);
          if (r.outcome.kind == RunOutcome::Kind::kFailed &&
              r.outcome.message.find("planned failure") != std::string::npos) {
            ++reported;
          }
        }
        std::exit(reported == 20 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(SyncSimTest, CloseWakesABlockedProducer) {
  VirtualClock clock;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::optional<bool> push_result;
    std::vector<int> left;
    TestRun r = RunUnderSim(
        [&]() {
          BlockingQueue<int> queue(1, "jobs");
          RS_CHECK(queue.Push(1));
          Thread producer("producer", [&]() { push_result = queue.Push(2); });
          clock.SleepFor(1 * kSecond);
          queue.Close();
          producer.Join();
          while (std::optional<int> item = queue.Pop()) left.push_back(*item);
        },
        seed);
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
    EXPECT_EQ(push_result, false);
    EXPECT_EQ(left, std::vector<int>{1});
  }
}

struct Versioned {
  uint64_t seq = 0;
  std::vector<uint64_t> copies;  // `seq` copies of `seq`: a torn value breaks the pattern
};

TEST(SyncSimTest, SharedCellSnapshotsAreNeverTorn) {
  constexpr uint64_t kPublishes = 8;
  constexpr int kReadsPerReader = 10;
  int reads = 0;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    std::vector<std::string> bad;
    TestRun r = RunUnderSim(
        [&]() {
          SharedCell<Versioned> cell(Versioned{}, "cell");
          auto read = [&](const char* who) {
            uint64_t last_seq = 0;
            for (int i = 0; i < kReadsPerReader; ++i) {
              const uint64_t version_before = cell.version();
              std::shared_ptr<const Versioned> snap = cell.Snapshot();
              const uint64_t version_after = cell.version();
              ++reads;
              bool whole = snap->copies.size() == snap->seq;
              for (uint64_t c : snap->copies) whole = whole && c == snap->seq;
              if (!whole || snap->seq < last_seq || snap->seq < version_before ||
                  snap->seq > version_after) {
                bad.push_back(fmt::format("{} read seq {} between versions {} and {}", who,
                                          snap->seq, version_before, version_after));
              }
              last_seq = snap->seq;
              Yield();
            }
          };
          Thread r1("reader-1", [&]() { read("reader-1"); });
          Thread r2("reader-2", [&]() { read("reader-2"); });
          for (uint64_t i = 1; i <= kPublishes; ++i) {
            cell.Publish(Versioned{i, std::vector<uint64_t>(i, i)});
            Yield();
          }
          r1.Join();
          r2.Join();
          RS_CHECK_EQ(cell.version(), kPublishes);
        },
        seed);
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
    EXPECT_TRUE(bad.empty()) << "seed " << seed << ": " << bad.front();
  }
  EXPECT_EQ(reads, static_cast<int>(kSeeds) * 2 * kReadsPerReader);
}

// Three threads each add 1 five times, by `add`; returns the final sum.
template <typename AddFn>
int64_t SumFromThreeThreads(uint64_t seed, AddFn add) {
  int64_t result = -1;
  TestRun r = RunUnderSim(
      [&]() {
        Atomic<int64_t> sum(0, "sum");
        auto body = [&]() {
          for (int i = 0; i < 5; ++i) add(sum);
        };
        Thread a("a", body);
        Thread b("b", body);
        Thread c("c", body);
        a.Join();
        b.Join();
        c.Join();
        result = sum.Load();
      },
      seed);
  EXPECT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
  return result;
}

TEST(SyncSimTest, AtomicFetchAddFromThreeThreadsAlwaysSums) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    EXPECT_EQ(SumFromThreeThreads(seed, [](Atomic<int64_t>& s) { s.FetchAdd(1); }), 15)
        << "seed " << seed;
  }
}

TEST(SyncSimTest, AtomicLoadThenStoreLosesAnUpdateForSomeSeed) {
  std::optional<uint64_t> losing_seed;
  for (uint64_t seed = 0; seed < 200 && !losing_seed; ++seed) {
    const int64_t sum =
        SumFromThreeThreads(seed, [](Atomic<int64_t>& s) { s.Store(s.Load() + 1); });
    ASSERT_LE(sum, 15);
    ASSERT_GE(sum, 1);
    if (sum < 15) losing_seed = seed;
  }
  EXPECT_TRUE(losing_seed.has_value())
      << "200 seeds never interleaved a load and its dependent store";
}

void QueueProgram() {
  BlockingQueue<int> queue(2, "jobs");
  Thread producer("producer", [&]() {
    for (int i = 0; i < 8; ++i) RS_CHECK(queue.Push(i));
    queue.Close();
  });
  Thread consumer("consumer", [&]() {
    while (queue.Pop()) Yield();
  });
  producer.Join();
  consumer.Join();
}

TEST(SyncSimTest, SameSeedGivesTheSameTraceHash) {
  std::set<uint64_t> hashes;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    TestRun r1 = RunUnderSim(QueueProgram, seed);
    TestRun r2 = RunUnderSim(QueueProgram, seed);
    ASSERT_TRUE(r1.outcome.ok()) << r1.outcome.message;
    ASSERT_TRUE(r2.outcome.ok()) << r2.outcome.message;
    EXPECT_EQ(r1.hash, r2.hash) << "seed " << seed;
    EXPECT_EQ(r1.steps, r2.steps) << "seed " << seed;
    hashes.insert(r1.hash);
  }
  EXPECT_GT(hashes.size(), 5u) << "the hash must depend on the schedule";
}

TEST(SyncSimTest, AFinishedThreadThatIsNeverJoinedIsFine) {
  // Thread requires a Join before destruction, so this spawns through the hooks directly: a
  // simulated thread nobody waits for must still run to the end, after main has returned.
  for (uint64_t seed = 0; seed < 20; ++seed) {
    int steps_done = 0;
    bool main_returned = false;
    bool ran_after_main = false;
    TestRun r = RunUnderSim(
        [&]() {
          CurrentSim()->Spawn("detached", [&]() {
            while (!main_returned) Yield();  // main has exited (no scheduling point between)
            ran_after_main = true;
            for (int i = 0; i < 5; ++i) {
              ++steps_done;
              Yield();
            }
          });
          main_returned = true;
        },
        seed);
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
    EXPECT_EQ(steps_done, 5);
    EXPECT_TRUE(ran_after_main);
    EXPECT_EQ(r.sim->thread_count(), 2u);
  }
}

TEST(SyncSimTest, JoinOfAFinishedThreadReturnsAtOnce) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    uint64_t join_steps = 0;
    TestRun r = RunUnderSim(
        [&]() {
          bool done = false;
          Thread worker("worker", [&]() { done = true; });
          // `done` is the body's last write: once main sees it the worker has exited.
          while (!done) Yield();
          Simulation& sim = CurrentSimulation();
          const uint64_t before = sim.steps();
          worker.Join();
          join_steps = sim.steps() - before;
        },
        seed, FullTrace());
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
    EXPECT_EQ(join_steps, 1u) << "one scheduling point, no wait";
    EXPECT_TRUE(EventsOf(r.sim->trace(), TraceKind::kBlock, 0, SimOp::kJoin).empty())
        << "seed " << seed;
  }
}

TEST(SyncSimTest, JoinOfARunningThreadWaitsForIt) {
  // The contrast to the test above: here main must block until the worker exits.
  for (uint64_t seed = 0; seed < 20; ++seed) {
    bool worker_done_at_join = false;
    TestRun r = RunUnderSim(
        [&]() {
          bool done = false;
          VirtualClock clock;
          Thread worker("worker", [&]() {
            clock.SleepFor(1 * kSecond);
            done = true;
          });
          worker.Join();
          worker_done_at_join = done;
        },
        seed, FullTrace());
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
    EXPECT_TRUE(worker_done_at_join);
    EXPECT_FALSE(EventsOf(r.sim->trace(), TraceKind::kBlock, 0, SimOp::kJoin).empty());
  }
}

}  // namespace
}  // namespace restoresim::sim
