// Broker faults while the runtime restores and processes.
#include <fmt/format.h>

#include "core/runtime/runtime.h"
#include "core/util/check.h"
#include "scenarios/catalogue.h"
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
  const int32_t partitions = 1 + static_cast<int32_t>(env.Choose(3));
  const int32_t threads = 1 + static_cast<int32_t>(env.Choose(2));
  const int records = static_cast<int>(env.Choose(150));
  const int32_t restore_batch = 2 + static_cast<int32_t>(env.Choose(19));
  const int input_records = static_cast<int>(env.Choose(30));
  const fakes::BrokerFaults faults = DrawBrokerFaults(env);
  const TimeNs fault_phase_ns = (1 + static_cast<TimeNs>(env.Choose(10))) * 100 * kMillisecond;
  NoteParams(
      fmt::format("partitions={} threads={} records={} restore_batch={} input_records={} "
                  "fault_phase_ms={} faults: {}",
                  partitions, threads, records, restore_batch, input_records,
                  fault_phase_ns / kMillisecond, faults.ToString()));
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

}  // namespace

absl::Status RegisterFaultScenarios(sim::ProgramRegistry& registry) {
  return AddAll(registry,
                {
                    sim::Program{.name = "scenario.broker_faults_during_restoration",
                                 .description = "timeouts, disconnects, slow/partial/empty "
                                                "fetches and lost leaders while restoring",
                                 .steps_hint = 8'000,
                                 .steps_max = 2'000'000,
                                 .body = BrokerFaultsDuringRestoration},
                });
}

}  // namespace restoresim::scenarios
