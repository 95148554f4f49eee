// The coalesce pass (sim/shrink_passes.h).
#include <algorithm>
#include <optional>

#include "sim/shrink_passes.h"

namespace restoresim::sim::shrinking {
namespace {

// Blocks [first, last) regrouped by thread, threads in the order they first run there, each
// thread's blocks in their order; nullopt when there is nothing to merge.
std::optional<Candidate> Regrouped(const Candidate& c, const std::vector<Block>& blocks,
                                   size_t first, size_t last) {
  if (last - first < 3) return std::nullopt;
  std::vector<uint64_t> threads;  // in the order of their first block in the range
  for (size_t b = first; b < last; ++b) {
    if (std::find(threads.begin(), threads.end(), blocks[b].thread) == threads.end()) {
      threads.push_back(blocks[b].thread);
    }
  }
  if (threads.size() == last - first) return std::nullopt;  // nothing to merge
  Candidate out(c.begin(), c.begin() + blocks[first].begin);
  out.reserve(c.size());
  for (uint64_t thread : threads) {
    for (size_t b = first; b < last; ++b) {
      if (blocks[b].thread != thread) continue;
      out.insert(out.end(), c.begin() + blocks[b].begin, c.begin() + blocks[b].end);
    }
  }
  out.insert(out.end(), c.begin() + blocks[last - 1].end, c.end());
  return out;
}

}  // namespace

// Regroups a range of blocks by thread: A B A C B A -> A A A B B C. Ranges halve, as in delta
// debugging, from the whole run down to 4 blocks; one success removes many preemptions.
bool Coalesce(ShrinkSearch& search) {
  bool improved = false;
  std::vector<Block> blocks = BlocksOf(search.best());
  for (size_t size = blocks.size(); size >= 4 && !search.exhausted(); size /= 2) {
    auto refresh = [&]() {
      blocks = BlocksOf(search.best());
      return (blocks.size() + size - 1) / size;
    };
    auto make_at = [&](size_t index) -> std::optional<Candidate> {
      const size_t first = index * size;
      return Regrouped(search.best().choices, blocks, first,
                       std::min(first + size, blocks.size()));
    };
    improved = search.ScanDown(refresh, make_at, "coalesce") || improved;
  }
  return improved;
}

}  // namespace restoresim::sim::shrinking
