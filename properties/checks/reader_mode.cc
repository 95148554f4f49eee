// reader_mode: a standby changelog is updated only while no active changelog of the same
// reader restores, and the reader's mode changes only on a real change: it reports standby
// updating only when no registered active changelog is still restoring, and active restoring
// only when one is.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class ReaderModeChecker final : public Checker {
 public:
  explicit ReaderModeChecker(OracleContext& c) : Checker(c, "reader_mode") {}

  void OnRestoredBatch(std::string_view reader, const TopicPartition& tp,
                       const TaskIncarnation& owner, TaskType type, int64_t, int64_t) override {
    if (type != TaskType::kStandby) return;
    if (const Registration* active = RestoringActive(reader)) {
      Violation(owner.ToString(), fmt::format("standby changelog {} updated while active changelog "
                                              "{} (of {}) restores",
                                              tp.ToString(), active_tp_.ToString(),
                                              active->owner.ToString()));
    }
  }

  void OnReaderMode(std::string_view reader, ReaderMode mode) override {
    const Registration* active = RestoringActive(reader);
    if (mode == ReaderMode::kStandbyUpdating && active != nullptr) {
      Violation(Str(reader), fmt::format("switches to standby updating while active changelog "
                                         "{} (of {}) restores",
                                         active_tp_.ToString(), active->owner.ToString()));
    }
    if (mode == ReaderMode::kActiveRestoring && active == nullptr) {
      Violation(Str(reader), "switches to active restoring with no active changelog restoring");
    }
  }

 private:
  // A registered active changelog of `reader` that has not completed (its partition in
  // active_tp_), or null.
  const Registration* RestoringActive(std::string_view reader) {
    for (const auto& [key, reg] : ledger().registered) {
      if (key.first == reader && reg.type == TaskType::kActive && !reg.completed) {
        active_tp_ = key.second;
        return &reg;
      }
    }
    return nullptr;
  }
  TopicPartition active_tp_;
};

RESTORESIM_CHECKER(80, ReaderModeChecker);

}  // namespace

}  // namespace restoresim::properties
