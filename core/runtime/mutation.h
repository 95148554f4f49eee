// Mutations: deliberate, documented mistakes in the runtime, each re-creating a historical
// Kafka Streams restore bug (or a plausible mistake that breaks one of the oracle's
// invariants) at the place in our runtime where Kafka's code made it. They are how the harness
// proves its bug-finding power: `restoresim zoo` sweeps each one until the default invariants
// catch it.
//
// One table (kMutations in mutation.cc) names them: id, source (KAFKA-nnnn or a pull request)
// and a one-line description. A run installs a MutationSet for its duration (ScopedMutations:
// the simulator's OS thread, inherited by OS threads the runtime starts); it is never part of
// the production configuration. Each call site tests one mutation with RS_MUTANT(kName):
//
//   if (RS_MUTANT(kCreateBeforeClose)) { ...the mistake... }
//
// Cost on the normal path: one thread-local load and a predicted branch; configuring the
// build with -Dmutations=disabled compiles every site to the correct code only.
//
// Thread-safety: the installed set is per OS thread; the table is immutable.
#ifndef RESTORESIM_CORE_RUNTIME_MUTATION_H_
#define RESTORESIM_CORE_RUNTIME_MUTATION_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace restoresim {

// Append only would not matter (bits are per run), but keep the table's order.
enum class Mutation : uint8_t {
  kCreateBeforeClose,
  kEarlyTypeFlip,
  kLatePartitionCapture,
  kPartialUnregisterOnCorruption,
  kRevivedNotReadded,
  kStaleCheckpointAfterCorruption,
  kEndInsteadOfSuspended,
  kWaitWithoutPredicate,
  kNoCheckpointAfterRestoration,
  kStalePendingAction,
  kRunningBeforeInit,
  kCheckpointEndNotRestored,
  kRestoredListedTwice,
  kResumeOnRestoreThread,
  kStandbysResumedEarly,
  kIdleWithoutWakeup,
  kEventsDrainedLate,
  kResumeAsRecreate,
  kDamagedStoreRetried,
  kDamageCutAsTornTail,
  kCheckpointKeepsConnections,
  kStaleEndOffsetsAfterRestore,
  kClonesKeepIdentity,
  kEosRestoreReadUncommitted,
  kEosCheckpointWhileProcessing,
  kStoreOffsetIgnored,
  kCorruptionFailsThread,
  kEosUncleanStateKept,
  kResumeWithoutWakeup,
  kResumeWithoutRegister,
  kCloseTimeoutNotRunning,
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

namespace mutation_internal {
// The set installed on this OS thread (0: none). Read by RS_MUTANT.
inline thread_local uint64_t active_bits = 0;
}  // namespace mutation_internal

inline MutationSet ActiveMutations() {
  return MutationSet::FromBits(mutation_internal::active_bits);
}

// Installs `mutations` on this OS thread for the scope's lifetime (restoring the previous set).
class ScopedMutations {
 public:
  explicit ScopedMutations(MutationSet mutations) : previous_(mutation_internal::active_bits) {
    mutation_internal::active_bits = mutations.bits();
  }
  ~ScopedMutations() { mutation_internal::active_bits = previous_; }
  ScopedMutations(const ScopedMutations&) = delete;
  ScopedMutations& operator=(const ScopedMutations&) = delete;

 private:
  uint64_t previous_;
};

}  // namespace restoresim

#ifndef RESTORESIM_MUTATIONS
#define RESTORESIM_MUTATIONS 1
#endif

#if RESTORESIM_MUTATIONS
#define RS_MUTANT(name)                                                           \
  (__builtin_expect(::restoresim::mutation_internal::active_bits != 0, 0) &&      \
   ((::restoresim::mutation_internal::active_bits >>                              \
     static_cast<unsigned>(::restoresim::Mutation::name)) & 1) != 0)
#else
#define RS_MUTANT(name) (static_cast<void>(::restoresim::Mutation::name), false)
#endif

#endif  // RESTORESIM_CORE_RUNTIME_MUTATION_H_
