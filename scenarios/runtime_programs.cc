#include "scenarios/runtime_programs.h"

#include <fmt/format.h>

#include "core/runtime/runtime.h"
#include "core/util/check.h"
#include "scenarios/catalogue.h"
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
  const int32_t threads = 1 + static_cast<int32_t>(env.Choose(2));
  const int32_t restore_batch = 1 + static_cast<int32_t>(env.Choose(60));
  const TimeNs fault_phase_ns = static_cast<TimeNs>(env.Choose(10)) * 100 * kMillisecond;
  RuntimeWorld w(/*faults=*/true, kPartitions);
  std::string sizes;
  for (int32_t p = 0; p < kPartitions; ++p) {
    const int records = static_cast<int>(env.Choose(200));
    const int input = 10 + static_cast<int>(env.Choose(40));
    w.WriteChangelog(p, records);
    ProduceInput(w, env.random, p, input);
    sizes += fmt::format(" {}:{}+{}", p, records, input);
  }
  NoteParams(fmt::format("threads={} restore_batch={} fault_phase_ms={} changelog+input:{}",
                         threads, restore_batch, fault_phase_ns / kMillisecond, sizes));
  const Baselines baselines = BaselinesNow(w, kPartitions);
  const RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  if (absl::Status s = runtime.Start(); !s.ok()) env.Fail(std::string(s.message()));
  w.clock.SleepFor(fault_phase_ns);
  FinishRuntime(env, w, runtime, config, kPartitions, baselines);
}

// scenario.rebalance_storm
//   Instances a and b (one stream thread each) go through 2-6 drawn generations — each task
//   active on one, maybe standby on the other: clean moves, recycles both ways, revocations and
//   re-assignments — with input and a drawn pause (0-990 ms) after each.
//   Must hold: every oracle invariant; at the end every task runs with counts equal to the
//   reference model and the standbys caught up.
void RebalanceStorm(RunEnv& env) {
  RuntimeWorld w(/*faults=*/false, kPartitions);
  for (int32_t p = 0; p < kPartitions; ++p) {
    w.WriteChangelog(p, static_cast<int>(env.Choose(100)));
    ProduceInput(w, env.random, p, 20);
  }
  const Baselines baselines = BaselinesNow(w, kPartitions);
  Fleet fleet(w, {});
  fleet.Start();
  const int rounds = 2 + static_cast<int>(env.Choose(5));
  NoteParams(fmt::format("rounds={}", rounds));
  for (int round = 0; round < rounds; ++round) {
    RS_CHECK(fleet.Rebalance(fleet.Draw(env, kPartitions, /*standbys=*/true)).ok());
    w.clock.SleepFor(static_cast<TimeNs>(env.Choose(100)) * 10 * kMillisecond);
    for (int32_t p = 0; p < kPartitions; ++p) ProduceInput(w, env.random, p, 5);
  }
  FinishFleet(env, w, fleet, kPartitions, baselines);
}

}  // namespace

absl::Status AddAll(sim::ProgramRegistry& registry, std::vector<sim::Program> programs) {
  for (sim::Program& program : programs) {
    if (absl::Status s = registry.Add(std::move(program)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status RegisterRuntimePrograms(sim::ProgramRegistry& registry) {
  absl::Status s = AddAll(
      registry,
      {
          sim::Program{.name = "scenario.restore_then_process",
                       .description = "1-2 stream threads restore and process under broker "
                                      "faults, healed after a drawn phase",
                       .steps_hint = 10'000,
                       .steps_max = 2'000'000,
                       .body = RestoreThenProcess},
          sim::Program{.name = "scenario.rebalance_storm",
                       .description = "two stream threads through seed-drawn clean rebalances "
                                      "and recycles",
                       .steps_hint = 13'000,
                       .steps_max = 2'000'000,
                       .body = RebalanceStorm},
      });
  for (auto add : {RegisterRecycleScenarios, RegisterReviveScenarios, RegisterRebalanceScenarios,
                   RegisterLifecycleScenarios, RegisterCrashScenarios, RegisterFaultScenarios,
                   RegisterFailureScenarios,
                   RegisterSwarmScenario, RegisterCorruptionScenarios, RegisterWindowScenarios,
                   RegisterCracScenarios, RegisterCracCloneScenarios, RegisterPauseScenarios,
                   RegisterBugScenarios, RegisterAssignorScenarios}) {
    if (s.ok()) s = add(registry);
  }
  return s;
}

}  // namespace restoresim::scenarios
