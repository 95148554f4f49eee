// The shrinker's view of a run (sim/shrink.h): its recorded choices with what each was, its size
// (ScheduleMetrics), whether it keeps the failure being shrunk; the strict order runs shrink in;
// the key of a candidate in the cache; the choice predicates the passes pick positions by; and
// a run cut into "blocks" (a thread pick with the choices up to the next pick of another
// thread). The shrink passes (sim/shrink_passes.h) and the search (sim/shrink_search.h) share it.
//
// Thread-safety: values and pure functions.
#ifndef RESTORESIM_SIM_SHRINK_SCHEDULE_H_
#define RESTORESIM_SIM_SHRINK_SCHEDULE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/failure_signature.h"
#include "sim/runner.h"
#include "sim/shrink.h"

namespace restoresim::sim::shrinking {

inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

using Candidate = std::vector<uint64_t>;  // a list of strategy answers to replay

// A run as the shrinker keeps it.
struct Schedule {
  std::vector<uint64_t> choices;
  std::vector<ChoiceInfo> infos;
  ScheduleMetrics metrics;
  bool keeps = false;  // fails with the signature being kept
};

// Takes the choices out of `r`.
Schedule ScheduleOf(RunResult& r, const FailureSignature& signature);

// The order runs shrink in (see sim/shrink.h); strict, so every adoption is progress.
bool Smaller(const Schedule& a, const Schedule& b);

using CandidateKey = std::pair<uint64_t, uint64_t>;  // two independent hashes of the list
CandidateKey KeyOf(const Candidate& candidate);

// Which choices a pass works on.
using ChoicePredicate = bool (*)(const ChoiceInfo& info, uint64_t value);
bool OffQuiet(const ChoiceInfo& info, uint64_t value);
bool Eventful(const ChoiceInfo& info, uint64_t value);
bool EventfulOrData(const ChoiceInfo& info, uint64_t value);
bool IsData(const ChoiceInfo& info, uint64_t value);
bool FreeOffQuiet(const ChoiceInfo& info, uint64_t value);
bool LowerableData(const ChoiceInfo& info, uint64_t value);

// A thread's run: choices [begin, end), begun by a pick of `thread`.
struct Block {
  size_t begin;
  size_t end;
  uint64_t thread;
};

// The run's blocks, so the data choices a thread makes move with it.
std::vector<Block> BlocksOf(const Schedule& schedule);

}  // namespace restoresim::sim::shrinking

#endif  // RESTORESIM_SIM_SHRINK_SCHEDULE_H_
