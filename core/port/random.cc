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
  // The same Lemire mapping as Prng::Uniform, over this source's words.
  unsigned __int128 m = static_cast<unsigned __int128>(Next64()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(Next64()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

OsSeededRandom::OsSeededRandom() : prng_(OsEntropy()) {}

}  // namespace restoresim
