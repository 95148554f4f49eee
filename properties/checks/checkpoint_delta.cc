// checkpoint_delta: an unforced checkpoint decision (the restore thread's periodic one, an
// at-least-once commit's) says "needed" exactly when the stores moved more than the threshold
// past the last checkpoint written or read at registration, a changelog it did not name
// counting from 0, or when an exactly-once standby has none on disk (Kafka's
// StateManagerUtil.checkpointNeeded, paraphrased: the offset snapshot since the last
// checkpoint against OFFSET_DELTA_THRESHOLD_FOR_CHECKPOINT).
//
// The last checkpoint is the oracle's own, kept from the registration and the checkpoints that
// were written, not the runtime's: a runtime that measures from the wrong checkpoint either
// rewrites a checkpoint file at every commit for nothing or leaves its checkpoint behind the
// threshold (the second campaign's survivor 9de1258fd53c, docs/MUTATION_SCORE.md). Whether an
// exactly-once standby has a checkpoint on disk is the runtime's word (a restoresim departure,
// docs/DESIGN.md; the eos checkers judge the file itself).
#include <map>

#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class CheckpointDeltaChecker final : public Checker {
 public:
  explicit CheckpointDeltaChecker(OracleContext& c) : Checker(c, "checkpoint_delta") {}

  void OnStoresRegistered(const events::StateInfo& state) override {
    last_[state.state_id] = state.flushed;  // the checkpoint as read, claims dropped already
    attempt_.erase(state.state_id);
  }
  // Closed, cleared or destroyed: the address may be reused by another state manager.
  void OnStoresReleased(const events::StateInfo& state) override {
    last_.erase(state.state_id);
    attempt_.erase(state.state_id);
  }
  void OnCheckpointWritten(const events::StateInfo& state,
                           const CheckpointOffsets& offsets) override {
    attempt_[state.state_id] = offsets;
  }
  void OnCheckpointResult(const events::StateInfo& state, bool written) override {
    auto attempt = attempt_.find(state.state_id);
    if (attempt == attempt_.end()) return;  // failed at the flush: nothing was claimed
    auto last = last_.find(state.state_id);
    if (written && last != last_.end()) last->second = attempt->second;
    attempt_.erase(attempt);
  }

  void OnCheckpointDecision(const events::CheckpointDecided& d) override {
    if (d.enforced) return;  // a forced checkpoint is always needed
    auto last = last_.find(d.state.state_id);
    if (last == last_.end()) return;  // registered before the oracle was told (a test by hand)
    const int64_t delta = Delta(last->second, d.pending);
    const bool expected = delta > d.delta_min || d.standby_without_checkpoint;
    if (d.needed == expected) return;
    const TaskIncarnation* who = ledger().OwnerOf(d.state);
    Violation(who != nullptr ? who->ToString() : d.state.task_dir,
              fmt::format("an unforced checkpoint {} with its stores {} records past the last "
                          "checkpoint written (threshold {}{})",
                          d.needed ? "taken" : "skipped", delta, d.delta_min,
                          d.standby_without_checkpoint ? ", a standby without one on disk" : ""));
  }

 private:
  static int64_t Delta(const CheckpointOffsets& last, const CheckpointOffsets& pending) {
    int64_t delta = 0;
    for (const auto& [changelog, next] : pending) {
      auto before = last.find(changelog);
      delta += next - (before == last.end() ? 0 : before->second);
    }
    return delta;
  }

  std::map<uint64_t, CheckpointOffsets> last_;     // per state manager: last written or read
  std::map<uint64_t, CheckpointOffsets> attempt_;  // a write between its claim and its result
};

RESTORESIM_CHECKER(260, CheckpointDeltaChecker);

}  // namespace

}  // namespace restoresim::properties
