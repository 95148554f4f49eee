// Tests for the shrinker (failure signatures are tested in failure_signature_test.cc): schedule
// metrics, the quiet fallback, and shrinking the demos' planted
// bugs and a program with scenario events: the result fails the same way, is no bigger (and
// for these bugs exactly as small as the bug allows), replays exactly, and is the same on every
// run and for any number of jobs.
#include "sim/shrink.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/sync/atomic.h"
#include "core/sync/thread.h"
#include "sim/demos/demos.h"
#include "sim/runner.h"

namespace restoresim::sim {
namespace {

using ::testing::HasSubstr;
using Kind = RunOutcome::Kind;

// ---- metrics and the quiet fallback ----

TEST(MeasureScheduleTest, CountsPreemptionsEventsAndOffQuietChoices) {
  const std::vector<uint64_t> choices = {0, 1, 1, 7, 2, 999, 3, 0};
  const std::vector<ChoiceInfo> infos = {
      {ChoiceKind::kThread, false, 1, 0},  // the only runnable thread
      {ChoiceKind::kThread, true, 2, 0},   // a preemption
      {ChoiceKind::kThread, false, 2, 1},  // keeps running
      {ChoiceKind::kData, true, 10, 0},    // a data event of 7
      {ChoiceKind::kThread, false, 2, 0},  // a free pick off round-robin
      {ChoiceKind::kSpurious, false, 1000, 999},
      {ChoiceKind::kSpurious, true, 1000, 999},  // a spurious wake-up
      {ChoiceKind::kData, false, 4, 0},
  };
  const ScheduleMetrics m = MeasureSchedule(choices, infos, 6);
  EXPECT_EQ(m.choices, 8u);
  EXPECT_EQ(m.steps, 6u);
  EXPECT_EQ(m.preemptions, 1u);
  EXPECT_EQ(m.sched_events, 1u);
  EXPECT_EQ(m.data_events, 1u);
  EXPECT_EQ(m.data_sum, 7u);
  EXPECT_EQ(m.off_quiet, 4u);  // the preemption, the data event, the free pick, the wake-up
}

TEST(QuietStrategyTest, KeepsTheCurrentThreadElseRoundRobinAndAnswersQuietly) {
  QuietStrategy s;
  const std::vector<SimThreadId> runnable = {0, 2, 3};
  EXPECT_EQ(s.PickThread(runnable, {}, 2, 1), 2u);  // runnable: keeps it
  EXPECT_EQ(s.PickThread(runnable, {}, 1, 2), 2u);  // blocked: the next after it
  EXPECT_EQ(s.PickThread(runnable, {}, 3, 3), 3u);
  EXPECT_EQ(s.PickThread({{0, 2}}, {}, 3, 4), 0u);             // wraps around
  EXPECT_EQ(s.PickThread(runnable, {}, kNoSimThread, 5), 0u);  // the start
  EXPECT_EQ(s.PickValue(1000, ChoiceKind::kSpurious), 999u);
  EXPECT_EQ(s.PickValue(5, ChoiceKind::kData), 0u);
  EXPECT_EQ(s.PickValue(3, ChoiceKind::kNotifyTarget), 0u);
}

TEST(QuietStrategyTest, SwitchesOutABusyThreadAfterTheRunLengthLimit) {
  QuietStrategy s;
  const std::vector<SimThreadId> runnable = {0, 1};
  for (uint64_t i = 0; i < QuietStrategy::kRunLengthMax; ++i) {
    ASSERT_EQ(s.PickThread(runnable, {}, 1, i + 1), 1u) << i;
  }
  EXPECT_EQ(s.PickThread(runnable, {}, 1, 0), 0u);
  EXPECT_EQ(s.PickThread(runnable, {}, 0, 0), 0u);
}

TEST(ReplayStrategyTest, SkipsPicksOfThreadsThatCannotRunWhenAsked) {
  const std::vector<SimThreadId> runnable = {0, 1};
  ReplayStrategy skipping({2, 2, 1, 0}, std::make_unique<QuietStrategy>(),
                          /*skip_unrunnable=*/true);
  EXPECT_EQ(skipping.PickThread(runnable, {}, 0, 1), 1u);  // 2 and 2 skipped
  EXPECT_TRUE(skipping.diverged());
  EXPECT_EQ(skipping.consumed(), 3u);
  EXPECT_EQ(skipping.PickThread(runnable, {}, 1, 2), 0u);
  EXPECT_EQ(skipping.PickThread(runnable, {}, 0, 3), 0u);  // the log ran out: quiet keeps 0

  ReplayStrategy answering({2, 1}, std::make_unique<QuietStrategy>());
  EXPECT_EQ(answering.PickThread(runnable, {}, 1, 1), 1u);  // 2 answered by the fallback
  EXPECT_EQ(answering.consumed(), 1u);
}

TEST(ShrunkReproPathTest, ReplacesJsonWithMinJson) {
  EXPECT_EQ(ShrunkReproPath("dir/demo.abba_deadlock-seed12.json"),
            "dir/demo.abba_deadlock-seed12.min.json");
  EXPECT_EQ(ShrunkReproPath("repro"), "repro.min.json");
}

// ---- shrinking programs ----

// A program with scenario events: it draws how many events to run, then each event's size;
// an event of size 50 or more breaks an invariant. Smallest failure: one event of size 50.
void ScenarioEvents(RunEnv& env) {
  const uint64_t events = env.Choose(10);
  int big = 0;
  Thread worker("worker", [&]() {
    for (uint64_t i = 0; i < events; ++i) {
      const uint64_t size = env.Choose(100);
      Yield();
      if (size >= 50) ++big;
    }
  });
  Thread other("other", [&]() {
    for (int i = 0; i < 5; ++i) Yield();
  });
  worker.Join();
  other.Join();
  if (big > 0) {
    env.FailInvariant("small_events", "-", fmt::format("{} big events of {}", big, events));
  }
}

// Events of four kinds, drawn in a worker; a kind-3 event after a kind-2 event breaks an
// invariant. Smallest failure: two events, of kinds 2 then 3 (data choices 2, 2, 3).
void OrderedEvents(RunEnv& env) {
  const uint64_t events = env.Choose(10);
  bool seen_two = false;
  bool broken = false;
  Thread worker("worker", [&]() {
    for (uint64_t i = 0; i < events; ++i) {
      const uint64_t kind = env.Choose(4);
      Yield();
      if (kind == 3 && seen_two) broken = true;
      if (kind == 2) seen_two = true;
    }
  });
  Thread other("other", [&]() {
    for (int i = 0; i < 5; ++i) Yield();
  });
  worker.Join();
  other.Join();
  if (broken) {
    env.FailInvariant("event_order", "-", fmt::format("kind 3 after kind 2 in {}", events));
  }
}

// Four workers each increment a shared counter 100 times with a load and a separate store: a
// random walk preempts hundreds of times; one preemption loses an update.
void ManyLostUpdates(RunEnv& env) {
  constexpr int kWorkers = 4;
  constexpr int kIncrements = 100;
  Atomic<int> counter(0, "counter");
  std::vector<std::unique_ptr<Thread>> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.push_back(std::make_unique<Thread>(fmt::format("worker-{}", w), [&]() {
      for (int i = 0; i < kIncrements; ++i) counter.Store(counter.Load() + 1);
    }));
  }
  for (auto& w : workers) w->Join();
  if (counter.Load() != kWorkers * kIncrements) {
    env.Fail(fmt::format("lost update: counter is {}", counter.Load()));
  }
}

// Two threads do a long stretch of work (a random walk preempts them hundreds of times), then a
// writer publishes in two steps and a reader must not look in between: only the last of all
// those preemptions matters.
void LateOrderViolation(RunEnv& env) {
  Atomic<int> phase(0, "phase");
  Thread writer("writer", [&]() {
    for (int i = 0; i < 200; ++i) Yield();
    phase.Store(1);
    Yield();
    phase.Store(2);
  });
  Thread reader("reader", [&]() {
    for (int i = 0; i < 200; ++i) Yield();
    while (phase.Load() == 0) Yield();
    if (phase.Load() == 1) env.Fail("reader saw a half-initialised value");
  });
  writer.Join();
  reader.Join();
}

const ProgramRegistry& Programs() {
  static const ProgramRegistry* registry = []() {
    auto* r = new ProgramRegistry();
    EXPECT_TRUE(RegisterDemoPrograms(*r).ok());
    EXPECT_TRUE(r->Add(Program{.name = "test.scenario_events",
                               .description = "draws events; a big one breaks an invariant",
                               .bug_expected = true,
                               .steps_hint = 40,
                               .body = &ScenarioEvents})
                    .ok());
    EXPECT_TRUE(r->Add(Program{.name = "test.ordered_events",
                               .description = "a kind-3 event after a kind-2 one",
                               .bug_expected = true,
                               .steps_hint = 40,
                               .body = &OrderedEvents})
                    .ok());
    EXPECT_TRUE(r->Add(Program{.name = "test.many_lost_updates",
                               .description = "four workers lose updates to a shared counter",
                               .bug_expected = true,
                               .steps_hint = 900,
                               .body = &ManyLostUpdates})
                    .ok());
    EXPECT_TRUE(r->Add(Program{.name = "test.late_order_violation",
                               .description = "a depth-2 order violation after long work",
                               .bug_expected = true,
                               .steps_hint = 450,
                               .body = &LateOrderViolation})
                    .ok());
    return r;
  }();
  return *registry;
}

TEST(ChoiceInfoTest, RecordedBesideEveryChoiceOnlyWhenRecording) {
  const Program& p = *Programs().Find("test.scenario_events");
  RunConfig config;
  config.seed = 3;
  config.strategy = *StrategySpec::Parse("random");
  const RunResult quiet = RunProgram(p, config);
  EXPECT_TRUE(quiet.choices.empty());
  EXPECT_TRUE(quiet.choice_infos.empty());
  config.record_choices = true;
  const RunResult r = RunProgram(p, config);
  ASSERT_EQ(r.choice_infos.size(), r.choices.size());
  uint64_t picks = 0;
  uint64_t draws = 0;
  for (size_t i = 0; i < r.choices.size(); ++i) {
    const ChoiceInfo& info = r.choice_infos[i];
    if (info.kind == ChoiceKind::kThread) {
      ++picks;
      EXPECT_GE(info.n, 1u);
      if (info.eventful) {
        EXPECT_NE(r.choices[i], info.quiet) << i;  // a preemption
      }
    } else if (info.kind == ChoiceKind::kData) {
      ++draws;
      EXPECT_EQ(info.eventful, r.choices[i] != 0);
      EXPECT_EQ(info.quiet, 0u);
      EXPECT_LT(r.choices[i], info.n);
    }
  }
  EXPECT_EQ(picks, r.steps);
  EXPECT_EQ(draws, 1 + r.choices[1]);  // the count, then one size per event
}

// The repro of the first failing seed, as explore writes it.
Repro FirstFailure(const Program& p, std::string_view strategy) {
  for (uint64_t seed = 0; seed < 20'000; ++seed) {
    RunConfig config;
    config.seed = seed;
    config.strategy = *StrategySpec::Parse(strategy);
    config.record_choices = true;
    RunResult r = RunProgram(p, config);
    if (r.outcome.ok()) continue;
    Repro repro;
    repro.scenario = p.name;
    repro.config = config;
    repro.config.record_choices = false;
    repro.config.replay_choices = std::move(r.choices);
    repro.outcome = std::string(OutcomeKindName(r.outcome.kind));
    repro.message = r.outcome.message;
    repro.failure = r.outcome.failure;
    repro.trace_hash = r.trace_hash;
    repro.steps = r.steps;
    return repro;
  }
  ADD_FAILURE() << "no failing seed for " << p.name;
  return Repro{};
}

ShrinkResult Shrink(const Program& p, const Repro& repro, uint32_t jobs = 1,
                    uint64_t runs_max = 2000) {
  absl::StatusOr<ShrinkResult> r =
      ShrinkRepro(p, repro, ShrinkOptions{.runs_max = runs_max, .jobs = jobs});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : ShrinkResult{};
}

struct Case {
  const char* program;
  const char* strategy;
  uint64_t preemptions_min;  // what the bug needs, at least
  uint64_t preemptions_max;  // what a good shrinker reaches
};

class ShrinkDemoTest : public ::testing::TestWithParam<Case> {};

TEST_P(ShrinkDemoTest, KeepsTheFailureWithFewerPreemptionsAndReplaysExactly) {
  const Program& p = *Programs().Find(GetParam().program);
  const Repro input = FirstFailure(p, GetParam().strategy);
  ASSERT_FALSE(input.scenario.empty());
  const ShrinkResult r = Shrink(p, input);
  std::printf("%s\n", fmt::format("{} {} seed {}: choices {} -> {}, preemptions {} -> {}, "
                                  "data events {} -> {} (sum {} -> {}), steps {} -> {}, {} runs",
                                  p.name, GetParam().strategy, input.config.seed, r.before.choices,
                                  r.after.choices, r.before.preemptions, r.after.preemptions,
                                  r.before.data_events, r.after.data_events, r.before.data_sum,
                                  r.after.data_sum, r.before.steps, r.after.steps, r.runs)
                          .c_str());
  EXPECT_TRUE(r.input_trace_hash_matched);
  EXPECT_FALSE(r.budget_exhausted);
  const RunResult original = RunProgram(p, input.config);
  EXPECT_EQ(original.trace_hash, input.trace_hash);
  EXPECT_EQ(r.signature, SignatureOf(original.outcome));
  EXPECT_NE(r.signature.kind, Kind::kOk);
  EXPECT_LE(r.after.preemptions, r.before.preemptions);
  EXPECT_LE(r.after.choices, r.before.choices);
  EXPECT_GE(r.after.preemptions, GetParam().preemptions_min);
  EXPECT_LE(r.after.preemptions, GetParam().preemptions_max);

  // The repro replays exactly, the way `restoresim replay --repro` runs it.
  RunConfig replay = r.repro.config;
  replay.record_choices = true;
  const RunResult again = RunProgram(p, replay);
  EXPECT_EQ(SignatureOf(again.outcome), r.signature);
  EXPECT_EQ(again.trace_hash, r.repro.trace_hash);
  EXPECT_EQ(again.steps, r.repro.steps);
  EXPECT_EQ(std::string(OutcomeKindName(again.outcome.kind)), r.repro.outcome);
  EXPECT_EQ(again.choices, *r.repro.config.replay_choices);
  EXPECT_FALSE(again.replay_diverged);
  EXPECT_EQ(MeasureSchedule(again.choices, again.choice_infos, again.steps).preemptions,
            r.after.preemptions);
  EXPECT_EQ(r.repro.config.seed, input.config.seed);
  EXPECT_EQ(r.repro.config.strategy, input.config.strategy);

  // Deterministic: again, and with parallel candidate runs, the same repro and run count.
  const ShrinkResult twice = Shrink(p, input);
  EXPECT_EQ(ReproToJson(twice.repro), ReproToJson(r.repro));
  EXPECT_EQ(twice.runs, r.runs);
  const ShrinkResult parallel = Shrink(p, input, /*jobs=*/3);
  EXPECT_EQ(ReproToJson(parallel.repro), ReproToJson(r.repro));
  EXPECT_EQ(parallel.runs, r.runs);
}

INSTANTIATE_TEST_SUITE_P(
    Demos, ShrinkDemoTest,
    ::testing::Values(Case{"demo.lost_update", "pct:3", 1, 1},
                      Case{"demo.lost_update", "random", 1, 1},
                      Case{"demo.abba_deadlock", "pct:3", 1, 1},
                      Case{"demo.abba_deadlock", "random", 1, 1},
                      Case{"demo.missed_notification", "random", 1, 1},
                      Case{"demo.order_violation_d2", "random", 1, 1},
                      Case{"demo.order_violation_d3", "pct:3", 2, 2},
                      Case{"test.many_lost_updates", "random", 1, 1},
                      Case{"test.many_lost_updates", "pct:3", 1, 1},
                      Case{"test.late_order_violation", "random", 1, 1},
                      // PCT starves the writer while the reader spins: a step-budget failure.
                      Case{"test.late_order_violation", "pct:2", 1, 1}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = std::string(info.param.program)
                             .substr(std::string_view(info.param.program).find('.') + 1) +
                         "_" + info.param.strategy;
      for (char& c : name) {
        if (c == ':' || c == '.') c = '_';
      }
      return name;
    });

TEST(ShrinkTest, ScenarioEventsShrinkToTheOneEventThatBreaksTheInvariant) {
  const Program& p = *Programs().Find("test.scenario_events");
  const Repro input = FirstFailure(p, "random");
  ASSERT_FALSE(input.scenario.empty());
  const ShrinkResult r = Shrink(p, input);
  EXPECT_EQ(r.signature.ToString(), "failed: [invariant:small_events]");
  EXPECT_GT(r.before.data_events, 2u);
  // One event (count 1) of size 50: the smallest failure there is.
  EXPECT_EQ(r.after.data_events, 2u);
  EXPECT_EQ(r.after.data_sum, 51u);
  EXPECT_EQ(r.after.preemptions, 0u);
  EXPECT_THAT(r.repro.message, HasSubstr("1 big events of 1"));
}

TEST(ShrinkTest, OrderedEventsShrinkToTwoEvents) {
  const Program& p = *Programs().Find("test.ordered_events");
  for (const char* strategy : {"random", "pct:3"}) {
    const Repro input = FirstFailure(p, strategy);
    ASSERT_FALSE(input.scenario.empty());
    const ShrinkResult r = Shrink(p, input);
    std::printf("%s\n", fmt::format("{} {} seed {}: data events {} -> {} (sum {} -> {}), "
                                    "preemptions {} -> {}, {} runs",
                                    p.name, strategy, input.config.seed, r.before.data_events,
                                    r.after.data_events, r.before.data_sum, r.after.data_sum,
                                    r.before.preemptions, r.after.preemptions, r.runs)
                            .c_str());
    EXPECT_EQ(r.after.data_events, 3u) << strategy;
    EXPECT_EQ(r.after.data_sum, 7u) << strategy;
    EXPECT_EQ(r.after.preemptions, 0u) << strategy;
  }
}

TEST(ShrinkTest, TheBudgetBoundsTheRuns) {
  const Program& p = *Programs().Find("demo.order_violation_d3");
  const Repro input = FirstFailure(p, "pct:3");
  const ShrinkResult none = Shrink(p, input, 1, /*runs_max=*/0);
  EXPECT_EQ(none.runs, 0u);
  EXPECT_TRUE(none.budget_exhausted);
  EXPECT_EQ(none.after.preemptions, none.before.preemptions);
  EXPECT_EQ(none.repro.trace_hash, input.trace_hash);  // the input, re-recorded
  const ShrinkResult few = Shrink(p, input, 2, /*runs_max=*/5);
  EXPECT_EQ(few.runs, 5u);
  EXPECT_TRUE(few.budget_exhausted);
  EXPECT_LE(few.after.preemptions, few.before.preemptions);
}

TEST(ShrinkTest, RejectsRunsThatDoNotFailOrDoNotReproduce) {
  const Program& p = *Programs().Find("demo.lost_update");
  Repro input = FirstFailure(p, "pct:3");

  Repro passing = input;
  passing.outcome = "ok";
  absl::StatusOr<ShrinkResult> r = ShrinkRepro(p, passing, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("passing run"));

  Repro other = input;
  other.failure.detail = "a different failure";
  r = ShrinkRepro(p, other, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("does not reproduce"));

  Repro fixed = input;  // the fixed twin never fails
  fixed.scenario = "demo.lost_update_fixed";
  fixed.config.replay_choices.reset();
  r = ShrinkRepro(*Programs().Find("demo.lost_update_fixed"), fixed, {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("gave \"ok\""));

  r = ShrinkRepro(*Programs().Find("demo.abba_deadlock"), input, {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  r = ShrinkRepro(p, input, ShrinkOptions{.jobs = 0});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ShrinkTest, ARepoWithoutChoicesIsRecordedFromItsSeed) {
  const Program& p = *Programs().Find("demo.abba_deadlock");
  Repro input = FirstFailure(p, "pct:3");
  input.config.replay_choices.reset();
  const ShrinkResult r = Shrink(p, input);
  EXPECT_TRUE(r.input_trace_hash_matched);
  EXPECT_EQ(r.signature.kind, Kind::kDeadlock);
  EXPECT_EQ(r.after.preemptions, 1u);
}

}  // namespace
}  // namespace restoresim::sim
