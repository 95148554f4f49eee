// Tests for the scheduling strategies (random walk, PCT, replay), the --strategy spec parser
// and MakeStrategy, and an end-to-end replay of a recorded schedule through the Simulation.
// POS has its own file, pos_strategy_test.cc.
#include "sim/strategy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/sync/blocking_queue.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "sim/simulation.h"

namespace restoresim::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---- StrategySpec ----

TEST(StrategySpecTest, ParsesTheDocumentedForms) {
  absl::StatusOr<StrategySpec> random = StrategySpec::Parse("random");
  ASSERT_TRUE(random.ok()) << random.status();
  EXPECT_EQ(random->kind, StrategySpec::Kind::kRandom);

  absl::StatusOr<StrategySpec> pct = StrategySpec::Parse("pct:3");
  ASSERT_TRUE(pct.ok()) << pct.status();
  EXPECT_EQ(pct->kind, StrategySpec::Kind::kPct);
  EXPECT_EQ(pct->pct_depth, 3u);
  EXPECT_EQ(pct->pct_steps, 0u);

  absl::StatusOr<StrategySpec> pct_steps = StrategySpec::Parse("pct:2:100");
  ASSERT_TRUE(pct_steps.ok()) << pct_steps.status();
  EXPECT_EQ(pct_steps->kind, StrategySpec::Kind::kPct);
  EXPECT_EQ(pct_steps->pct_depth, 2u);
  EXPECT_EQ(pct_steps->pct_steps, 100u);

  absl::StatusOr<StrategySpec> pos = StrategySpec::Parse("pos");
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_EQ(pos->kind, StrategySpec::Kind::kPos);
}

TEST(StrategySpecTest, RoundTripsThroughToString) {
  for (const char* text : {"random", "pos", "pct:3", "pct:2:100", "pct:1", "pct:64:1"}) {
    absl::StatusOr<StrategySpec> spec = StrategySpec::Parse(text);
    ASSERT_TRUE(spec.ok()) << text << ": " << spec.status();
    EXPECT_EQ(spec->ToString(), text);
    absl::StatusOr<StrategySpec> again = StrategySpec::Parse(spec->ToString());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *spec) << text;
  }
}

TEST(StrategySpecTest, RejectsMalformedSpecsNamingTheInput) {
  for (const char* text : {"", "pct:0", "pct:x", "pct:3:0", "pct:3:5:7", "dfs", "pct:", "pct:3:",
                           "pct:65", "pct:-1", "pct:3:x", "random:1", "PCT:3", " pct:3",
                           "pos:1", "pos:", "POS", "pos3"}) {
    absl::StatusOr<StrategySpec> spec = StrategySpec::Parse(text);
    ASSERT_FALSE(spec.ok()) << "'" << text << "' parsed as " << spec->ToString();
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(spec.status().message()), HasSubstr("'" + std::string(text) + "'"));
  }
}

// The grammar is "random", "pct:D" or "pct:D:K": a bare "pct" is rejected rather than given
// a default depth, so every accepted text round-trips through ToString().
TEST(StrategySpecTest, RejectsPctWithoutADepth) {
  absl::StatusOr<StrategySpec> spec = StrategySpec::Parse("pct");
  ASSERT_FALSE(spec.ok()) << "'pct' parsed as " << spec->ToString();
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(spec.status().message()), HasSubstr("'pct'"));
}

// ---- RandomWalkStrategy ----

std::vector<SimThreadId> Picks(Strategy& s, std::vector<SimThreadId> runnable, int count) {
  std::vector<SimThreadId> picks;
  for (int i = 0; i < count; ++i) picks.push_back(s.PickThread(runnable, {}, runnable[0], i + 1));
  return picks;
}

TEST(RandomWalkStrategyTest, PicksEveryRunnableThreadAndOnlyThose) {
  RandomWalkStrategy s(Prng(42));
  EXPECT_EQ(s.Spec(), "random");
  const std::vector<SimThreadId> runnable = {0, 3, 5, 7};
  std::vector<SimThreadId> picks = Picks(s, runnable, 1000);
  std::set<SimThreadId> distinct(picks.begin(), picks.end());
  EXPECT_THAT(distinct, ElementsAre(0, 3, 5, 7));
  EXPECT_THAT(Picks(s, {9}, 10), ::testing::Each(9));
  for (int i = 0; i < 100; ++i) EXPECT_LT(s.PickValue(7, ChoiceKind::kData), 7u);
  EXPECT_EQ(s.PickValue(1, ChoiceKind::kData), 0u);
}

