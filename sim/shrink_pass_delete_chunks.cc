// The delete-N passes (sim/shrink_passes.h).
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "sim/shrink_passes.h"

namespace restoresim::sim::shrinking {

// Deletes `size` choices starting at an eventful one or at a data choice (delta debugging's
// chunks, anchored where something happens: deleting a run of quiet thread picks mostly
// shifts the same run). Deleting a data choice of 0 shifts the program's later draws up, so
// that a count lowered next (LowerData) keeps the draws that matter.
bool DeleteChunks(ShrinkSearch& search, size_t size) {
  std::vector<size_t> starts;
  auto refresh = [&]() {
    starts = search.Positions(&EventfulOrData);
    return starts.size();
  };
  auto make_at = [&](size_t index) -> std::optional<Candidate> {
    Candidate c = search.best().choices;
    const size_t begin = starts[index];
    c.erase(c.begin() + begin, c.begin() + std::min(begin + size, c.size()));
    return c;
  };
  return search.ScanDown(refresh, make_at, fmt::format("delete-{}", size));
}

}  // namespace restoresim::sim::shrinking
