// store_contents: a restored active task's stores equal the fold of their changelogs' whole
// history up to the restored position (modulo records a from-scratch restoration found already
// removed), checked when the task reaches the stream thread.
#include <fmt/format.h>

#include "properties/checks/checkers.h"

namespace restoresim::properties {
namespace {

class StoreContentsChecker final : public Checker {
 public:
  explicit StoreContentsChecker(OracleContext& c) : Checker(c, "store_contents") {}

  void OnRestoreEvent(std::string_view, const RestoreEvent& event, bool drained) override {
    if (!drained || event.kind != RestoreEvent::Kind::kRestored || event.task == nullptr) return;
    // The restored task reached the stream thread: no other thread touches it now.
    StateManager& sm = const_cast<Task&>(*event.task).state_manager();
    auto dir_it = ledger().dirs.find(sm.task_dir());
    for (const TopicPartition& tp : sm.ChangelogPartitions()) {
      auto position = sm.pending_offsets().find(tp);
      const int64_t upto = position == sm.pending_offsets().end() ? 0 : position->second;
      KeyValueStore* store = sm.StoreForChangelog(tp);
      if (store == nullptr) continue;
      absl::StatusOr<std::map<std::string, std::string>> actual = store->ReadAll();
      if (!actual.ok()) {
        ++context().counts().store_checks_skipped;  // an unreadable store fails the task
        continue;
      }
      ++context().counts().store_checks;
      int64_t below = 0;
      if (dir_it != ledger().dirs.end()) {
        auto b = dir_it->second.compacted_below.find(tp);
        if (b != dir_it->second.compacted_below.end()) below = b->second;
      }
      auto history = ledger().history.find(tp);
      static const ChangelogHistory kNone;
      const std::string diff = DiffFromHistory(
          history == ledger().history.end() ? kNone : history->second, upto, below, *actual);
      if (!diff.empty()) {
        Violation(event.incarnation.ToString(),
                  fmt::format("store '{}' differs from the fold of {} up to {} ({} entries):{}",
                              store->name(), tp.ToString(), upto, actual->size(), diff));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Checker> NewStoreContentsChecker(OracleContext& c) {
  return std::make_unique<StoreContentsChecker>(c);
}

}  // namespace restoresim::properties
