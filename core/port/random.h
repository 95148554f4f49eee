// The randomness port. Simulated code draws from a stream the simulator derived from the run's
// master seed (so a seed replays); production code draws from a generator seeded by the OS.
// Either way the numbers come from our own Prng, never from std:: distributions.
//
// Thread-safety: a RandomSource is not thread-safe; give each thread its own.
#ifndef RESTORESIM_CORE_PORT_RANDOM_H_
#define RESTORESIM_CORE_PORT_RANDOM_H_

#include <cstdint>

#include "core/util/prng.h"

namespace restoresim {

class RandomSource {
 public:
  virtual ~RandomSource() = default;
  virtual uint64_t Next64() = 0;

  // Uniform in [0, n). REQUIRES: n > 0. Virtual so that a simulation can answer it as a
  // recorded choice (sim::ChoiceRandom), which makes the answers part of a replayable schedule.
  virtual uint64_t Uniform(uint64_t n);
  // True with probability 1/n.
  bool OneIn(uint64_t n) { return Uniform(n) == 0; }
};

// A deterministic source: a Prng seeded explicitly.
class SeededRandom final : public RandomSource {
 public:
  explicit SeededRandom(uint64_t seed) : prng_(seed) {}
  explicit SeededRandom(const Prng& prng) : prng_(prng) {}
  uint64_t Next64() override { return prng_.Next64(); }

 private:
  Prng prng_;
};

// Production: a Prng seeded from the operating system's entropy (getrandom).
class OsSeededRandom final : public RandomSource {
 public:
  OsSeededRandom();
  uint64_t Next64() override { return prng_.Next64(); }

 private:
  Prng prng_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_PORT_RANDOM_H_
