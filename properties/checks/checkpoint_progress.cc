// checkpoint_progress: a task that leaves the restore thread cleanly — restored, removed, or
// returned at shutdown — has its restored progress checkpointed first (Kafka forces a
// checkpoint there, KAFKA-12634), so nothing restored is restored again after a restart. A
// failed checkpoint write counts as the attempt (it is reported as an error event).
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class CheckpointProgressChecker final : public Checker {
 public:
  explicit CheckpointProgressChecker(OracleContext& c) : Checker(c, "checkpoint_progress") {}

  void OnRestoreEvent(events::Name rt, const events::RestoreEventInfo& event,
                      bool drained) override {
    if (drained || !event.task.has_value()) return;
    if (event.kind != RestoreEvent::Kind::kRestored && event.kind != RestoreEvent::Kind::kRemoved) {
      return;
    }
    auto dir_it = ledger().dirs.find(event.task->task_dir);
    if (dir_it == ledger().dirs.end()) return;
    const DirRecord& dir = dir_it->second;
    if (dir.checkpoint_failed) return;
    for (const auto& [tp, position] : dir.pending) {
      auto checkpointed = dir.checkpointed.find(tp);
      const int64_t at = checkpointed == dir.checkpointed.end() ? -1 : checkpointed->second;
      if (at != position) {
        Violation(event.incarnation.ToString(),
                  fmt::format("leaves {} {} with {} at {}, but its checkpoint names {}",
                              std::string(rt),
                              event.kind == RestoreEvent::Kind::kRestored ? "restored" : "removed",
                              tp.ToString(), position,
                              at < 0 ? std::string("nothing") : std::to_string(at)));
      }
    }
  }
};

RESTORESIM_CHECKER(60, CheckpointProgressChecker);

}  // namespace

}  // namespace restoresim::properties
