// StateManager (Kafka Streams' ProcessorStateManager): a task's stores, their changelog
// partitions and offsets, its checkpoint file and its type (active or standby).
//
// Offsets here are positions: the offset of the next changelog record a store has not seen
// (Kafka checkpoints the last seen offset; "next" avoids the +1 at every use). Two sets are
// kept, so that a checkpoint is never ahead of flushed data:
//   pending  advanced by restoration and by acknowledged changelog writes;
//   flushed  what pending was when the stores last flushed successfully; the only offsets a
//            checkpoint file ever names.
//
// Two hazards of the separate restore thread (KAFKA-10199) live here:
//   * "materialise": ChangelogPartitions() derives from the registered stores, so Clear()
//     (on close and on revive) empties it. Whoever must tell the restore thread which
//     changelogs to unregister captures them first with CaptureChangelogPartitions().
//   * deferred type conversion: a recycle prepares the new type on the stream thread
//     (PrepareNewTaskType) and the restore thread completes it
//     (MaybeCompleteTaskTypeConversion) between unregistering the old changelogs and
//     registering them again, so the changelog reader never sees the type change mid-way.
//
// Thread-safety: not thread-safe. Its task's owner (stream thread or restore thread, handed
// over through the restore thread's queues) is the only caller.
#ifndef RESTORESIM_CORE_RUNTIME_STATE_MANAGER_H_
#define RESTORESIM_CORE_RUNTIME_STATE_MANAGER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/util/check.h"
#include "core/port/file_system.h"
#include "core/runtime/state_directory.h"
#include "core/runtime/task_id.h"
#include "core/state/checkpoint_file.h"
#include "core/state/key_value_store.h"

namespace restoresim {

// Kafka's OFFSET_DELTA_THRESHOLD_FOR_CHECKPOINT: an unforced checkpoint (the state updater's
// periodic one, a running task's commit under at-least-once) is written only once the stores
// moved more than this many records since the last one. Fixed in Kafka; a field here
// (RuntimeConfig::checkpoint_offset_delta_min) so simulated changelogs of tens of records
// still checkpoint periodically.
inline constexpr int64_t kCheckpointOffsetDeltaMin = 10'000;

enum class TaskType { kActive, kStandby };
std::string_view TaskTypeName(TaskType type);

// Opens a store in `dir`: LogStore through the file-system port, or RocksDB for real runs.
using StoreOpener = std::function<absl::StatusOr<std::unique_ptr<KeyValueStore>>(
    const std::string& dir, const std::string& name)>;

struct StateManagerConfig {
  std::string application_id;
  std::string task_dir;          // "<state.dir>/<application.id>/<task id>"
  bool exactly_once = false;     // processing.guarantee=exactly_once_v2
  FileSystem* fs = nullptr;
  StoreOpener open_store;
  std::vector<std::string> store_names = {"counts"};
  // The instance's task directories, shared by its stream threads (null: no locking, for
  // tests of one state manager).
  StateDirectory* directory = nullptr;
};

class StateManager {
 public:
  StateManager(TaskId id, TaskType type, StateManagerConfig config);
  ~StateManager();

  // Locks the task directory (Aborted if another thread's incarnation holds it: retry later;
  // Unavailable stays the file system's I/O error), opens the stores and reads the
  // checkpoint. A missing or unreadable checkpoint means restoring from the beginning (reason
  // in checkpoint_note()). Under exactly-once a store that has data but no checkpoint is
  // corrupt: its directory is wiped first; and the checkpoint, once read, is deleted (Kafka
  // 4.0-4.2), so none exists until restoration or a clean close writes one.
  [[nodiscard]] absl::Status RegisterStores();
  bool registered() const { return !stores_.empty(); }

  // The changelog partitions of the registered stores; empty after Clear().
  std::vector<TopicPartition> ChangelogPartitions() const;
  // Whether every one of ChangelogPartitions() is in `partitions` (without building them).
  bool ChangelogsAllIn(const std::set<TopicPartition>& partitions) const;
  // A copy taken now, to be handed to the restore thread before the stores are cleared.
  std::vector<TopicPartition> CaptureChangelogPartitions() const { return ChangelogPartitions(); }
  KeyValueStore* StoreForChangelog(const TopicPartition& changelog);
  bool OwnsChangelog(const TopicPartition& changelog) const;
  KeyValueStore* Store(std::string_view name);
  // The names of the registered stores (empty after Clear()).
  std::vector<std::string> StoreNames() const;
  // Calls fn(name, store, changelog) for every registered store, in name order, without
  // copying names or looking anything up (a task's every process step goes through its
  // stores). fn must not register or clear the stores.
  template <typename Fn>
  void ForEachStore(Fn&& fn) const {
    RS_CHECK_EQ(changelogs_.size(), stores_.size(), "task {}: changelogs out of step",
                id_.ToString());
    auto changelog = changelogs_.begin();
    for (const auto& [name, store] : stores_) {
      RS_CHECK(store != nullptr, "task {}: store '{}' registered empty", id_.ToString(), name);
      fn(name, *store, *changelog++);
    }
    RS_CHECK(changelog == changelogs_.end(), "task {}: stores changed while visited",
             id_.ToString());
  }

