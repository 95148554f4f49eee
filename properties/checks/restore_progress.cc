// restore_progress: restoration moves forward — every batch ends past the last, with records,
// and none after completion — and completes at (or past) its end offset.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class RestoreProgressChecker final : public Checker {
 public:
  explicit RestoreProgressChecker(OracleContext& c) : Checker(c, "restore_progress") {}

  void OnRestoredBatch(std::string_view reader, const TopicPartition& tp,
                       const TaskIncarnation& owner, TaskType, int64_t next_offset,
                       int64_t records) override {
    const Registration* found = ledger().RegistrationOf(reader, tp);
    if (found == nullptr) return;  // registration's to report
    const Registration& reg = *found;
    if (reg.completed) {
      Violation(owner.ToString(),
                fmt::format("writes to changelog {} after it completed", tp.ToString()));
    }
    if (next_offset <= reg.position || records <= 0) {
      Violation(owner.ToString(), fmt::format("changelog {}: a batch of {} records ending at {} "
                                              "after position {}",
                                              tp.ToString(), records, next_offset, reg.position));
    }
  }

  void OnCompleted(std::string_view, const TopicPartition& tp, const TaskIncarnation& owner,
                   int64_t position, int64_t end_offset) override {
    if (position < end_offset) {
      Violation(owner.ToString(), fmt::format("changelog {} completed at {} before its end "
                                              "offset {}",
                                              tp.ToString(), position, end_offset));
    }
  }
};

RESTORESIM_CHECKER(150, RestoreProgressChecker);

}  // namespace

}  // namespace restoresim::properties
