// The truncate pass (sim/shrink_passes.h).
#include "sim/shrink_passes.h"

namespace restoresim::sim::shrinking {

// Cuts the choices after a point and lets the quiet fallback run the rest: binary search for
// the earliest cut that still fails (a cut drops every preemption and data event after it).
bool Truncate(ShrinkSearch& search) {
  const uint64_t before = search.improvements();
  const Candidate base = search.best().choices;
  const std::vector<size_t> cuts = search.Positions(&OffQuiet);
  size_t lo = 0;
  size_t hi = cuts.size();  // cutting nothing keeps the signature
  while (lo < hi && !search.exhausted()) {
    const size_t mid = lo + (hi - lo) / 2;
    if (search.Consider(Candidate(base.begin(), base.begin() + cuts[mid]), "truncate")) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return search.improvements() != before;
}

}  // namespace restoresim::sim::shrinking