TEST(RandomWalkStrategyTest, SameSeedSamePicks) {
  const std::vector<SimThreadId> runnable = {1, 2, 4};
  RandomWalkStrategy a(Prng(7));
  RandomWalkStrategy b(Prng(7));
  RandomWalkStrategy other(Prng(8));
  const std::vector<SimThreadId> picks_a = Picks(a, runnable, 200);
  EXPECT_EQ(picks_a, Picks(b, runnable, 200));
  EXPECT_NE(picks_a, Picks(other, runnable, 200));
  EXPECT_EQ(a.PickValue(1000, ChoiceKind::kSpurious), b.PickValue(1000, ChoiceKind::kSpurious));
}

// ---- PctStrategy ----

std::unique_ptr<PctStrategy> NewPct(uint64_t seed, uint32_t depth, uint64_t steps_estimate,
                                    SimThreadId threads) {
  auto s = std::make_unique<PctStrategy>(Prng(seed), depth, steps_estimate);
  for (SimThreadId t = 0; t < threads; ++t) s->OnSpawn(t);
  return s;
}

TEST(PctStrategyTest, WithoutChangePointsAlwaysPicksTheHighestPriority) {
  const std::vector<SimThreadId> all = {0, 1, 2, 3};
  std::set<SimThreadId> tops;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto s = NewPct(seed, /*depth=*/1, /*steps_estimate=*/10, 4);
    // The priority order, highest first, as the strategy reveals it.
    std::vector<SimThreadId> order;
    std::vector<SimThreadId> left = all;
    while (!left.empty()) {
      order.push_back(s->PickThread(left, {}, kNoSimThread, 1));
      left.erase(std::find(left.begin(), left.end(), order.back()));
    }
    EXPECT_THAT(std::set<SimThreadId>(order.begin(), order.end()), ElementsAre(0, 1, 2, 3));
    tops.insert(order[0]);
    for (uint64_t step = 1; step <= 200; ++step) {
      ASSERT_EQ(s->PickThread(all, {}, order[0], step), order[0]) << "seed " << seed;
    }
    // Any subset: its member that comes first in the order.
    EXPECT_EQ(s->PickThread(std::vector<SimThreadId>{order[2], order[3]}, {}, order[0], 201),
              order[2]);
    EXPECT_EQ(s->PickThread(std::vector<SimThreadId>{order[1], order[3]}, {}, order[3], 202),
              order[1]);
  }
  EXPECT_GT(tops.size(), 1u) << "priorities must be random, not by thread id";
}

TEST(PctStrategyTest, ChangePointLowersTheCurrentThread) {
  const std::vector<SimThreadId> all = {0, 1, 2};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    // Twins from one seed: with steps_estimate 1 the single change point is step 1.
    auto reference = NewPct(seed, /*depth=*/2, /*steps_estimate=*/1, 3);
    auto s = NewPct(seed, /*depth=*/2, /*steps_estimate=*/1, 3);
    // The change point fires without a current thread here, so nothing is lowered.
    const SimThreadId top = reference->PickThread(all, {}, kNoSimThread, 1);
    std::vector<SimThreadId> rest = all;
    rest.erase(std::find(rest.begin(), rest.end(), top));
    const SimThreadId second = reference->PickThread(rest, {}, kNoSimThread, 2);

    // With `top` current at step 1 it drops below everyone: the next in line runs.
    EXPECT_EQ(s->PickThread(all, {}, top, 1), second) << "seed " << seed;
    for (uint64_t step = 2; step <= 50; ++step) {
      ASSERT_EQ(s->PickThread(all, {}, second, step), second) << "seed " << seed;
    }
    EXPECT_EQ(s->PickThread(std::vector<SimThreadId>{top}, {}, second, 51), top);
    EXPECT_NE(s->PickThread(rest, {}, top, 52), top);
  }
}

TEST(PctStrategyTest, SpecNamesDepthAndStepEstimate) {
  EXPECT_EQ(PctStrategy(Prng(1), 2, 1).Spec(), "pct:2:1");
  EXPECT_EQ(PctStrategy(Prng(1), 3, 2000).Spec(), "pct:3:2000");
  PctStrategy s(Prng(1), 3, 10);
  for (int i = 0; i < 100; ++i) EXPECT_LT(s.PickValue(5, ChoiceKind::kNotifyTarget), 5u);
}

// ---- ReplayStrategy ----

// Answers with the highest runnable thread and the largest value, counting its calls.
class HighestStrategy final : public Strategy {
 public:
  int picks = 0;
  int values = 0;
  std::vector<SimThreadId> spawned;

  std::string Spec() const override { return "highest"; }
  void OnSpawn(SimThreadId thread) override { spawned.push_back(thread); }
  SimThreadId PickThread(std::span<const SimThreadId> runnable, std::span<const PendingOp>,
                         SimThreadId, uint64_t) override {
    ++picks;
    return runnable.back();
  }
  uint64_t PickValue(uint64_t n, ChoiceKind) override {
    ++values;
    return n - 1;
  }
};

