// Tests for the sync primitives on real OS threads (no simulation): CurrentSim() is null, so
// every primitive is its plain Abseil/std counterpart. sim/sync_sim_test.cc runs the same
// contracts under the simulator.
//
// Timing: the only timed assertions are lower bounds (a timeout waited at least its duration).
// Where a test must know that another thread is blocked, it checks an outcome that a correct
// primitive can never produce (an item pushed into a full queue), so a slow machine can make a
// broken primitive pass by luck but never a correct one fail.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "core/port/system_clock.h"
#include "core/sync/atomic.h"
#include "core/sync/blocking_queue.h"
#include "core/sync/condvar.h"
#include "core/sync/mutex.h"
#include "core/sync/shared_cell.h"
#include "core/sync/thread.h"
#include "core/util/run_context.h"
#include "core/util/sim_hooks.h"

namespace restoresim {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr TimeNs kSettleNs = 20 * kMillisecond;  // lets a helper thread reach its blocking call

TEST(OsThreadNameTest, KeepsTheEndWhereTheRuntimesThreadsDiffer) {
  EXPECT_EQ(OsThreadName("bulk-writer"), "bulk-writer");
  EXPECT_EQ(OsThreadName("exactly15bytes!"), "exactly15bytes!");
  EXPECT_EQ(OsThreadName("rsb-2017-1796573989-main-StreamThread-1"), "73989-main-ST-1");
  EXPECT_EQ(OsThreadName("rsb-2017-1796573989-main-StreamThread-1-restore"), "in-ST-1-restore");
  EXPECT_EQ(OsThreadName("checkpoint-signal"), "eckpoint-signal");
  EXPECT_NE(OsThreadName("app-StreamThread-1"), OsThreadName("app-StreamThread-2"));
}

TEST(MutexTest, ProtectsACounterIncrementedByFourThreads) {
  constexpr int kThreads = 4;
  constexpr int kIncrementsPerThread = 10000;
  Mutex mu("counter");
  int64_t counter = 0;
  std::vector<std::unique_ptr<Thread>> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.push_back(std::make_unique<Thread>("incr-" + std::to_string(i), [&]() {
      for (int n = 0; n < kIncrementsPerThread; ++n) {
        MutexLock lock(mu);
        // A read, a yield and a write: without mutual exclusion updates are lost quickly.
        const int64_t read = counter;
        if (n % 64 == 0) Yield();
        counter = read + 1;
      }
    }));
  }
  for (auto& t : threads) t->Join();
  MutexLock lock(mu);
  EXPECT_EQ(counter, int64_t{kThreads} * kIncrementsPerThread);
}

TEST(MutexTest, TryLockFailsWhileAnotherThreadHoldsIt) {
  Mutex mu("held");
  std::optional<bool> while_held;
  std::optional<bool> after_release;
  mu.Lock();
  Thread probe("probe", [&]() {
    while_held = false;
    if (mu.TryLock()) {  // written so clang's thread-safety analysis can follow it
      while_held = true;
      mu.Unlock();
    }
  });
  probe.Join();
  mu.Unlock();
  Thread probe_again("probe-again", [&]() {
    after_release = false;
    if (mu.TryLock()) {
      after_release = true;
      mu.Unlock();
    }
  });
  probe_again.Join();
  ASSERT_TRUE(while_held.has_value());
  ASSERT_TRUE(after_release.has_value());
  EXPECT_FALSE(*while_held);
  EXPECT_TRUE(*after_release);
}

TEST(MutexTest, AssertHeldPassesForTheHolder) {
  Mutex mu("m");
  MutexLock lock(mu);
  mu.AssertHeld();  // aborts the process if absl thinks the mutex is not held
  EXPECT_STREQ(mu.name(), "m");
}

