#include "core/port/random.h"

#include <sys/random.h>

#include "core/util/check.h"

namespace restoresim {
namespace {

uint64_t OsEntropy() {
  uint64_t seed = 0;
  const ssize_t n = getrandom(&seed, sizeof(seed), 0);
  RS_CHECK(n == static_cast<ssize_t>(sizeof(seed)), "getrandom failed");
  return seed;
}

}  // namespace

uint64_t RandomSource::Uniform(uint64_t n) {
  RS_CHECK(n > 0);
  return BoundedUniform(n, [this]() { return Next64(); });
}

OsSeededRandom::OsSeededRandom() : prng_(OsEntropy()) {}

}  // namespace restoresim
