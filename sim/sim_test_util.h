// Helpers for tests that run code directly under a Simulation.
#ifndef RESTORESIM_SIM_SIM_TEST_UTIL_H_
#define RESTORESIM_SIM_SIM_TEST_UTIL_H_

#include <functional>
#include <memory>

#include "sim/simulation.h"
#include "sim/strategy.h"

namespace restoresim::sim {

struct TestRun {
  RunOutcome outcome;
  uint64_t hash = 0;
  uint64_t steps = 0;
  TimeNs end_ns = 0;
  std::unique_ptr<Simulation> sim;
};

inline TestRun RunUnderSim(std::function<void()> body, uint64_t seed = 1,
                           SimOptions options = {}) {
  TestRun r;
  r.sim = std::make_unique<Simulation>(options, std::make_unique<RandomWalkStrategy>(Prng(seed)));
  r.outcome = r.sim->Run(std::move(body));
  r.hash = r.sim->trace().Hash();
  r.steps = r.sim->steps();
  r.end_ns = r.sim->now_ns();
  return r;
}

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_SIM_TEST_UTIL_H_