// Ping-pong: each side waits for its turn, so every round needs a working wait and notify.
TEST(CondVarTest, ProducerConsumerHandshake) {
  constexpr int kRounds = 1000;
  Mutex mu("handshake");
  CondVar cv("turn");
  int value = 0;      // guarded by mu: the producer's latest value
  bool full = false;  // guarded by mu: a value waits for the consumer
  std::vector<int> received;
  Thread consumer("consumer", [&]() {
    for (int i = 0; i < kRounds; ++i) {
      MutexLock lock(mu);
      while (!full) cv.Wait(mu);
      received.push_back(value);
      full = false;
      cv.NotifyAll();
    }
  });
  for (int i = 1; i <= kRounds; ++i) {
    MutexLock lock(mu);
    while (full) cv.Wait(mu);
    value = i;
    full = true;
    cv.NotifyOne();
  }
  consumer.Join();
  ASSERT_EQ(received.size(), size_t{kRounds});
  for (int i = 0; i < kRounds; ++i) ASSERT_EQ(received[i], i + 1) << "round " << i;
}

TEST(BlockingQueueTest, PopsInFifoOrder) {
  BlockingQueue<int> queue(8, "fifo");
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(queue.Push(i));
  EXPECT_EQ(queue.Size(), 5u);
  std::vector<int> popped;
  for (int i = 0; i < 5; ++i) popped.push_back(*queue.Pop());
  EXPECT_THAT(popped, ElementsAre(0, 1, 2, 3, 4));
  EXPECT_EQ(queue.Size(), 0u);
}

TEST(BlockingQueueTest, TryPushOnAFullQueueReturnsFalse) {
  BlockingQueue<int> queue(2, "small");
  EXPECT_EQ(queue.capacity_max(), 2u);
  EXPECT_TRUE(queue.TryPush(1));
  EXPECT_TRUE(queue.TryPush(2));
  EXPECT_FALSE(queue.TryPush(3));
  EXPECT_EQ(queue.Size(), 2u);
  EXPECT_EQ(queue.Pop(), 1);
  EXPECT_TRUE(queue.TryPush(4));
  EXPECT_EQ(queue.Pop(), 2);
  EXPECT_EQ(queue.Pop(), 4);
}

TEST(BlockingQueueTest, PushBlocksWhileFullUntilAPop) {
  BlockingQueue<int> queue(2, "bounded");
  ASSERT_TRUE(queue.Push(1));
  ASSERT_TRUE(queue.Push(2));
  Atomic<bool> pushed(false);
  Thread producer("producer", [&]() {
    EXPECT_TRUE(queue.Push(3));
    pushed.Store(true);
  });
  SystemClock::Default()->SleepFor(kSettleNs);
  // A correct queue can never hold the third item before a pop, however slow this machine is.
  EXPECT_FALSE(pushed.Load());
  EXPECT_EQ(queue.Size(), 2u);
  EXPECT_EQ(queue.Pop(), 1);  // makes room: the producer's Push completes
  producer.Join();
  EXPECT_TRUE(pushed.Load());
  EXPECT_EQ(queue.Pop(), 2);
  EXPECT_EQ(queue.Pop(), 3);
}

TEST(BlockingQueueTest, CloseWakesABlockedPopAndRefusesPush) {
  BlockingQueue<int> queue(4, "closing");
  std::optional<int> popped = 42;
  Atomic<bool> returned(false);
  Thread consumer("consumer", [&]() {
    popped = queue.Pop();
    returned.Store(true);
  });
  SystemClock::Default()->SleepFor(kSettleNs);
  EXPECT_FALSE(returned.Load()) << "Pop on an empty open queue returned";
  queue.Close();
  consumer.Join();  // hangs here if Close did not wake the consumer
  EXPECT_EQ(popped, std::nullopt);
  EXPECT_TRUE(queue.Closed());
  EXPECT_FALSE(queue.Push(1));
  EXPECT_FALSE(queue.TryPush(2));
  EXPECT_EQ(queue.Size(), 0u);
}

TEST(BlockingQueueTest, CloseKeepsQueuedItemsPoppable) {
  BlockingQueue<int> queue(4, "draining");
  ASSERT_TRUE(queue.Push(7));
  ASSERT_TRUE(queue.Push(8));
  queue.Close();
  EXPECT_EQ(queue.Pop(), 7);
  EXPECT_EQ(queue.PopUntil(*SystemClock::Default(), kNoDeadline), 8);
  EXPECT_EQ(queue.Pop(), std::nullopt);
}

