// EventRecorder's hooks for the changelog reader and the state managers.
#include <utility>

#include "core/events/event_recorder.h"
#include "core/events/recorder_lock.h"

namespace restoresim::events {
namespace {


}  // namespace

// ---- the changelog reader ----

void EventRecorder::OnRegistered(std::string_view reader, const TopicPartition& changelog,
                                 const TaskIncarnation& owner, TaskType type) {
  RecorderLock lock(mu_);
  Registered e{.reader = Name(reader), .changelog = changelog, .owner = owner, .type = type};
  // Where its restoration starts (read on the restore thread, which holds the task now).
  if (auto it = open_.find(owner); it != open_.end() && it->second != nullptr) {
    e.owner_state = true;
    e.start_offset = it->second->StartOffset(changelog);
  }
  Emit(std::move(e));
}

void EventRecorder::OnUnregistered(std::string_view reader, const TopicPartition& changelog,
                                   const TaskIncarnation& owner) {
  RecorderLock lock(mu_);
  Emit(Unregistered{.reader = Name(reader), .changelog = changelog, .owner = owner});
}

void EventRecorder::OnRestoredBatch(std::string_view reader, const TopicPartition& changelog,
                                    const TaskIncarnation& owner, TaskType type,
                                    int64_t next_offset, int64_t records) {
  RecorderLock lock(mu_);
  BatchRestored e{.reader = Name(reader),
                  .changelog = changelog,
                  .owner = owner,
                  .type = type,
                  .next_offset = next_offset,
                  .records = records,
                  .log_start = LogStart(changelog)};
  // The stores after every batch (the restore thread holds the task now): eos_restored_batch
  // (exactly once) and restored_batch (at least once) hold them to the changelog's history at
  // batch granularity.
  if (auto it = open_.find(owner); it != open_.end() && it->second != nullptr) {
    e.exactly_once = it->second->exactly_once();
    e.state = Snapshot(*it->second, /*full=*/true);
  }
  Emit(std::move(e));
}

void EventRecorder::OnCompleted(std::string_view reader, const TopicPartition& changelog,
                                const TaskIncarnation& owner, int64_t position,
                                int64_t end_offset) {
  RecorderLock lock(mu_);
  Emit(Completed{.reader = Name(reader),
                 .changelog = changelog,
                 .owner = owner,
                 .position = position,
                 .end_offset = end_offset,
                 .log_start = LogStart(changelog)});
}

void EventRecorder::OnListener(std::string_view reader, const TopicPartition& changelog,
                               ListenerCall call) {
  RecorderLock lock(mu_);
  Emit(ListenerCalled{.reader = Name(reader), .changelog = changelog, .call = call});
}

void EventRecorder::OnReaderDestroyed(std::string_view reader) {
  RecorderLock lock(mu_);
  Emit(ReaderDestroyed{.reader = Name(reader)});
}

void EventRecorder::OnReaderMode(std::string_view reader, ReaderMode mode) {
  RecorderLock lock(mu_);
  Emit(ReaderModeChanged{.reader = Name(reader), .mode = mode});
}

// ---- state managers ----

void EventRecorder::OnStoresRegistered(const StateManager& state) {
  RecorderLock lock(mu_);
  Emit(StoresRegistered{.state = Snapshot(state, true)});
}

void EventRecorder::OnStoresReleased(const StateManager& state) {
  RecorderLock lock(mu_);
  Emit(StoresReleased{.state = Snapshot(state, false)});
}

void EventRecorder::OnStoresClosing(const StateManager& state, bool clean) {
  RecorderLock lock(mu_);
  Emit(StoresClosing{.state = Snapshot(state, clean), .clean = clean});
}

void EventRecorder::OnAdvance(const StateManager& state, const TopicPartition& changelog,
                              int64_t next_offset) {
  RecorderLock lock(mu_);
  Emit(Advanced{
      .state = Snapshot(state, false), .changelog = changelog, .next_offset = next_offset});
}

void EventRecorder::OnFlushed(const StateManager& state) {
  RecorderLock lock(mu_);
  Emit(Flushed{.state = Snapshot(state, false)});
}

void EventRecorder::OnCheckpointWritten(const StateManager& state,
                                        const CheckpointOffsets& offsets) {
  RecorderLock lock(mu_);
  Emit(CheckpointWritten{.state = Snapshot(state, true), .offsets = offsets});
}

void EventRecorder::OnCheckpointResult(const StateManager& state, bool written) {
  RecorderLock lock(mu_);
  Emit(CheckpointResult{.state = Snapshot(state, false), .written = written});
}

void EventRecorder::OnCheckpointDecision(const StateManager& state, bool enforced,
                                         int64_t delta_min, bool standby_without_checkpoint,
                                         bool needed) {
  RecorderLock lock(mu_);
  Emit(CheckpointDecided{.state = Snapshot(state, false),
                         .pending = state.pending_offsets(),
                         .enforced = enforced,
                         .delta_min = delta_min,
                         .standby_without_checkpoint = standby_without_checkpoint,
                         .needed = needed});
}

void EventRecorder::OnWiped(const StateManager& state) {
  RecorderLock lock(mu_);
  Emit(Wiped{.state = Snapshot(state, false)});
}

void EventRecorder::OnCheckpointDeleted(const StateManager& state) {
  RecorderLock lock(mu_);
  Emit(CheckpointDeleted{.state = Snapshot(state, false)});
}

void EventRecorder::OnStoreWipedOnOpen(const StateManager& state,
                                       const TopicPartition& changelog) {
  RecorderLock lock(mu_);
  Emit(StoreWipedOnOpen{.state = Snapshot(state, false), .changelog = changelog});
}

void EventRecorder::OnCheckpointClaimDropped(const StateManager& state,
                                             const TopicPartition& changelog, int64_t claimed) {
  RecorderLock lock(mu_);
  Emit(CheckpointClaimDropped{
      .state = Snapshot(state, false), .changelog = changelog, .claimed = claimed});
}

}  // namespace restoresim::events
