// Tests for POS (PosStrategy): which pending operations race (PendingOpAt, Races), the rule
// that a pick re-draws exactly the picked thread's priority and those of the pending operations
// racing with it, the preference for operations that race with nothing, what the Simulation
// tells a strategy each thread is about to do, determinism, and exact replays of POS runs
// (thread picks and data choices) from their recorded answers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "core/sync/atomic.h"
#include "core/sync/mutex.h"
#include "core/sync/thread.h"
#include "sim/demos/demos.h"
#include "sim/runner.h"
#include "sim/simulation.h"
#include "sim/strategy.h"

namespace restoresim::sim {

void PrintTo(const PendingOp& op, std::ostream* os) {
  static constexpr const char* kAccess[] = {"none", "read", "write"};
  *os << SimOpName(op.op) << " #" << op.object << " (" << kAccess[static_cast<int>(op.access)]
      << ")";
}

namespace {

using ::testing::ElementsAre;

PendingOp Write(uint32_t object) { return PendingOpAt(SimOp::kMutexLock, object, false); }
PendingOp Read(uint32_t object) { return PendingOpAt(SimOp::kAtomic, object, true); }
PendingOp Free() { return PendingOpAt(SimOp::kYield, 0, false); }

// ---- which operations race ----

TEST(PendingOpTest, ClassifiesSchedulingPoints) {
  EXPECT_EQ(PendingOpAt(SimOp::kAtomic, 3, /*read_only=*/true).access, Access::kRead);
  EXPECT_EQ(PendingOpAt(SimOp::kAtomic, 3, /*read_only=*/false).access, Access::kWrite);
  for (SimOp op : {SimOp::kMutexLock, SimOp::kMutexUnlock, SimOp::kCondWait,
                   SimOp::kCondNotify, SimOp::kTransport}) {
    EXPECT_EQ(PendingOpAt(op, 3, false).access, Access::kWrite) << SimOpName(op);
  }
  // No object, or an object that is a thread id (spawn, join): never races.
  for (SimOp op : {SimOp::kYield, SimOp::kSpawn, SimOp::kJoin, SimOp::kSleep}) {
    EXPECT_EQ(PendingOpAt(op, 3, false).access, Access::kNone) << SimOpName(op);
  }
  EXPECT_EQ(PendingOpAt(SimOp::kAtomic, 0, false).access, Access::kNone);
  EXPECT_EQ(PendingOp{}.access, Access::kNone) << "a thread's start";
  const PendingOp lock = PendingOpAt(SimOp::kMutexLock, 7, false);
  EXPECT_EQ(lock.op, SimOp::kMutexLock);
  EXPECT_EQ(lock.object, 7u);
}

TEST(RacesTest, SameObjectAndAtLeastOneWrite) {
  EXPECT_TRUE(Races(Write(1), Write(1)));
  EXPECT_TRUE(Races(Write(1), Read(1)));
  EXPECT_TRUE(Races(Read(1), Write(1)));
  EXPECT_FALSE(Races(Read(1), Read(1)));
  EXPECT_FALSE(Races(Write(1), Write(2)));
  EXPECT_FALSE(Races(Free(), Free()));
  // Spawn and join name thread ids, which may equal an object id: still no race.
  EXPECT_FALSE(Races(PendingOpAt(SimOp::kJoin, 1, false), Write(1)));
  EXPECT_FALSE(Races(PendingOpAt(SimOp::kSpawn, 1, false), PendingOpAt(SimOp::kJoin, 1, false)));
}

// ---- the race rule ----

std::vector<uint64_t> Priorities(const PosStrategy& s, SimThreadId threads) {
  std::vector<uint64_t> out;
  for (SimThreadId t = 0; t < threads; ++t) out.push_back(s.priority(t));
  return out;
}

// Threads 0 and 1 write object 1, 2 and 3 read object 2, 4 reads object 1 and 5 writes
// object 3. Whoever runs, its own priority and exactly those of the operations racing with
// its operation are drawn again; every other thread keeps its priority.
TEST(PosStrategyTest, RedrawsThePickedAndTheRacingPrioritiesOnly) {
  const std::vector<PendingOp> pending = {Write(1), Write(1), Read(2), Read(2), Read(1), Write(3)};
  const std::vector<SimThreadId> all = {0, 1, 2, 3, 4, 5};
  std::set<SimThreadId> picked;
  size_t redrawn_racing = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    PosStrategy s{Prng(seed)};
    for (SimThreadId t = 0; t < all.size(); ++t) s.OnSpawn(t);
    for (int round = 0; round < 5; ++round) {
      const std::vector<uint64_t> before = Priorities(s, 6);
      const SimThreadId next = s.PickThread(all, pending, kNoSimThread, round + 1);
      // The highest priority runs (nothing here is free of races).
      for (SimThreadId t : all) ASSERT_GE(before[next], before[t]) << "seed " << seed;
      picked.insert(next);
      const std::vector<uint64_t> after = Priorities(s, 6);
      for (SimThreadId t : all) {
        if (t == next || Races(pending[t], pending[next])) {
          EXPECT_NE(after[t], before[t]) << "seed " << seed << " thread " << t;
          if (t != next) ++redrawn_racing;
        } else {
          EXPECT_EQ(after[t], before[t]) << "seed " << seed << " thread " << t;
        }
      }
    }
  }
  EXPECT_THAT(picked, ElementsAre(0, 1, 2, 3, 4, 5)) << "priorities must be random";
  EXPECT_GT(redrawn_racing, 100u);
}

// One concrete case, spelled out: thread 0 runs its write of object 1; thread 1's write and
// thread 2's read of the same object race with it and are drawn again; thread 3's read of
// object 2 does not and keeps its priority.
TEST(PosStrategyTest, ARacingPendingOperationIsRedrawnAndAnIndependentOneIsNot) {
  const std::vector<PendingOp> pending = {Write(1), Write(1), Read(1), Read(2)};
  int checked = 0;
  for (uint64_t seed = 0; seed < 100 && checked < 5; ++seed) {
    PosStrategy s{Prng(seed)};
    for (SimThreadId t = 0; t < 4; ++t) s.OnSpawn(t);
    const std::vector<uint64_t> before = Priorities(s, 4);
    // Only thread 0 runnable-and-highest cases are this test's; others are covered above.
    if (before[0] < before[1] || before[0] < before[2] || before[0] < before[3]) continue;
    ASSERT_EQ(s.PickThread(std::vector<SimThreadId>{0, 1, 2, 3}, pending, 0, 1), 0);
    const std::vector<uint64_t> after = Priorities(s, 4);
    EXPECT_NE(after[0], before[0]);
    EXPECT_NE(after[1], before[1]);
    EXPECT_NE(after[2], before[2]);
    EXPECT_EQ(after[3], before[3]);
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

// A blocked thread's operation is not pending: it keeps its priority whatever runs.
TEST(PosStrategyTest, OnlyRunnableThreadsAreRedrawn) {
  const std::vector<PendingOp> pending = {Write(1), Write(1)};
  PosStrategy s{Prng(3)};
  s.OnSpawn(0);
  s.OnSpawn(1);
  const uint64_t blocked = s.priority(1);
  for (uint64_t step = 1; step <= 20; ++step) {
    ASSERT_EQ(s.PickThread(std::vector<SimThreadId>{0}, pending, 0, step), 0);
  }
  EXPECT_EQ(s.priority(1), blocked);
}

// As in Fray: an operation that races with nothing runs before any that may race, whatever the
// priorities, and running it re-draws nobody else.
TEST(PosStrategyTest, RunsOperationsThatRaceWithNothingFirst) {
  const std::vector<PendingOp> pending = {Write(1), Free(), Write(1), Free()};
  const std::vector<SimThreadId> all = {0, 1, 2, 3};
  std::set<SimThreadId> picked;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    PosStrategy s{Prng(seed)};
    for (SimThreadId t = 0; t < 4; ++t) s.OnSpawn(t);
    const std::vector<uint64_t> before = Priorities(s, 4);
    const SimThreadId next = s.PickThread(all, pending, kNoSimThread, 1);
    ASSERT_TRUE(next == 1 || next == 3) << "seed " << seed;
    EXPECT_EQ(next, before[1] >= before[3] ? 1 : 3) << "the higher of the two";
    picked.insert(next);
    const std::vector<uint64_t> after = Priorities(s, 4);
    EXPECT_EQ(after[0], before[0]);
    EXPECT_EQ(after[2], before[2]);
    EXPECT_EQ(after[next == 1 ? 3 : 1], before[next == 1 ? 3 : 1]);
    EXPECT_NE(after[next], before[next]);
  }
  EXPECT_THAT(picked, ElementsAre(1, 3));
}

TEST(PosStrategyTest, SameSeedSamePicks) {
  const std::vector<PendingOp> pending = {Write(1), Read(1), Write(2), Read(2)};
  const std::vector<SimThreadId> all = {0, 1, 2, 3};
  auto picks = [&](uint64_t seed) {
    PosStrategy s{Prng(seed)};
    for (SimThreadId t = 0; t < 4; ++t) s.OnSpawn(t);
    std::vector<SimThreadId> out;
    for (uint64_t step = 1; step <= 200; ++step) {
      out.push_back(s.PickThread(all, pending, out.empty() ? kNoSimThread : out.back(), step));
    }
    out.push_back(static_cast<SimThreadId>(s.PickValue(1000, ChoiceKind::kData)));
    return out;
  };
  EXPECT_EQ(picks(7), picks(7));
  EXPECT_NE(picks(7), picks(8));
  EXPECT_EQ(PosStrategy(Prng(1)).Spec(), "pos");
}

// A replay's fallback may meet threads it never saw spawn: they get a priority on first sight.
TEST(PosStrategyTest, AThreadItNeverSawSpawnGetsAPriority) {
  PosStrategy s{Prng(5)};
  const std::vector<PendingOp> pending = {Free(), Write(1), Write(1)};
  const SimThreadId next = s.PickThread(std::vector<SimThreadId>{1, 2}, pending, kNoSimThread, 1);
  EXPECT_TRUE(next == 1 || next == 2);
  EXPECT_NE(s.priority(1), s.priority(2));
}

// ---- what the Simulation tells the strategy ----

// Picks the newest runnable thread and records, at every decision, what each runnable thread
// is about to do.
class RecordingStrategy final : public Strategy {
 public:
  std::vector<PendingOp> picked;  // the picked thread's pending operation, per decision
  std::vector<SimThreadId> picked_thread;

  std::string Spec() const override { return "recording"; }
  bool UsesPendingOps() const override { return true; }
  SimThreadId PickThread(std::span<const SimThreadId> runnable,
                         std::span<const PendingOp> pending, SimThreadId, uint64_t) override {
    const SimThreadId next = runnable.back();
    EXPECT_LT(next, pending.size());
    picked.push_back(pending[next]);
    picked_thread.push_back(next);
    return next;
  }
  uint64_t PickValue(uint64_t, ChoiceKind) override { return 0; }
};

TEST(SimulationPendingOpTest, EachThreadIsReportedAtTheOperationItIsSuspendedAt) {
  auto owned = std::make_unique<RecordingStrategy>();
  RecordingStrategy* recording = owned.get();
  Simulation sim(SimOptions{}, std::move(owned));
  const RunOutcome outcome = sim.Run([]() {
    Atomic<int> value(0, "value");
    Mutex mu("mu");
    Thread worker("worker", [&]() {
      (void)value.Load();
      value.Store(1);
      {
        MutexLock lock(mu);
      }
      Yield();
    });
    worker.Join();
  });
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  auto id_of = [&](const char* name) {
    for (size_t i = 0; i < sim.objects().size(); ++i) {
      if (sim.objects()[i].name != nullptr && std::string(sim.objects()[i].name) == name) {
        return static_cast<uint32_t>(i + 1);
      }
    }
    ADD_FAILURE() << "no object " << name;
    return 0u;
  };
  const uint32_t value = id_of("value");
  const uint32_t mu = id_of("mu");
  std::vector<PendingOp> worker_ops;
  for (size_t i = 0; i < recording->picked.size(); ++i) {
    if (recording->picked_thread[i] == 1) worker_ops.push_back(recording->picked[i]);
  }
  EXPECT_THAT(worker_ops,
              ElementsAre(PendingOp{},  // its start
                          PendingOp{SimOp::kAtomic, value, Access::kRead},
                          PendingOp{SimOp::kAtomic, value, Access::kWrite},
                          PendingOp{SimOp::kMutexLock, mu, Access::kWrite},
                          PendingOp{SimOp::kMutexUnlock, mu, Access::kWrite},
                          PendingOp{SimOp::kYield, 0, Access::kNone}));
  // main: its start, the spawn of thread 1 and the join of it (both name a thread, not an
  // object: never racing).
  std::vector<PendingOp> main_ops;
  for (size_t i = 0; i < recording->picked.size(); ++i) {
    if (recording->picked_thread[i] == 0) main_ops.push_back(recording->picked[i]);
  }
  EXPECT_THAT(main_ops, ElementsAre(PendingOp{}, PendingOp{SimOp::kSpawn, 1, Access::kNone},
                                    PendingOp{SimOp::kJoin, 1, Access::kNone}));
}

// A strategy that does not ask for pending operations gets none (the simulation then does not
// keep them: random and PCT pay nothing for POS); a replay asks for them when its fallback does.
class IgnoringStrategy final : public Strategy {
 public:
  std::string Spec() const override { return "ignoring"; }
  SimThreadId PickThread(std::span<const SimThreadId> runnable,
                         std::span<const PendingOp> pending, SimThreadId, uint64_t) override {
    EXPECT_TRUE(pending.empty());
    return runnable[0];
  }
  uint64_t PickValue(uint64_t, ChoiceKind) override { return 0; }
};

TEST(SimulationPendingOpTest, OnlyAStrategyThatUsesThemGetsPendingOperations) {
  Simulation sim(SimOptions{}, std::make_unique<IgnoringStrategy>());
  const RunOutcome outcome = sim.Run([]() {
    Thread worker("worker", []() { Yield(); });
    worker.Join();
  });
  EXPECT_TRUE(outcome.ok()) << outcome.message;
  EXPECT_FALSE(RandomWalkStrategy(Prng(1)).UsesPendingOps());
  EXPECT_FALSE(PctStrategy(Prng(1), 3, 10).UsesPendingOps());
  EXPECT_FALSE(QuietStrategy().UsesPendingOps());
  EXPECT_TRUE(PosStrategy(Prng(1)).UsesPendingOps());
  EXPECT_TRUE(ReplayStrategy({}, std::make_unique<PosStrategy>(Prng(1))).UsesPendingOps());
  EXPECT_FALSE(ReplayStrategy({}, std::make_unique<QuietStrategy>()).UsesPendingOps());
  EXPECT_FALSE(ReplayStrategy({}, nullptr).UsesPendingOps());
}

// ---- determinism and replay through RunProgram ----

const ProgramRegistry& Demos() {
  static const ProgramRegistry* registry = []() {
    auto* r = new ProgramRegistry();
    EXPECT_TRUE(RegisterDemoPrograms(*r).ok());
    return r;
  }();
  return *registry;
}

// Two workers race on a counter and on a mutex, and draw data choices between their steps:
// thread picks and data answers both come from the POS strategy.
Program RacingWithData() {
  return Program{.name = "test.pos_racing_with_data",
                 .steps_hint = 100,
                 .body = [](RunEnv& env) {
                   Atomic<int> counter(0, "counter");
                   Mutex mu("mu");
                   auto work = [&]() {
                     for (int i = 0; i < 4; ++i) {
                       const int seen = counter.Load();
                       counter.Store(seen + static_cast<int>(env.Choose(5)));
                       MutexLock lock(mu);
                       if (env.Choose(3) == 2) Yield();
                     }
                   };
                   Thread a("a", work);
                   Thread b("b", work);
                   a.Join();
                   b.Join();
                 }};
}

TEST(PosRunTest, SameSeedSameTraceAndSchedulesDependOnTheSeed) {
  std::vector<const Program*> programs = Demos().All();
  const Program racing = RacingWithData();
  programs.push_back(&racing);
  for (const Program* p : programs) {
    std::set<uint64_t> hashes;
    for (uint64_t seed = 0; seed < 30; ++seed) {
      RunConfig config;
      config.seed = seed;
      config.strategy = *StrategySpec::Parse("pos");
      const RunResult a = RunProgram(*p, config);
      const RunResult b = RunProgram(*p, config);
      ASSERT_EQ(a.trace_hash, b.trace_hash) << p->name << " seed " << seed;
      EXPECT_EQ(a.outcome.message, b.outcome.message);
      EXPECT_EQ(a.strategy.ToString(), "pos");
      hashes.insert(a.trace_hash);
    }
    EXPECT_GT(hashes.size(), 3u) << p->name;
  }
}

TEST(PosRunTest, RecordedAnswersReplayTheRunExactly) {
  std::vector<const Program*> programs = Demos().All();
  const Program racing = RacingWithData();
  programs.push_back(&racing);
  for (const Program* p : programs) {
    for (uint64_t seed = 0; seed < 30; ++seed) {
      RunConfig config;
      config.seed = seed;
      config.strategy = *StrategySpec::Parse("pos");
      config.record_choices = true;
      const RunResult recorded = RunProgram(*p, config);
      ASSERT_FALSE(recorded.choices.empty());
      config.record_choices = false;
      config.replay_choices = recorded.choices;
      // A different seed too: the recorded answers alone decide the run.
      for (uint64_t replay_seed : {seed, seed + 1000}) {
        config.seed = replay_seed;
        const RunResult replayed = RunProgram(*p, config);
        EXPECT_EQ(replayed.trace_hash, recorded.trace_hash) << p->name << " seed " << seed;
        EXPECT_EQ(replayed.outcome.kind, recorded.outcome.kind);
        EXPECT_FALSE(replayed.replay_diverged) << p->name << " seed " << seed;
      }
    }
  }
}

}  // namespace
}  // namespace restoresim::sim