TEST(BlockingQueueTest, CloseWakesABlockedPush) {
  BlockingQueue<int> queue(1, "full");
  ASSERT_TRUE(queue.Push(1));
  std::optional<bool> push_result;
  Thread producer("producer", [&]() { push_result = queue.Push(2); });
  SystemClock::Default()->SleepFor(kSettleNs);
  queue.Close();
  producer.Join();
  ASSERT_TRUE(push_result.has_value());
  EXPECT_FALSE(*push_result);
  EXPECT_EQ(queue.Pop(), 1);
  EXPECT_EQ(queue.Pop(), std::nullopt);
}

TEST(BlockingQueueTest, DrainToHonoursItemsMax) {
  BlockingQueue<int> queue(8, "drain");
  std::vector<int> out;
  EXPECT_EQ(queue.DrainTo(out), 0u);
  EXPECT_THAT(out, IsEmpty());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(queue.Push(i));
  EXPECT_EQ(queue.DrainTo(out, 3), 3u);
  EXPECT_THAT(out, ElementsAre(0, 1, 2));
  EXPECT_EQ(queue.Size(), 2u);
  EXPECT_EQ(queue.DrainTo(out, 0), 0u);
  EXPECT_EQ(queue.DrainTo(out), 2u);
  EXPECT_THAT(out, ElementsAre(0, 1, 2, 3, 4));
  EXPECT_EQ(queue.Size(), 0u);
}

TEST(BlockingQueueTest, DrainToWakesABlockedPush) {
  BlockingQueue<int> queue(1, "drain-full");
  ASSERT_TRUE(queue.Push(1));
  Thread producer("producer", [&]() { EXPECT_TRUE(queue.Push(2)); });
  SystemClock::Default()->SleepFor(kSettleNs);
  std::vector<int> out;
  EXPECT_EQ(queue.DrainTo(out), 1u);
  producer.Join();  // hangs here if DrainTo did not wake the producer
  EXPECT_EQ(queue.Pop(), 2);
}

TEST(BlockingQueueTest, PopUntilTimesOutOnAnEmptyQueue) {
  BlockingQueue<int> queue(2, "timeout");
  SystemClock& clock = *SystemClock::Default();
  const TimeNs start_ns = clock.NowNs();
  const TimeNs deadline_ns = start_ns + kSettleNs;
  EXPECT_EQ(queue.PopUntil(clock, deadline_ns), std::nullopt);
  EXPECT_GE(clock.NowNs(), deadline_ns);  // waited at least the timeout; no upper bound
}

TEST(BlockingQueueTest, PopUntilReturnsAQueuedItemAtOnce) {
  BlockingQueue<int> queue(2, "ready");
  ASSERT_TRUE(queue.Push(5));
  // A deadline already in the past: an item that is there is still returned.
  EXPECT_EQ(queue.PopUntil(*SystemClock::Default(), 0), 5);
}

struct Versioned {
  uint64_t seq = 0;
  std::vector<uint64_t> copies;  // seq % 64 copies of `seq`: a torn value breaks the pattern
};

TEST(SharedCellTest, ReaderSeesWholeSnapshotsInVersionOrder) {
  constexpr uint64_t kPublishes = 2000;
  SharedCell<Versioned> cell(Versioned{}, "cell");
  EXPECT_EQ(cell.version(), 0u);
  EXPECT_EQ(cell.Snapshot()->seq, 0u);
  int bad_snapshots = 0;
  uint64_t reads = 0;
  Atomic<bool> reader_started(false);
  Thread reader("reader", [&]() {
    reader_started.Store(true);
    uint64_t last_seq = 0;
    for (;;) {
      const uint64_t version_before = cell.version();
      std::shared_ptr<const Versioned> snap = cell.Snapshot();
      const uint64_t version_after = cell.version();
      ++reads;
      bool whole = snap->copies.size() == snap->seq % 64;
      for (uint64_t c : snap->copies) whole = whole && c == snap->seq;
      // Publish i sets the value and the version i together, so the snapshot lies between.
      if (!whole || snap->seq < last_seq || snap->seq < version_before ||
          snap->seq > version_after) {
        ++bad_snapshots;
      }
      last_seq = snap->seq;
      if (snap->seq == kPublishes) break;
    }
  });
  while (!reader_started.Load()) Yield();  // publish while the reader reads, not before
  for (uint64_t i = 1; i <= kPublishes; ++i) {
    cell.Publish(Versioned{i, std::vector<uint64_t>(i % 64, i)});
  }
  reader.Join();
  EXPECT_EQ(bad_snapshots, 0);
  EXPECT_GE(reads, 1u);
  EXPECT_EQ(cell.version(), kPublishes);
}

