#include "scenarios/runtime_programs.h"

#include <fmt/format.h>

#include "core/runtime/runtime.h"
#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

constexpr int32_t kPartitions = 4;

// scenario.restore_then_process
//   A Runtime of 1-2 stream threads restores seed-sized changelogs (0-199 records per
//   partition) in seed-sized batches and processes seed-sized input, under the broker's
//   Moderate fault profile for a drawn phase; then the faults are healed.
//   Must hold: every oracle invariant; after the heal every task runs and the counts equal the
//   reference model.
void RestoreThenProcess(RunEnv& env) {
  Draws draw(env);
  const int32_t threads = draw.Int<int32_t>("threads", 1, 2);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 1, 60);
  const TimeNs fault_phase_ns = draw.Ms("fault_phase_ms", 0, 900, 100);
  RuntimeWorld w(/*faults=*/true, kPartitions);
  std::string sizes = "changelog+input:";
  for (int32_t p = 0; p < kPartitions; ++p) {
    const int records = draw.Int(0, 199);
    const int input = draw.Int(10, 49);
    w.WriteChangelog(p, records);
    ProduceInput(w, env.random, p, input);
    sizes += fmt::format(" {}:{}+{}", p, records, input);
  }
  draw.Note(sizes);
  draw.NoteParams();
  const Baselines baselines = BaselinesNow(w, kPartitions);
  const RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  if (absl::Status s = runtime.Start(); !s.ok()) env.Fail(std::string(s.message()));
  w.clock.SleepFor(fault_phase_ns);
  FinishRuntime(env, w, runtime, config, kPartitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.restore_then_process",
                     .description = "1-2 stream threads restore and process under broker "
                                    "faults, healed after a drawn phase",
                     .steps_hint = 10'000,
                     .body = RestoreThenProcess});

// scenario.rebalance_storm
//   Instances a and b (one stream thread each) go through 2-6 drawn generations — each task
//   active on one, maybe standby on the other: clean moves, recycles both ways, revocations and
//   re-assignments — with input and a drawn pause (0-990 ms) after each.
//   Must hold: every oracle invariant; at the end every task runs with counts equal to the
//   reference model and the standbys caught up.
void RebalanceStorm(RunEnv& env) {
  Draws draw(env);
  RuntimeWorld w(/*faults=*/false, kPartitions);
  for (int32_t p = 0; p < kPartitions; ++p) {
    w.WriteChangelog(p, draw.Int(0, 99));
    ProduceInput(w, env.random, p, 20);
  }
  const Baselines baselines = BaselinesNow(w, kPartitions);
  Fleet fleet(w, {});
  fleet.Start();
  const int rounds = draw.Int("rounds", 2, 6);
  draw.NoteParams();
  for (int round = 0; round < rounds; ++round) {
    RS_CHECK(fleet.Rebalance(fleet.Draw(env, kPartitions, /*standbys=*/true)).ok());
    w.clock.SleepFor(draw.Ms(0, 990, 10));
    for (int32_t p = 0; p < kPartitions; ++p) ProduceInput(w, env.random, p, 5);
  }
  FinishFleet(env, w, fleet, kPartitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.rebalance_storm",
                     .description = "two stream threads through seed-drawn clean rebalances "
                                    "and recycles",
                     .steps_hint = 13'000,
                     .body = RebalanceStorm});

}  // namespace

absl::Status RegisterRuntimePrograms(sim::ProgramRegistry& registry) {
  for (const sim::Program& program : Catalogue()) {
    if (absl::Status s = registry.Add(program); !s.ok()) return s;
  }
  // Last: a bug program runs a scenario registered above.
  return RegisterBugScenarios(registry);
}

}  // namespace restoresim::scenarios
