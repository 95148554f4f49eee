// commit_checkpoint: a running active's checkpoint covers every write its stores hold — at each
// checkpoint a RUNNING active writes, no key of a store holds a value that its changelog has
// only at or beyond the offset the checkpoint names (Kafka's StreamTask.postCommit checkpoints
// the offsets the producer acknowledged, after the flush: everything the task wrote is below
// them). `checkpoint` bounds the other side (never ahead of the stores); a checkpoint behind
// its running task's own acknowledged writes is invisible to it, since a store may be ahead of
// a checkpoint written before it processed more (mutant 128393a7d0e4 of the first mutation
// campaign, seed 1: FlushProducer advanced only the first acknowledged changelog, and every
// other running task's checkpoints fell behind its writes; MUTATION_SCORE.md).
//
// A value the changelog also has below the offset (a zombie's interleaved write, a count the
// key had before) is allowed: only a write found solely beyond the checkpoint is a violation.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

// The lowest offset at which `key` took `value` in `history`, if at or beyond `from` only;
// nullopt when the history has that value below `from` too, or nowhere (not this invariant).
std::optional<int64_t> OnlyAtOrBeyond(const ChangelogHistory& history, const std::string& key,
                                      const std::string& value, int64_t from) {
  auto it = history.keys().find(key);
  if (it == history.keys().end()) return std::nullopt;
  std::optional<int64_t> beyond;
  for (const ChangelogHistory::Entry& e : it->second) {
    if (!e.value.has_value() || *e.value != value) continue;
    if (e.offset < from) return std::nullopt;
    if (!beyond) beyond = e.offset;
  }
  return beyond;
}

class CommitCheckpointChecker final : public Checker {
 public:
  explicit CommitCheckpointChecker(OracleContext& c) : Checker(c, "commit_checkpoint") {}

  void OnCheckpointWritten(const events::StateInfo& state,
                           const CheckpointOffsets& offsets) override {
    const TaskIncarnation* owner = ledger().OwnerOf(state);
    if (owner == nullptr || !state.stores_read) return;
    const TaskRecord* task = ledger().Find(*owner);
    if (task == nullptr || task->type != TaskType::kActive || task->state != TaskState::kRunning) {
      return;  // only the commit path is judged here (checkpoint, checkpoint_progress: the rest)
    }
    for (const auto& [tp, offset] : offsets) {
      const events::StoreSnapshot* store = state.StoreFor(tp);
      auto history = ledger().history.find(tp);
      if (store == nullptr || !store->readable || history == ledger().history.end()) continue;
      for (const auto& [key, value] : store->data) {
        const std::optional<int64_t> at = OnlyAtOrBeyond(history->second, key, value, offset);
        if (!at) continue;
        Violation(owner->ToString(),
                  fmt::format("the running task's checkpoint names {} at {}, but its store '{}' "
                              "already holds key '{}' = '{}', which the changelog has only at "
                              "offset {}: a write of its own left out of the checkpoint",
                              tp.ToString(), offset, store->name, key, value, *at));
      }
    }
  }
};

RESTORESIM_CHECKER(220, CommitCheckpointChecker);

}  // namespace

}  // namespace restoresim::properties
