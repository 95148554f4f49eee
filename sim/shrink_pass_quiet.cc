// The quiet-event and quiet-pick passes (sim/shrink_passes.h).
#include <optional>

#include "sim/shrink_passes.h"

namespace restoresim::sim::shrinking {

// Replaces one choice by its quiet answer and keeps the rest: the eventful ones (a data
// event, a wake-up, a preemption), or the free thread picks (canonical round-robin order).
bool QuietEach(ShrinkSearch& search, bool eventful) {
  std::vector<size_t> positions;
  auto refresh = [&]() {
    positions = search.Positions(eventful ? &Eventful : &FreeOffQuiet);
    return positions.size();
  };
  auto make_at = [&](size_t index) -> std::optional<Candidate> {
    Candidate c = search.best().choices;
    c[positions[index]] = search.best().infos[positions[index]].quiet;
    return c;
  };
  return search.ScanDown(refresh, make_at, eventful ? "quiet-event" : "quiet-pick");
}

}  // namespace restoresim::sim::shrinking
