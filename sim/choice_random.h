// ChoiceRandom: the randomness port answered by the simulation's strategy. Every Uniform(n) is
// a recorded choice (ChoiceKind::kData) like a scheduling decision, so fault injection and
// workload shape that draw from it are replayed by a recorded schedule, and a shrinker can
// reduce them like preemptions.
//
// Thread-safety: use only from simulated threads of `sim`.
#ifndef RESTORESIM_SIM_CHOICE_RANDOM_H_
#define RESTORESIM_SIM_CHOICE_RANDOM_H_

#include "core/port/random.h"
#include "sim/simulation.h"

namespace restoresim::sim {

class ChoiceRandom final : public RandomSource {
 public:
  explicit ChoiceRandom(Simulation& sim) : sim_(sim) {}
  uint64_t Next64() override { return sim_.Choose(UINT64_MAX, ChoiceKind::kData); }
  uint64_t Uniform(uint64_t n) override { return sim_.Choose(n, ChoiceKind::kData); }

 private:
  Simulation& sim_;
};

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_CHOICE_RANDOM_H_
