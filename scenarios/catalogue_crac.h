// Helpers shared by the checkpoint/restore stories (catalogue_crac.cc, catalogue_crac_clones.cc).
#ifndef RESTORESIM_SCENARIOS_CATALOGUE_CRAC_H_
#define RESTORESIM_SCENARIOS_CATALOGUE_CRAC_H_

#include <string>
#include <vector>

#include "core/runtime/runtime.h"
#include "scenarios/runtime_world.h"
#include "scenarios/scenario_checks.h"
#include "sim/program.h"

namespace restoresim::scenarios {

// The catalogue's runtime configuration with its state under `state_dir`.
RuntimeConfig CracConfig(int32_t threads, int32_t restore_batch, const std::string& state_dir);
// Checkpoints on, instance `instance` ("" for one), identities drawn from the program's data
// stream (fixed by the seed: a shrinker cannot make two draws equal).
void EnableCrac(sim::RunEnv& env, Runtime& runtime, std::string instance);
// The tail over several runtimes of one application: converge, stores, clean shutdowns, the
// oracle's final checks, changelogs against the reference model.
void FinishRuntimes(sim::RunEnv& env, testing::RuntimeWorld& w,
                    const std::vector<Runtime*>& runtimes,
                    const std::vector<RuntimeConfig>& configs, int32_t partitions,
                    const Baselines& baselines);

}  // namespace restoresim::scenarios

#endif  // RESTORESIM_SCENARIOS_CATALOGUE_CRAC_H_
