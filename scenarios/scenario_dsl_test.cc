// The scenario DSL: draws consume the seed exactly as the hand-written env.Choose calls they
// replace (same answers, same recorded choices), the params line is built in draw order, and
// the catalogue registers itself.
#include "scenarios/scenario_dsl.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenarios/runtime_programs.h"
#include "sim/runner.h"
#include "sim/simulation.h"
#include "sim/trace.h"

namespace restoresim::scenarios {
namespace {

enum class Colour : uint64_t { kRed = 0, kGreen = 1, kBlue = 2 };

struct Drawn {
  std::vector<int64_t> values;
  std::string params;
};

// The same draws twice: as the catalogue wrote them before the DSL, and through Draws.
void HandWritten(sim::RunEnv& env, Drawn& out) {
  out.values.push_back(1 + static_cast<int32_t>(env.Choose(3)));
  out.values.push_back(20 + static_cast<int>(env.Choose(80)));
  out.values.push_back(static_cast<TimeNs>(env.Choose(15)) * kMillisecond);
  out.values.push_back((1 + static_cast<TimeNs>(env.Choose(10))) * 100 * kMillisecond);
  out.values.push_back(env.Choose(2) == 1);
  out.values.push_back(static_cast<int64_t>(env.Choose(3)));  // an enum
  out.values.push_back(static_cast<int64_t>(env.Choose(3)));  // a label
  out.values.push_back(env.Choose(4) == 0);
  out.values.push_back(7 + static_cast<int64_t>(env.Choose(1)));  // a one-value range
}

void WithDraws(sim::RunEnv& env, Drawn& out) {
  Draws draw(env);
  out.values.push_back(draw.Int<int32_t>("partitions", 1, 3));
  out.values.push_back(draw.Int("records", 20, 99));
  out.values.push_back(draw.Ms("swap_after_ms", 0, 14));
  out.values.push_back(draw.Ms("fault_phase_ms", 100, 1000, 100));
  out.values.push_back(draw.Bool("standbys"));
  out.values.push_back(static_cast<int64_t>(draw.Enum<Colour>("colour", 3)));
  draw.Note("|");
  out.values.push_back(static_cast<int64_t>(draw.Pick("who", {"a and b", "a", "b"})));
  out.values.push_back(draw.OneIn(4));
  out.values.push_back(draw.Fixed("seven", draw.Int<int64_t>(7, 7)));
  out.params = draw.Params();
  draw.NoteParams();
  draw.NoteParams();  // once only
}

sim::RunResult RunDraws(void (*body)(sim::RunEnv&, Drawn&), Drawn& out, uint64_t seed) {
  sim::Program program{.name = "test.draws",
                       .body = [body, &out](sim::RunEnv& env) { body(env, out); }};
  sim::RunConfig config;
  config.seed = seed;
  config.record_choices = true;
  config.trace_mode = sim::TraceMode::kFull;
  return sim::RunProgram(program, config);
}

TEST(DrawsTest, ConsumeTheSeedAsTheHandWrittenChooseCalls) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Drawn hand;
    Drawn dsl;
    const sim::RunResult a = RunDraws(HandWritten, hand, seed);
    const sim::RunResult b = RunDraws(WithDraws, dsl, seed);
    ASSERT_TRUE(a.outcome.ok()) << a.outcome.message;
    ASSERT_TRUE(b.outcome.ok()) << b.outcome.message;
    EXPECT_EQ(hand.values, dsl.values) << "seed " << seed;
    EXPECT_EQ(a.choices, b.choices) << "seed " << seed;
  }
}

TEST(DrawsTest, TheParamsLineNamesEachDrawInOrder) {
  Drawn dsl;
  const sim::RunResult r = RunDraws(WithDraws, dsl, 3);
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  const std::vector<int64_t>& v = dsl.values;
  const char* const kWho[] = {"a and b", "a", "b"};
  EXPECT_EQ(dsl.params,
            fmt::format("partitions={} records={} swap_after_ms={} fault_phase_ms={} "
                        "standbys={} colour={} | who={} seven=7",
                        v[0], v[1], v[2] / kMillisecond, v[3] / kMillisecond, v[4] == 1, v[5],
                        kWho[v[6]]));
  // Written once, as the "params" mark.
  int params_marks = 0;
  const sim::Trace& trace = r.simulation->trace();
  for (const sim::TraceEvent& e : trace.events()) {
    if (e.kind == sim::TraceKind::kMark && trace.MarkText(e.object) == "params/" + dsl.params) {
      ++params_marks;
    }
  }
  EXPECT_EQ(params_marks, 1);
}

TEST(DrawsTest, PhasesNoteTheParamsBeforeTheFirstStep) {
  std::vector<std::string> seen;
  sim::Program program{.name = "test.phases", .body = [&seen](sim::RunEnv& env) {
                         Draws draw(env);
                         draw.Int("n", 0, 9);
                         Phases phases(draw);
                         phases.Run("setup", [&] {
                           seen.push_back(std::string(phases.current()));
                           seen.push_back(draw.noted() ? "noted" : "not noted");
                         });
                         phases.Run("tail", [&] { seen.push_back(std::string(phases.current())); });
                       }};
  const sim::RunResult r = sim::RunProgram(program, sim::RunConfig{.seed = 1});
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_THAT(seen, ::testing::ElementsAre("setup", "noted", "tail"));
}

// Every scenario a catalogue file defines registers itself (the library is linked whole): the
// registry holds exactly the Catalogue()'s programs under "scenario.".
TEST(CatalogueRegistrationTest, EveryRegisteredScenarioComesFromTheCatalogue) {
  sim::ProgramRegistry registry;
  ASSERT_TRUE(RegisterRuntimePrograms(registry).ok());
  std::vector<std::string> from_catalogue;
  for (const sim::Program& p : Catalogue()) from_catalogue.push_back(p.name);
  std::vector<std::string> registered;
  for (const sim::Program* p : registry.All()) {
    if (p->name.starts_with("scenario.")) registered.push_back(p->name);
  }
  EXPECT_THAT(registered, ::testing::UnorderedElementsAreArray(from_catalogue));
  // One per catalogue file at least: a file dropped by the linker loses its scenarios.
  for (const char* name :
       {"scenario.swarm", "scenario.crash_restart_with_state_dir",
        "scenario.checkpoint_differential", "scenario.standbys_placed_by_assignor",
        "scenario.pause_resume_during_restoration_and_recycle",
        "scenario.task_timeout_mid_rebalance", "scenario.rebalance_storm"}) {
    EXPECT_NE(registry.Find(name), nullptr) << name;
  }
}

}  // namespace
}  // namespace restoresim::scenarios