TEST(AtomicTest, OperationsReturnTheDocumentedValues) {
  Atomic<int64_t> a(10, "a");
  EXPECT_EQ(a.Load(), 10);
  a.Store(20);
  EXPECT_EQ(a.Load(), 20);
  EXPECT_EQ(a.Exchange(30), 20);
  EXPECT_EQ(a.FetchAdd(5), 30);
  EXPECT_EQ(a.FetchSub(2), 35);
  EXPECT_EQ(a.Load(), 33);
  int64_t expected = 99;
  EXPECT_FALSE(a.CompareExchange(expected, 0));
  EXPECT_EQ(expected, 33);  // a failed exchange reports the current value
  EXPECT_TRUE(a.CompareExchange(expected, 40));
  EXPECT_EQ(a.Load(), 40);
}

TEST(AtomicTest, FetchAddFromFourThreadsLosesNothing) {
  constexpr int kThreads = 4;
  constexpr int kAdds = 10000;
  Atomic<int64_t> sum(0, "sum");
  std::vector<std::unique_ptr<Thread>> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.push_back(std::make_unique<Thread>("adder-" + std::to_string(i), [&]() {
      for (int n = 0; n < kAdds; ++n) sum.FetchAdd(1);
    }));
  }
  for (auto& t : threads) t->Join();
  EXPECT_EQ(sum.Load(), int64_t{kThreads} * kAdds);
}

TEST(ThreadTest, RunsItsBodyKeepsItsNameAndJoins) {
  Atomic<int> ran(0);
  Thread t("worker-thread", [&]() { ran.FetchAdd(1); });
  EXPECT_EQ(t.name(), "worker-thread");
  EXPECT_FALSE(t.joined());
  t.Join();
  EXPECT_TRUE(t.joined());
  EXPECT_EQ(ran.Load(), 1);  // Join waited for the body
}

// Records Mark calls; any other hook is a test failure (TraceMark must call nothing else).
class MarkRecorder final : public SimHooks {
 public:
  std::vector<std::string> marks;

  uint32_t Register(SimObjectState&, SimObjectKind, const char*) override { return Unexpected(); }
  SimThreadId CurrentThread() const override { return 0; }
  std::string_view ThreadName(SimThreadId) const override { return "t"; }
  void Point(SimOp, uint32_t) override { Unexpected(); }
  SimWake Block(SimWaitList*, SimOp, uint32_t, TimeNs) override {
    Unexpected();
    return SimWake::kAborting;
  }
  int WakeOne(SimWaitList&, uint32_t) override { return static_cast<int>(Unexpected()); }
  int WakeAll(SimWaitList&, uint32_t) override { return static_cast<int>(Unexpected()); }
  void NoteLockHeld(uint32_t, bool) override { Unexpected(); }
  bool SpuriousWakeup(uint32_t) override { return Unexpected() != 0; }
  SimThreadId Spawn(std::string, std::function<void()>) override {
    return static_cast<SimThreadId>(Unexpected());
  }
  void Join(SimThreadId) override { Unexpected(); }
  TimeNs NowNs() const override { return 0; }
  void Mark(std::string_view category, std::string_view name, int64_t arg) override {
    marks.push_back(std::string(category) + "/" + std::string(name) + "=" + std::to_string(arg));
  }
  [[noreturn]] void Fail(Failure failure) override {
    ADD_FAILURE() << "Fail: " << failure.Render();
    std::abort();
  }
  bool Aborting() const override { return false; }
  void EnterNoAbort() override {}
  void ExitNoAbort() override {}

