// The lower-and-delete pass (sim/shrink_passes.h).
#include <algorithm>
#include <optional>
#include <utility>

#include "sim/shrink_passes.h"

namespace restoresim::sim::shrinking {

// Lowers a data choice by one and deletes one of the next draws with the choices up to the
// draw after it: a count and one of the things it counts go together, since either alone
// changes what the other means (fewer draws, or the same draws shifted) and is no progress.
bool LowerAndDelete(ShrinkSearch& search) {
  static constexpr size_t kSpan = 8;  // later draws tried per lowered one
  std::vector<size_t> draws;
  std::vector<std::pair<size_t, size_t>> pairs;  // indices into draws: (lowered, deleted)
  auto refresh = [&]() {
    draws = search.Positions(&IsData);
    pairs.clear();
    for (size_t d = 0; d < draws.size(); ++d) {
      if (search.best().choices[draws[d]] == 0) continue;
      // Farthest first: the scan goes down, so it tries the nearest first.
      for (size_t e = std::min(draws.size() - 1, d + kSpan); e > d; --e) pairs.emplace_back(d, e);
    }
    return pairs.size();
  };
  auto make_at = [&](size_t index) -> std::optional<Candidate> {
    const auto [d, e] = pairs[index];
    Candidate c = search.best().choices;
    c[draws[d]] -= 1;
    const size_t end = e + 1 < draws.size() ? draws[e + 1] : draws[e] + 1;
    c.erase(c.begin() + draws[e], c.begin() + end);
    return c;
  };
  return search.ScanDown(refresh, make_at, "lower-and-delete");
}

}  // namespace restoresim::sim::shrinking
