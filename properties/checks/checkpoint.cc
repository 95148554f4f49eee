// checkpoint (soundness): a checkpoint never claims more than the stores hold. At every write:
// no offset beyond what the stores flushed (the ledger's own account of Advance and flushes),
// no changelog reported corrupted and not wiped since, and each store holding the fold of its
// changelog's whole history below the offset named — each key as of that offset or as a later
// record of it has it (a store may be ahead of its checkpoint, never behind), modulo records a
// from-scratch restoration found already removed. At every open: a directory wiped since it
// was last open comes back with no checkpoint and empty stores, and one closed cleanly since
// comes back with the checkpoint and the contents it was closed with (unless the file system
// crashed between). Stores are read as the events recorded them (StateInfo::stores).
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class CheckpointChecker final : public Checker {
 public:
  explicit CheckpointChecker(OracleContext& c) : Checker(c, "checkpoint") {}

  void OnCheckpointWritten(const events::StateInfo& state,
                           const CheckpointOffsets& offsets) override {
    auto dir_it = ledger().dirs.find(state.task_dir);
    const DirRecord empty;
    const DirRecord& dir = dir_it == ledger().dirs.end() ? empty : dir_it->second;
    for (const auto& [tp, offset] : offsets) {
      auto flushed = dir.flushed.find(tp);
      const int64_t limit = flushed == dir.flushed.end() ? 0 : flushed->second;
      if (offset > limit) {
        Violation(state.task_dir, fmt::format("checkpoint names {} at {}, beyond the flushed "
                                                "data (at {})",
                                                tp.ToString(), offset, limit));
      }
      if (dir.corrupted.contains(tp)) {
        Violation(state.task_dir, fmt::format("checkpoint names {}, reported corrupted and not "
                                                "wiped since",
                                                tp.ToString()));
      }
      CheckContents(state, dir, tp, offset, "checkpoint");
    }
  }

  // The state manager heals a checkpoint that names a store with no data; but a checkpoint
  // that outlived the wipe of its directory is the runtime's own mistake (KAFKA-10391's kind).
  void OnCheckpointClaimDropped(const events::StateInfo& state, const TopicPartition& tp,
                                int64_t claimed) override {
    auto dir_it = ledger().dirs.find(state.task_dir);
    if (dir_it == ledger().dirs.end() || !dir_it->second.wiped) return;
    Violation(state.task_dir, fmt::format("a checkpoint survived the wipe of its directory: it "
                                            "still named {} at {}",
                                            tp.ToString(), claimed));
  }

  void OnStoresRegistered(const events::StateInfo& state) override {
    auto dir_it = ledger().dirs.find(state.task_dir);
    if (dir_it == ledger().dirs.end()) return;
    const DirRecord& dir = dir_it->second;
    if (dir.wiped) {
      if (!state.flushed.empty()) {
        Violation(state.task_dir, fmt::format("a checkpoint survived the wipe of its directory: "
                                              "{} changelogs still named",
                                              state.flushed.size()));
      }
      for (const events::StoreSnapshot& store : state.stores) {
        if (store.entries > 0) {
          Violation(state.task_dir, fmt::format("store '{}' has {} entries after its directory "
                                                "was wiped",
                                                store.name, store.entries));
        }
      }
      return;
    }
    if (!dir.clean_close.has_value()) return;
    if (state.flushed != dir.clean_close->checkpoint) {
      Violation(state.task_dir, "opened with another checkpoint than its clean close wrote");
    }
    for (const auto& [name, contents] : dir.clean_close->contents) {
      const events::StoreSnapshot* store = state.Store(name);
      if (store == nullptr) continue;
      if (store->readable && store->data != contents) {
        Violation(state.task_dir, fmt::format("store '{}' opened with {} entries, closed "
                                              "cleanly with {}",
                                              name, store->data.size(), contents.size()));
      }
    }
  }

 private:
  void CheckContents(const events::StateInfo& state, const DirRecord& dir, const TopicPartition& tp,
                     int64_t offset, std::string_view when) {
    const events::StoreSnapshot* store = StoreToCheck(state, tp);
    if (store == nullptr) return;
    auto below = dir.compacted_below.find(tp);
    const std::string diff =
        DiffFromHistory(ledger().HistoryOf(tp), offset,
                        below == dir.compacted_below.end() ? 0 : below->second, store->data,
                        /*or_later=*/true);
    if (diff.empty()) return;
    Violation(state.task_dir, fmt::format("{} of {} at {}: store '{}' differs from the "
                                            "changelog's history below it:{}",
                                            when, tp.ToString(), offset, store->name, diff));
  }
};

RESTORESIM_CHECKER(50, CheckpointChecker);

}  // namespace

}  // namespace restoresim::properties