 private:
  static uint32_t Unexpected() {
    ADD_FAILURE() << "unexpected SimHooks call";
    return 0;
  }
};

TEST(TraceMarkTest, IsANoOpOutsideASimulation) {
  ASSERT_EQ(CurrentSim(), nullptr);
  TraceMark("task", "0_1 RESTORING", 7);  // must neither crash nor reach any simulation
  TraceMark("task", "default arg");
  Yield();  // the OS-thread yield, also harmless

  // The contrast: with a simulation installed, the same call reaches it.
  MarkRecorder recorder;
  {
    ScopedCurrentSim scope(&recorder);
    TraceMark("task", "0_1 RESTORING", 7);
  }
  EXPECT_EQ(CurrentSim(), nullptr);
  TraceMark("task", "after scope", 1);
  EXPECT_THAT(recorder.marks, ElementsAre("task/0_1 RESTORING=7"));
}

// An address that stands for an observer: the run context only carries it, never calls it.
RuntimeObserver* FakeObserver() {
  static int stand_in = 0;
  return reinterpret_cast<RuntimeObserver*>(&stand_in);
}

TEST(RunContextTest, AnOsThreadInheritsTheObserverAndTheMutationsOfItsStarter) {
  const MutationSet planted{Mutation::kCreateBeforeClose, Mutation::kIdleWithoutWakeup};
  MarkRecorder sim;  // stands for a simulation: the thread must not see it
  RunContext seen{.sim = &sim, .observer = nullptr, .mutations = {}};
  {
    ScopedRunContext context(RunContext{.observer = FakeObserver(), .mutations = planted});
    Thread thread("inheritor", [&seen]() { seen = CurrentRunContext(); });
    thread.Join();
    EXPECT_TRUE(RS_MUTANT(kIdleWithoutWakeup));
    EXPECT_FALSE(RS_MUTANT(kEarlyTypeFlip));
  }
  EXPECT_EQ(seen.sim, nullptr);
  EXPECT_EQ(seen.observer, FakeObserver());
  EXPECT_EQ(seen.mutations.bits(), planted.bits());
  // The scope ended: this thread's context is empty again.
  EXPECT_EQ(CurrentObserver(), nullptr);
  EXPECT_TRUE(ActiveMutations().empty());
  EXPECT_FALSE(RS_MUTANT(kIdleWithoutWakeup));
}

TEST(RunContextTest, ANarrowInstallerRestoresItsChannelOnlyAndTheWholeContextRestoresAll) {
  ScopedRunContext run(RunContext{.observer = FakeObserver(), .mutations = {}});
  {
    ScopedMutations planted(MutationSet{Mutation::kEarlyTypeFlip});
    EXPECT_EQ(CurrentObserver(), FakeObserver());  // the other channels are kept
    EXPECT_TRUE(ActiveMutations().contains(Mutation::kEarlyTypeFlip));
    {
      ScopedObserver none(nullptr);
      EXPECT_EQ(CurrentObserver(), nullptr);
      EXPECT_TRUE(ActiveMutations().contains(Mutation::kEarlyTypeFlip));
    }
    EXPECT_EQ(CurrentObserver(), FakeObserver());
  }
  EXPECT_TRUE(ActiveMutations().empty());
  {
    // What an abandoned fiber leaves behind: a narrow scope that never ends. The run's whole
    // context, installed around it (as sim::RunProgram does), still restores every channel.
    ScopedRunContext inner_run(RunContext{});
    alignas(ScopedMutations) unsigned char storage[sizeof(ScopedMutations)];
    new (storage) ScopedMutations(MutationSet{Mutation::kEarlyTypeFlip});  // never destroyed
    EXPECT_TRUE(ActiveMutations().contains(Mutation::kEarlyTypeFlip));
  }
  EXPECT_TRUE(ActiveMutations().empty());
  EXPECT_EQ(CurrentObserver(), FakeObserver());
}

}  // namespace
}  // namespace restoresim