TEST(ReplayStrategyTest, ReplaysRecordedChoicesExactly) {
  ReplayStrategy s({1, 0, 2, 7, 1}, nullptr);
  EXPECT_EQ(s.Spec(), "replay");
  const std::vector<SimThreadId> all = {0, 1, 2};
  EXPECT_EQ(s.PickThread(all, {}, kNoSimThread, 1), 1);
  EXPECT_EQ(s.PickThread(all, {}, 1, 2), 0);
  EXPECT_EQ(s.PickThread(all, {}, 0, 3), 2);
  EXPECT_EQ(s.PickValue(10, ChoiceKind::kData), 7u);
  EXPECT_EQ(s.PickThread(all, {}, 2, 4), 1);
  EXPECT_FALSE(s.diverged());
  EXPECT_EQ(s.consumed(), 5u);
  // Past the log without a fallback: round-robin after the current thread, value 0, and no
  // spurious wake-ups.
  EXPECT_EQ(s.PickThread(std::vector<SimThreadId>{1, 2}, {}, 1, 5), 2);
  EXPECT_EQ(s.PickThread(std::vector<SimThreadId>{1, 2}, {}, 2, 6), 1);
  EXPECT_EQ(s.PickValue(10, ChoiceKind::kData), 0u);
  EXPECT_EQ(s.PickValue(1000, ChoiceKind::kSpurious), 999u);
  EXPECT_FALSE(s.diverged());
}

TEST(ReplayStrategyTest, ReportsDivergenceWhenARecordedThreadIsNotRunnable) {
  ReplayStrategy s({2, 1}, nullptr);
  const std::vector<SimThreadId> two = {0, 1};
  EXPECT_EQ(s.PickThread(two, {}, 0, 1), 1);  // 2 is not runnable: round-robin instead
  EXPECT_TRUE(s.diverged());
  EXPECT_EQ(s.PickThread(two, {}, 0, 2), 1);  // the log continues
  EXPECT_EQ(s.consumed(), 2u);

  ReplayStrategy v({9}, nullptr);
  EXPECT_EQ(v.PickValue(3, ChoiceKind::kData), 0u);  // a value out of range diverges too
  EXPECT_TRUE(v.diverged());
}

TEST(ReplayStrategyTest, FallsBackAfterTheLog) {
  auto fallback = std::make_unique<HighestStrategy>();
  HighestStrategy* highest = fallback.get();
  ReplayStrategy s({0, 1}, std::move(fallback));
  s.OnSpawn(0);
  s.OnSpawn(1);
  EXPECT_THAT(highest->spawned, ElementsAre(0, 1));
  const std::vector<SimThreadId> all = {0, 1, 2};
  EXPECT_EQ(s.PickThread(all, {}, kNoSimThread, 1), 0);
  EXPECT_EQ(s.PickValue(4, ChoiceKind::kData), 1u);
  EXPECT_EQ(highest->picks + highest->values, 0) << "the log must be used first";
  EXPECT_EQ(s.PickThread(all, {}, 0, 2), 2);
  EXPECT_EQ(s.PickValue(4, ChoiceKind::kData), 3u);
  EXPECT_EQ(highest->picks, 1);
  EXPECT_EQ(highest->values, 1);
  EXPECT_FALSE(s.diverged());

  auto fallback2 = std::make_unique<HighestStrategy>();
  ReplayStrategy diverging({5}, std::move(fallback2));
  EXPECT_EQ(diverging.PickThread(all, {}, 0, 1), 2);  // diverged: the fallback answers
  EXPECT_TRUE(diverging.diverged());
}

// ---- MakeStrategy ----

TEST(MakeStrategyTest, FillsThePctStepEstimateFromTheHint) {
  StrategySpec pct = *StrategySpec::Parse("pct:2");
  EXPECT_EQ(MakeStrategy(pct, Prng(5), 500)->Spec(), "pct:2:500");
  StrategySpec pct_steps = *StrategySpec::Parse("pct:2:100");
  EXPECT_EQ(MakeStrategy(pct_steps, Prng(5), 500)->Spec(), "pct:2:100");
  StrategySpec random = *StrategySpec::Parse("random");
  EXPECT_EQ(MakeStrategy(random, Prng(5), 500)->Spec(), "random");
  EXPECT_EQ(MakeStrategy(*StrategySpec::Parse("pos"), Prng(5), 500)->Spec(), "pos");

  // The built strategy behaves like one constructed directly with the hint.
  std::unique_ptr<Strategy> made = MakeStrategy(pct, Prng(5), 500);
  PctStrategy direct(Prng(5), 2, 500);
  const std::vector<SimThreadId> all = {0, 1, 2, 3};
  for (SimThreadId t = 0; t < 4; ++t) {
    made->OnSpawn(t);
    direct.OnSpawn(t);
  }
  SimThreadId current = kNoSimThread;
  for (uint64_t step = 1; step <= 600; ++step) {
    const SimThreadId pick = made->PickThread(all, {}, current, step);
    ASSERT_EQ(pick, direct.PickThread(all, {}, current, step)) << "step " << step;
    current = pick;
  }
}

