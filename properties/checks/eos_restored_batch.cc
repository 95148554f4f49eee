// eos_restored_batch: under exactly-once, after every batch restored into a store (an active's
// or a standby's), the store equals the fold of its changelog's committed records below the
// batch's next offset — no record an abort marker took back, none missing, none from further
// on — modulo records a from-scratch restoration found already removed.
//
// Why at every batch and not only where store_contents (a restored task reaching its stream
// thread) and checkpoint (a checkpoint write) look: a restoration that stops early (suspended,
// revoked, closed cleanly mid-way, corrupted) hands its stores on without either, and an
// aborted record applied and later overwritten by a committed one of its key is gone by the
// end. Under exactly once a store never runs ahead of its position while it restores (data
// past its checkpoint is wiped at open, StateManager::WipeIfNotAtCheckpoint), so the fold is
// exact: each key as its last committed record below the offset has it.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class EosRestoredBatchChecker final : public Checker {
 public:
  explicit EosRestoredBatchChecker(OracleContext& c) : Checker(c, "eos_restored_batch") {}

  void OnRestoredBatchState(std::string_view reader, const TopicPartition& tp,
                            const TaskIncarnation& owner, int64_t next_offset, int64_t log_start,
                            bool exactly_once, const events::StateInfo& state) override {
    if (!exactly_once) return;  // at least once: restored_batch
    const events::StoreSnapshot* store = StoreToCheck(state, tp);
    if (store == nullptr) return;
    const ChangelogHistory& committed = ledger().HistoryOf(tp);
    const int64_t below = ledger().CompactedBelow(reader, tp, state.task_dir, log_start);
    const std::string diff = DiffFromHistory(committed, next_offset, below, store->data);
    if (diff.empty()) return;
    Violation(owner.ToString(),
              fmt::format("store '{}' after a batch restored from {} up to {} ({} entries) is "
                          "not the fold of its committed records ({} aborted left out):{}",
                          store->name, tp.ToString(), next_offset, store->data.size(),
                          committed.aborted(), diff));
  }
};

RESTORESIM_CHECKER(200, EosRestoredBatchChecker);

}  // namespace

}  // namespace restoresim::properties
