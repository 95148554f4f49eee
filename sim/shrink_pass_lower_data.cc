// The lower-data pass (sim/shrink_passes.h).
#include "sim/shrink_passes.h"

namespace restoresim::sim::shrinking {
namespace {

// Lowers the data choice at p to the smallest value that keeps the signature: 0, else a
// binary search below the current value.
void LowerOne(ShrinkSearch& search, size_t p) {
  auto fits = [&]() {
    return p < search.best().infos.size() &&
           LowerableData(search.best().infos[p], search.best().choices[p]);
  };
  if (!fits()) return;
  auto with = [&](uint64_t value) {
    Candidate c = search.best().choices;
    c[p] = value;
    return c;
  };
  uint64_t lo = 0;  // the largest value known not to keep the signature
  uint64_t hi = search.best().choices[p];
  if (search.Consider(with(0), "lower-data")) return;
  while (hi - lo > 1 && !search.exhausted() && fits()) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (search.Consider(with(mid), "lower-data")) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
}

}  // namespace

// Lowers each data choice (last first) to the smallest value that keeps the signature.
bool LowerData(ShrinkSearch& search) {
  const uint64_t before = search.improvements();
  const std::vector<size_t> positions = search.Positions(&LowerableData);
  for (size_t i = positions.size(); i-- > 0 && !search.exhausted();) {
    LowerOne(search, positions[i]);
  }
  return search.improvements() != before;
}

}  // namespace restoresim::sim::shrinking
