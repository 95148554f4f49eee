// A fast, stable 64-bit running hash for traces and results: the same sequence of words gives
// the same value in every process and on every platform (no addresses, no std::hash).
#ifndef RESTORESIM_CORE_UTIL_STABLE_HASH_H_
#define RESTORESIM_CORE_UTIL_STABLE_HASH_H_

#include <cstdint>
#include <string_view>

#include "core/util/prng.h"

namespace restoresim {

class StableHash {
 public:
  constexpr StableHash() = default;
  explicit constexpr StableHash(uint64_t state) : h_(state) {}

  constexpr void Add(uint64_t word) {
    // One multiply-xorshift round per word; Value() applies a full finaliser.
    h_ = (h_ ^ word) * 0x9FB21C651E98DF25ull;
    h_ ^= h_ >> 29;
  }
  constexpr void AddString(std::string_view s) {
    Add(s.size());
    Add(StableStringHash(s));
  }
  constexpr uint64_t Value() const {
    uint64_t s = h_;
    return SplitMix64(s);
  }

 private:
  uint64_t h_ = 0x243F6A8885A308D3ull;  // pi
};

// Order-independent combination of per-item hashes (XOR of mixed pairs): sweep shards can be
// merged in any order and a sweep's combined hash does not depend on --jobs.
constexpr uint64_t MixPair(uint64_t key, uint64_t value) {
  StableHash h;
  h.Add(key);
  h.Add(value);
  return h.Value();
}

}  // namespace restoresim

#endif  // RESTORESIM_CORE_UTIL_STABLE_HASH_H_
