// restored_batch: under at-least-once, after every batch restored into a store (an active's or
// a standby's), the store is never behind the batch's next offset: each key holds what its
// last record below that offset says, or what a later record of it says, modulo records a
// from-scratch restoration found already removed.
//
// Why "or later": under at-least-once a store opens with whatever it flushed, which may run
// past its checkpoint (a crash after a store flush and before the checkpoint write; Kafka keeps
// such a store and restores over it), so until the restoration passes a key's newer records
// the key may show one of them. What it may never show is an older value, a value no record of
// it ever had, or nothing where the fold has a value: data the position says the store holds
// and it does not (a batch half applied and its position advanced, a write dropped, a store
// older than its checkpoint). Exactly once is stricter and has its own checker
// (eos_restored_batch: no store runs ahead there). store_contents (a restored task reaching its
// stream thread) and checkpoint (a checkpoint write) look at the same stores at two moments; a
// restoration that stops early (suspended, revoked, closed mid-way, corrupted) reaches neither,
// and a missing record a later batch rewrites is gone by then.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class RestoredBatchChecker final : public Checker {
 public:
  explicit RestoredBatchChecker(OracleContext& c) : Checker(c, "restored_batch") {}

  void OnRestoredBatchState(std::string_view reader, const TopicPartition& tp,
                            const TaskIncarnation& owner, int64_t next_offset, int64_t log_start,
                            bool exactly_once, const events::StateInfo& state) override {
    if (exactly_once) return;  // eos_restored_batch
    const events::StoreSnapshot* store = StoreToCheck(state, tp);
    if (store == nullptr) return;
    const int64_t below = ledger().CompactedBelow(reader, tp, state.task_dir, log_start);
    const std::string diff = DiffFromHistory(ledger().HistoryOf(tp), next_offset, below,
                                             store->data, /*or_later=*/true);
    if (diff.empty()) return;
    Violation(owner.ToString(),
              fmt::format("store '{}' after a batch restored from {} up to {} ({} entries) is "
                          "behind its position or holds what no record said (per key neither the "
                          "fold below it nor a later record):{}",
                          store->name, tp.ToString(), next_offset, store->data.size(), diff));
  }
};

RESTORESIM_CHECKER(205, RestoredBatchChecker);

}  // namespace

}  // namespace restoresim::properties
