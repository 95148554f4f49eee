// RestoreThread, part 3: periodic checkpoints of what it restores, and holding at a
// checkpoint/restore cycle's safe point (hold_point.h).
#include <fmt/format.h>

#include "core/runtime/restore_thread.h"
#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

// Kafka's maybeCheckpointUpdatingTasks: once per commit.interval.ms, each owned task whose
// stores moved more than checkpoint_offset_delta_min records since its last checkpoint (Kafka:
// 10 000, not configurable) is flushed and checkpointed; the others are left alone, so a
// restoration that barely moved does not rewrite its checkpoint file every interval.
void RestoreThread::MaybeCheckpoint() {
  if (clock_.NowNs() < next_checkpoint_ns_) return;
  next_checkpoint_ns_ = DeadlineAfter(clock_.NowNs(), config_.checkpoint_interval_ns);
  RS_CHECK(config_.checkpoint_offset_delta_min >= 0);
  for (auto& [id, task] : tasks_.updating()) {
    StateManager& sm = task->state_manager();
    if (!sm.CheckpointNeeded(/*enforce=*/false, config_.checkpoint_offset_delta_min)) continue;
    absl::Status s = sm.Flush();
    if (s.ok()) s = sm.Checkpoint();
    if (!s.ok()) {
      Emit(RestoreEvent{.kind = RestoreEvent::Kind::kWarning, .incarnation = task->incarnation(),
                        .error = s});
    }
  }
}

absl::Status RestoreThread::CheckpointOwned() {
  absl::Status first;
  for (auto& [id, task] : tasks_.updating()) {
    StateManager& sm = task->state_manager();
    absl::Status s = sm.Flush();
    if (s.ok()) {
      s = sm.Checkpoint();
    } else {
      RS_OBSERVE(OnCheckpointResult, sm, /*written=*/false);
    }
    if (!s.ok() && first.ok()) {
      first = absl::Status(s.code(), fmt::format("{}: {}", task->incarnation().ToString(),
                                                 std::string(s.message())));
    }
  }
  return first;
}

void RestoreThread::MaybeHold() {
  HoldPoint* hold = config_.hold;
  if (hold == nullptr || !hold->requested()) return;
  const size_t owned_before = tasks_.updating().size();
  if (!hold->Hold([this]() { return CheckpointOwned(); })) return;
  RS_CHECK_EQ(tasks_.updating().size(), owned_before, "restore thread '{}' lost tasks while held",
              config_.name);
  TraceMark("cover", "restore thread held at a checkpoint");
  // The broker moved on while the instance was frozen: restore to today's end offsets.
  // (Mutation stale-end-offsets-after-restore: keeps the ones read before the freeze.)
  if (reader_ != nullptr && !RS_MUTANT(kStaleEndOffsetsAfterRestore)) {
    if (!reader_->RefreshEndOffsets().ok()) {
      TraceMark("cover", "end offsets re-read failed after a restore");
    }
  }
}

}  // namespace restoresim
