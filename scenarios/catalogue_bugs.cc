// Planted bugs (core/runtime/planted_bugs.h): the runtime with one deliberate departure from
// the correct design, in a scenario built to expose it. A sweep succeeds when it finds the bug
// (bug_expected); catalogue_test checks which invariant names it.
#include <fmt/format.h>

#include "core/util/check.h"
#include "scenarios/catalogue.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

constexpr size_t kA = 0;
constexpr size_t kB = 1;

// Instances a and b with the planted bug swap their tasks' roles `swaps` times: each swap
// recycles a's running actives to standbys and b's standbys to actives (or back), with input
// between the swaps.
void SwapRoles(RunEnv& env, const PlantedBugs& bugs) {
  const int32_t partitions = 1 + static_cast<int32_t>(env.Choose(3));
  const int records = static_cast<int>(env.Choose(30));
  const int swaps = 1 + static_cast<int>(env.Choose(3));
  NoteParams(fmt::format("partitions={} records={} swaps={}", partitions, records, swaps));
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, 10);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  Fleet fleet(w, {.restore_max_poll_records = 10, .bugs = bugs});
  fleet.Start();
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kA, partitions, /*standbys=*/true)).ok());
  for (int i = 0; i < swaps; ++i) {
    w.clock.SleepFor((1 + static_cast<TimeNs>(env.Choose(10))) * 20 * kMillisecond);
    RS_CHECK(fleet.Rebalance(fleet.AllOn(i % 2 == 0 ? kB : kA, partitions, true)).ok());
    for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, 10);
  }
  FinishFleet(env, w, fleet, partitions, baselines);
}

// bug.create_before_close
//   The restore thread applies a round's CREATE items before its CLOSE items. Recycling a
//   running active to a standby sends the old incarnation's CLOSE and the new one's CREATE in
//   one round; the old incarnation still has its (completed) changelog registered, so the new
//   one registers it a second time.
//   Expected: "[invariant:registration] ... changelog ... registered twice".
void CreateBeforeClose(RunEnv& env) { SwapRoles(env, PlantedBugs{.create_before_close = true}); }

// bug.forget_changelogs_on_close
//   Closing (or recycling) a running task sends its CLOSE without the changelogs captured
//   before its stores were cleared. Task moves, revocations and recycles of running tasks
//   between a and b.
//   Expected: the restore thread never unregisters them, and the oracle fails the run when
//   the CLOSE is applied ("[invariant:registration] ... still registered ... after its CLOSE
//   was applied"; docs/SCENARIOS.md has what the sweep shows).
void ForgetChangelogsOnClose(RunEnv& env) {
  SwapRoles(env, PlantedBugs{.forget_changelogs_on_close = true});
}

}  // namespace

absl::Status RegisterBugScenarios(sim::ProgramRegistry& registry) {
  return AddAll(
      registry,
      {
          sim::Program{.name = "bug.create_before_close",
                       .description = "planted: the restore thread applies CREATEs before "
                                      "CLOSEs of a round",
                       .bug_expected = true,
                       .steps_hint = 2'000,
                       .steps_max = 2'000'000,
                       .body = CreateBeforeClose},
          sim::Program{.name = "bug.forget_changelogs_on_close",
                       .description = "planted: a running task's CLOSE forgets the changelogs "
                                      "captured before its stores were cleared",
                       .bug_expected = true,
                       .steps_hint = 2'000,
                       .steps_max = 2'000'000,
                       .body = ForgetChangelogsOnClose},
      });
}

}  // namespace restoresim::scenarios
