#include "core/runtime/updater_checkpoints.h"

#include <fmt/format.h>

#include "core/runtime/runtime_observer.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

UpdaterCheckpoints::UpdaterCheckpoints(UpdaterCheckpointsConfig config, Clock& clock,
                                       UpdaterTasks& tasks, StateUpdaterMetrics& metrics,
                                       Warn warn)
    : config_(std::move(config)), clock_(clock), tasks_(tasks), metrics_(metrics),
      warn_(std::move(warn)) {
  RS_CHECK(warn_ != nullptr, "restore thread '{}': checkpoints without a warning sink",
           config_.restore_thread);
  RS_CHECK(config_.checkpoint_offset_delta_min >= 0);
}

void UpdaterCheckpoints::Start(ChangelogReader& reader) {
  RS_CHECK(reader_ == nullptr, "restore thread '{}' started twice", config_.restore_thread);
  reader_ = &reader;
  next_checkpoint_ns_ = DeadlineAfter(clock_.NowNs(), config_.checkpoint_interval_ns);
}

void UpdaterCheckpoints::MaybeCheckpoint() {
  const TimeNs start_ns = clock_.NowNs();
  CheckpointDue();
  metrics_.AddCheckpoint(clock_.NowNs() - start_ns);
}

// Kafka's maybeCheckpointUpdatingTasks: once per commit.interval.ms, each owned task whose
// stores moved more than checkpoint_offset_delta_min records since its last checkpoint (Kafka:
// 10 000, not configurable) is flushed and checkpointed; the others are left alone, so a
// restoration that barely moved does not rewrite its checkpoint file every interval.
void UpdaterCheckpoints::CheckpointDue() {
  if (clock_.NowNs() < next_checkpoint_ns_) return;
  next_checkpoint_ns_ = DeadlineAfter(clock_.NowNs(), config_.checkpoint_interval_ns);
  RS_CHECK(config_.checkpoint_offset_delta_min >= 0);
  for (auto& [id, task] : tasks_.updating()) {
    StateManager& sm = task->state_manager();
    if (!sm.CheckpointNeeded(/*enforce=*/false, config_.checkpoint_offset_delta_min)) continue;
    absl::Status s = sm.Flush();
    if (s.ok()) s = sm.Checkpoint();
    if (!s.ok()) warn_(task->incarnation(), s);
  }
}

void UpdaterCheckpoints::BeforeHandBack(Task& task) {
  const TimeNs start_ns = clock_.NowNs();  // Kafka's measureCheckpointLatency
  StateManager& sm = task.state_manager();
  absl::Status s = sm.Flush();
  if (s.ok()) {
    s = sm.Checkpoint();
  } else {
    RS_OBSERVE(OnCheckpointResult, sm, /*written=*/false);  // the attempt failed at the flush
  }
  if (!s.ok()) warn_(task.incarnation(), s);
  metrics_.AddCheckpoint(clock_.NowNs() - start_ns);
}

absl::Status UpdaterCheckpoints::CheckpointOwned() {
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

void UpdaterCheckpoints::MaybeHold() {
  HoldPoint* hold = config_.hold;
  if (hold == nullptr || !hold->requested()) return;
  const size_t owned_before = tasks_.updating().size();
  if (!hold->Hold([this]() { return CheckpointOwned(); })) return;
  RS_CHECK_EQ(tasks_.updating().size(), owned_before, "restore thread '{}' lost tasks while held",
              config_.restore_thread);
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
