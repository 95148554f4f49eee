// store_contents: a restored active task's stores equal the fold of their changelogs' whole
// history up to the restored position (modulo records a from-scratch restoration found already
// removed), checked when the task reaches the stream thread.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class StoreContentsChecker final : public Checker {
 public:
  explicit StoreContentsChecker(OracleContext& c) : Checker(c, "store_contents") {}

  void OnRestoreEvent(events::Name, const events::RestoreEventInfo& event,
                      bool drained) override {
    if (!drained || event.kind != RestoreEvent::Kind::kRestored || !event.task.has_value()) return;
    // The restored task reached the stream thread: no other thread touches it now. Its stores
    // as the event recorded them.
    if (!event.state.has_value()) return;
    const events::StateInfo& sm = *event.state;
    auto dir_it = ledger().dirs.find(sm.task_dir);
    for (const TopicPartition& tp : event.task->changelogs) {
      auto position = sm.pending.find(tp);
      const int64_t upto = position == sm.pending.end() ? 0 : position->second;
      const events::StoreSnapshot* store = StoreToCheck(sm, tp);
      if (store == nullptr) continue;
      int64_t below = 0;
      if (dir_it != ledger().dirs.end()) {
        auto b = dir_it->second.compacted_below.find(tp);
        if (b != dir_it->second.compacted_below.end()) below = b->second;
      }
      const std::string diff = DiffFromHistory(ledger().HistoryOf(tp), upto, below, store->data);
      if (!diff.empty()) {
        Violation(event.incarnation.ToString(),
                  fmt::format("store '{}' differs from the fold of {} up to {} ({} entries):{}",
                              store->name, tp.ToString(), upto, store->data.size(), diff));
      }
    }
  }
};

RESTORESIM_CHECKER(130, StoreContentsChecker);

}  // namespace

}  // namespace restoresim::properties
