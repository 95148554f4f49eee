// Mutations: deliberate, documented mistakes in the runtime, each re-creating a historical
// Kafka Streams restore bug (or a plausible mistake that breaks one of the oracle's
// invariants) at the place in our runtime where Kafka's code made it. They are how the harness
// proves its bug-finding power: `restoresim zoo` sweeps each one until the default invariants
// catch it.
//
// One list (mutation_list.h, an X-macro expanded here into the enum and in mutation.cc into the
// table) names them: id, name, source (KAFKA-nnnn or a pull request) and a one-line
// description. It lives here, below the runtime, because its sites are not all in the runtime
// (a store's recovery, core/state/log_store.cc, is one) and because the layers
// that install a set (sim/, scenarios/, soak/) need no runtime header for it. A run installs
// its set as part of its run context (core/util/run_context.h: ScopedRunContext, or
// ScopedMutations for this one channel); it is never part of the production configuration.
// Each call site tests one mutation with RS_MUTANT(kName) (run_context.h):
//
//   if (RS_MUTANT(kCreateBeforeClose)) { ...the mistake... }
//
// Thread-safety: the table is immutable; a MutationSet is a value.
#ifndef RESTORESIM_CORE_UTIL_MUTATION_H_
#define RESTORESIM_CORE_UTIL_MUTATION_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace restoresim {

// One enumerator per row of mutation_list.h, in its order.
enum class Mutation : uint8_t {
#define RESTORESIM_MUTATION(id, name, source, description) id,
#include "core/util/mutation_list.h"
#undef RESTORESIM_MUTATION
  kCount,
};
static_assert(static_cast<int>(Mutation::kCount) <= 64, "a MutationSet is one 64-bit word");

struct MutationInfo {
  Mutation id;
  std::string_view name;         // "create-before-close": what the CLI and tables show
  std::string_view source;       // "KAFKA-10391", "PR 8988 review", "restoresim"
  std::string_view description;  // the mistake, in one line
};

// Every mutation, in enum order.
std::span<const MutationInfo> AllMutations();
const MutationInfo& InfoOf(Mutation mutation);
std::optional<Mutation> MutationByName(std::string_view name);

class MutationSet {
 public:
  constexpr MutationSet() = default;
  constexpr MutationSet(std::initializer_list<Mutation> mutations) {
    for (Mutation m : mutations) bits_ |= Bit(m);
  }
  constexpr bool contains(Mutation m) const { return (bits_ & Bit(m)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint64_t bits() const { return bits_; }
  constexpr void insert(Mutation m) { bits_ |= Bit(m); }
  // "create-before-close,early-type-flip" (table order); "" when empty.
  std::string ToString() const;
  static constexpr MutationSet FromBits(uint64_t bits) {
    MutationSet s;
    s.bits_ = bits;
    return s;
  }

 private:
  static constexpr uint64_t Bit(Mutation m) { return uint64_t{1} << static_cast<unsigned>(m); }
  uint64_t bits_ = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_UTIL_MUTATION_H_
