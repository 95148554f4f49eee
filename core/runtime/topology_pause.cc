#include "core/runtime/topology_pause.h"

#include "core/runtime/runtime_observer.h"
#include "core/sync/thread.h"
#include "core/util/check.h"

namespace restoresim {

void TopologyPause::Set(bool paused, const std::vector<std::string>& threads) {
  const bool was = paused_.exchange(paused, std::memory_order_acq_rel);
  RS_CHECK_EQ(paused_.load(std::memory_order_relaxed), paused, "topology '{}': pause lost",
              topology_);
  if (was != paused) {
    TraceMark("runtime", std::string(paused ? "pause" : "resume") + " topology '" + topology_ +
                             "'");
  }
  // Reported with no scheduling point after the store: observers see exactly when it changed.
  RS_OBSERVE(OnTopologyPause, topology_, paused, threads);
}

}  // namespace restoresim