// ---- end to end: record a schedule, replay it ----

struct ProgramRun {
  uint64_t hash = 0;
  std::vector<int> order;
  std::vector<uint64_t> choices;
  bool diverged = false;
  size_t consumed = 0;
};

// Two threads append to a vector with yields in between: every schedule gives another order.
void AppendRace(std::vector<int>& order) {
  Thread a("a", [&]() {
    for (int i = 0; i < 5; ++i) {
      order.push_back(i);
      Yield();
    }
  });
  Thread b("b", [&]() {
    for (int i = 0; i < 5; ++i) {
      order.push_back(100 + i);
      Yield();
    }
  });
  a.Join();
  b.Join();
}

// A queue with two consumers: notify targets and spurious wake-ups are choices too.
void QueueRace(std::vector<int>& order) {
  BlockingQueue<int> queue(1, "q");
  auto consume = [&](int tag) {
    while (std::optional<int> item = queue.Pop()) order.push_back(tag + *item);
  };
  Thread c1("c1", [&]() { consume(100); });
  Thread c2("c2", [&]() { consume(200); });
  for (int i = 0; i < 6; ++i) RS_CHECK(queue.Push(i));
  queue.Close();
  c1.Join();
  c2.Join();
}

ProgramRun RunProgram(void (*program)(std::vector<int>&), std::unique_ptr<Strategy> strategy,
                      bool record) {
  SimOptions options;
  options.record_choices = record;
  options.spurious_wakeup_per_mille = 100;
  Simulation sim(options, std::move(strategy));
  ProgramRun run;
  const RunOutcome outcome = sim.Run([&]() { program(run.order); });
  EXPECT_TRUE(outcome.ok()) << outcome.message;
  run.hash = sim.trace().Hash();
  run.choices = sim.choices();
  if (auto* replay = dynamic_cast<ReplayStrategy*>(&sim.strategy())) {
    run.diverged = replay->diverged();
    run.consumed = replay->consumed();
  }
  return run;
}

TEST(ReplayEndToEndTest, ReplayingRecordedChoicesReproducesTheTrace) {
  for (auto program : {&AppendRace, &QueueRace}) {
    std::set<uint64_t> hashes;
    for (uint64_t seed = 0; seed < 20; ++seed) {
      ProgramRun recorded =
          RunProgram(program, std::make_unique<RandomWalkStrategy>(Prng(seed)), true);
      ASSERT_FALSE(recorded.choices.empty());
      ProgramRun replayed =
          RunProgram(program, std::make_unique<ReplayStrategy>(recorded.choices, nullptr), false);
      EXPECT_EQ(replayed.hash, recorded.hash) << "seed " << seed;
      EXPECT_EQ(replayed.order, recorded.order) << "seed " << seed;
      EXPECT_FALSE(replayed.diverged) << "seed " << seed;
      EXPECT_EQ(replayed.consumed, recorded.choices.size()) << "seed " << seed;
      hashes.insert(recorded.hash);
    }
    EXPECT_GT(hashes.size(), 5u) << "the hash must depend on the schedule";
  }
}

// Regression: past the end of its log a ReplayStrategy without a fallback answered 0 to every
// choice (so every condition wait woke spuriously) and always picked the lowest runnable thread
// (so a waiting thread starved the rest): replaying a truncated log livelocked. It now answers
// "no spurious wake-up" and picks threads round-robin.
TEST(ReplayEndToEndTest, ReplayPastTheLogWithoutFallbackFinishesTheRun) {
  SimOptions options;
  options.spurious_wakeup_per_mille = 100;
  options.steps_max = 100'000;
  Simulation sim(options, std::make_unique<ReplayStrategy>(std::vector<uint64_t>{}, nullptr));
  std::vector<int> order;
  const RunOutcome outcome = sim.Run([&]() { QueueRace(order); });
  EXPECT_TRUE(outcome.ok()) << OutcomeKindName(outcome.kind) << ": " << outcome.message;
  EXPECT_EQ(order.size(), 6u);
}

}  // namespace
}  // namespace restoresim::sim