  // Where restoration of `changelog` starts: its checkpointed position, or nullopt (from the
  // beginning).
  std::optional<int64_t> StartOffset(const TopicPartition& changelog) const;
  // The store now holds everything below `next_offset` of `changelog` (not yet flushed).
  void Advance(const TopicPartition& changelog, int64_t next_offset);
  const CheckpointOffsets& pending_offsets() const { return pending_; }
  const CheckpointOffsets& flushed_offsets() const { return flushed_; }
  // What the checkpoint file names, as far as this state manager knows: the one read at
  // registration (claims the stores do not back dropped) or the last it wrote; and whether the
  // file is there (false once exactly-once deleted it).
  const CheckpointOffsets& last_checkpoint() const { return last_checkpoint_; }
  bool checkpoint_on_disk() const { return checkpoint_on_disk_; }
  // How far the stores moved since the last checkpoint written (or, before the first, since
  // registration): the sum over changelogs of pending minus what that checkpoint named.
  // Kafka's StateManagerUtil.checkpointNeeded compares it with the 10 000-record threshold
  // (ProcessorStateManager's offset snapshot since the last flush).
  int64_t OffsetDeltaSinceCheckpoint() const;
  // Kafka's checkpointNeeded: a forced checkpoint (restoration done, removed, closed) is
  // always needed; an unforced one only once the stores moved more than `delta_min` records.
  // Under exactly-once a standby whose checkpoint was deleted at load needs one too, whatever
  // it restored since: a caught-up standby that receives nothing would otherwise have none on
  // disk (a restoresim departure, docs/DESIGN.md: the harness and the offset sums read it).
  // Observed (OnCheckpointDecision): the oracle's checkpoint_delta recomputes the answer.
  bool CheckpointNeeded(bool enforce, int64_t delta_min) const;
  bool StandbyWithoutCheckpoint() const {
    return config_.exactly_once && type_ == TaskType::kStandby && !checkpoint_on_disk_;
  }

  [[nodiscard]] absl::Status Flush();
  // Writes the flushed offsets (never the pending ones). Under exactly-once, an active task's
  // checkpoint exists only while it is not processing: see RemoveCheckpointForProcessing.
  [[nodiscard]] absl::Status Checkpoint();
  // Exactly-once: the checkpoint is removed while an active task processes, so a crash in the
  // middle leaves "data but no checkpoint" (corrupt, wiped on restart) instead of a checkpoint
  // that understates what the stores hold.
  [[nodiscard]] absl::Status RemoveCheckpointForProcessing();
  // Clean: flush, checkpoint, close. Dirty: close without either (the caller may then Wipe).
  [[nodiscard]] absl::Status Close(bool clean);
  // Forgets the stores (after Close): ChangelogPartitions() becomes empty.
  void Clear();
  // Deletes the task directory (stores and checkpoint). REQUIRES: closed.
  [[nodiscard]] absl::Status Wipe();

  TaskId id() const { return id_; }
  bool exactly_once() const { return config_.exactly_once; }
  const std::string& application_id() const { return config_.application_id; }
  TaskType type() const { return type_; }
  std::optional<TaskType> pending_type() const { return pending_type_; }
  // The type the task will have once the restore thread completes the change. Preparing the
  // current type cancels a pending change; the latest preparation wins.
  void PrepareNewTaskType(TaskType type);
  TaskType effective_type() const { return pending_type_.value_or(type_); }
  // Completes a prepared conversion; returns whether there was one.
  bool MaybeCompleteTaskTypeConversion();
  const std::string& checkpoint_note() const { return checkpoint_note_; }
  std::string checkpoint_path() const { return config_.task_dir + "/.checkpoint"; }
  const std::string& task_dir() const { return config_.task_dir; }

 private:
  TopicPartition ChangelogOf(const std::string& store) const;
  // Derives changelogs_ from stores_ again; called after every change to stores_.
  void RefreshChangelogs();
  absl::Status OpenStores();
  // Forgets the checkpoint's offset of a store that lost its data, on disk at once.
  absl::Status WipeIfNotAtCheckpoint(const std::string& name,
                                     std::unique_ptr<KeyValueStore>& store);
  absl::Status DropCheckpointClaim(const TopicPartition& changelog, std::string_view why);
  absl::Status ReadCheckpointOrNote();
  // Deletes the checkpoint file (a missing one is fine) and syncs the directory.
  absl::Status DeleteCheckpointFile();

  const TaskId id_;
  TaskType type_;
  std::optional<TaskType> pending_type_;
  const StateManagerConfig config_;
  std::map<std::string, std::unique_ptr<KeyValueStore>, std::less<>> stores_;
  // stores_' changelog partitions in stores_' order, derived once per change of stores_
  // rather than at every read (each event about a task reads them).
  std::vector<TopicPartition> changelogs_;
  CheckpointOffsets checkpointed_;  // as read at registration
  CheckpointOffsets pending_;
  CheckpointOffsets flushed_;
  CheckpointOffsets last_checkpoint_;  // what the last checkpoint written named (registration)
  std::string checkpoint_note_;
  uint64_t lock_token_ = 0;  // with a directory: this state manager's lock token
  // Exactly once: whether this state manager's directory has a checkpoint file (false once it
  // deleted it, true once it wrote one).
  bool checkpoint_on_disk_ = true;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_STATE_MANAGER_H_
