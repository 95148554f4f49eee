// Portable, seeded pseudo-random numbers: the same seed gives the same numbers on every
// compiler, standard library and platform. Never use std:: distributions in simulated code
// paths: their output is not specified and differs between library versions.
//
// Thread-safety: a Prng is a value; one owner uses it at a time.
#ifndef RESTORESIM_CORE_UTIL_PRNG_H_
#define RESTORESIM_CORE_UTIL_PRNG_H_

#include <cstdint>
#include <string_view>

namespace restoresim {

// SplitMix64 step: the standard seed expander (Steele, Lea, Flood 2014).
constexpr uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A stable 64-bit hash of a string (FNV-1a then a SplitMix64 finaliser); used to derive
// independent PRNG streams from names, so adding a stream never reshuffles the others.
constexpr uint64_t StableStringHash(std::string_view s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return SplitMix64(h);
}

// Uniform in [0, n) from 64-bit words drawn by `next`: Lemire's multiply-shift with rejection,
// exact and portable (only 64x64->128 multiplication and integer comparison). REQUIRES: n > 0.
template <typename NextWord>
constexpr uint64_t BoundedUniform(uint64_t n, NextWord&& next) {
  unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

// xoshiro256** 1.0 (Blackman, Vigna), with our own bounded-integer mapping.
class Prng {
 public:
  explicit constexpr Prng(uint64_t seed) {
    uint64_t sm = seed;
    for (uint64_t& w : s_) w = SplitMix64(sm);
  }

  // A child stream named `name`: independent of this one and of other names.
  constexpr Prng Fork(std::string_view name) const {
    return Prng(s_[0] ^ StableStringHash(name));
  }

  constexpr uint64_t Next64() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n). REQUIRES: n > 0.
  constexpr uint64_t Uniform(uint64_t n) {
    return BoundedUniform(n, [this]() { return Next64(); });
  }

  // Uniform in [lo, hi]. REQUIRES: lo <= hi.
  constexpr int64_t Range(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    if (span == UINT64_MAX) return static_cast<int64_t>(Next64());
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + Uniform(span + 1));
  }

  // True with probability 1/n. REQUIRES: n > 0.
  constexpr bool OneIn(uint64_t n) { return Uniform(n) == 0; }

  // True with probability per_mille/1000.
  constexpr bool PerMille(uint32_t per_mille) { return Uniform(1000) < per_mille; }

 private:
  static constexpr uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4] = {};
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_UTIL_PRNG_H_
