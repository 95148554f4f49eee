// The move-preemption pass (sim/shrink_passes.h).
#include <iterator>
#include <optional>

#include "sim/shrink_passes.h"

namespace restoresim::sim::shrinking {
namespace {

constexpr size_t kAbsorbPicks[] = {1, 4, 16, 64, 256, 1024};
constexpr size_t kVariants = std::size(kAbsorbPicks) + 2;  // absorbs, pull, push

// Variant `variant` of removing the preemption of block x - 1 by block x (see MovePreemptions).
std::optional<Candidate> Moved(const Candidate& c, const std::vector<Block>& blocks, size_t x,
                               size_t variant) {
  const Block& preempted = blocks[x - 1];
  const size_t p = blocks[x].begin;
  Candidate out;
  out.reserve(c.size() + 2);
  auto append = [&](size_t from, size_t to) {
    out.insert(out.end(), c.begin() + from, c.begin() + to);
  };
  if (variant < std::size(kAbsorbPicks)) {
    append(0, p);
    out.insert(out.end(), kAbsorbPicks[variant], preempted.thread);
    append(p, c.size());
    return out;
  }
  size_t k = x + 1;
  while (k < blocks.size() && blocks[k].thread != preempted.thread) ++k;
  if (k == blocks.size()) return std::nullopt;  // A never ran again
  const Block& resumed = blocks[k];
  if (variant == std::size(kAbsorbPicks)) {  // pull
    append(0, p);
    append(resumed.begin, resumed.end);
    append(p, resumed.begin);
  } else {  // push
    append(0, preempted.begin);
    append(p, resumed.begin);
    append(preempted.begin, p);
    append(resumed.begin, resumed.end);
  }
  append(resumed.end, c.size());
  return out;
}

}  // namespace

// Removes one preemption (thread A switched out for B at p) in one of these ways, tried in
// this order:
//  * absorb: A runs on at p for up to k more picks (k = 1, 4, 16, ...): candidates replay with
//    picks of a thread that cannot run skipped, so this is "A runs until it blocks, at most k
//    steps", then the schedule goes on as recorded (CHESS's view of a preemption);
//  * pull: A's next run moves up to p: A1 [B ...] A2 -> A1 A2 [B ...];
//  * push: A's preempted run moves down to A's next run: A1 [B ...] A2 -> [B ...] A1 A2.
// Pull and push are Tinertia's context-switch removals (Jalbert and Sen, FSE 2010) on the
// recorded choices. A run ("block") is a thread pick with the choices up to the next pick of
// another thread, so the data choices a thread makes move with it.
bool MovePreemptions(ShrinkSearch& search) {
  std::vector<Block> blocks;
  std::vector<size_t> preempting;  // indices into blocks of the blocks that preempted
  auto refresh = [&]() {
    blocks = BlocksOf(search.best());
    preempting.clear();
    for (size_t b = 1; b < blocks.size(); ++b) {
      if (search.best().infos[blocks[b].begin].eventful) preempting.push_back(b);
    }
    return preempting.size() * kVariants;
  };
  auto make_at = [&](size_t index) -> std::optional<Candidate> {
    // ScanDown goes from the last index down: the last preemption first, its variants in the
    // order above.
    return Moved(search.best().choices, blocks, preempting[index / kVariants],
                 kVariants - 1 - index % kVariants);
  };
  return search.ScanDown(refresh, make_at, "move-preemption");
}

}  // namespace restoresim::sim::shrinking
