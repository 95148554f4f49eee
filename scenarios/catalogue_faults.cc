// Broker faults while the runtime restores and processes.
#include <fmt/format.h>

#include "core/runtime/runtime.h"
#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

// scenario.broker_faults_during_restoration
//   A Runtime (1-2 stream threads) restores seed-sized changelogs and processes input while
//   the broker injects a drawn profile of retryable faults (fakes/broker_faults.h): request
//   timeouts (a call waits out its timeout, then fails), disconnects, slow, partial and empty
//   fetches, partitions without a leader. The faults last a drawn phase, during which more
//   input arrives; then they are healed.
//   Must hold: no injected fault is fatal — the runtime never enters PENDING_ERROR or ERROR
//   (no task fails: the faults last less than task.timeout.ms); every oracle
//   invariant (restoration only moves forward and completes at its end offset; checkpoints
//   never ahead of flushed data; the listener pairs every start); after the heal the runtime
//   converges with counts equal to the reference model.
void BrokerFaultsDuringRestoration(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int32_t threads = draw.Int<int32_t>("threads", 1, 2);
  const int records = draw.Int("records", 0, 149);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 20);
  const int input_records = draw.Int("input_records", 0, 29);
  const fakes::BrokerFaults faults = DrawBrokerFaults(env);
  const TimeNs fault_phase_ns = draw.Ms("fault_phase_ms", 100, 1000, 100);
  draw.Note("faults: " + faults.ToString());
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, input_records);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  w.broker.SetFaults(faults);
  const RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  RS_CHECK(runtime.Start().ok());
  w.clock.SleepFor(fault_phase_ns / 2);
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_records);
  w.clock.SleepFor(fault_phase_ns / 2);
  if (runtime.state() == RuntimeState::kError ||
      runtime.state() == RuntimeState::kPendingError) {
    FailInvariant(
        env, "liveness", "runtime",
        fmt::format("ERROR under retryable faults only ({})", w.broker.faults_injected().Total()));
  }
  FinishRuntime(env, w, runtime, config, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.broker_faults_during_restoration",
                     .description = "timeouts, disconnects, slow/partial/empty fetches and lost "
                                    "leaders while restoring",
                     .steps_hint = 8'000,
                     .body = BrokerFaultsDuringRestoration});

}  // namespace

}  // namespace restoresim::scenarios
