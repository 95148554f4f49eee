// ChangelogReader (Kafka Streams' StoreChangelogReader): restores active tasks' stores from
// their changelogs up to the end offsets the admin client reports, and keeps standby tasks'
// stores updated without an end. Owned by exactly one restore thread and deliberately not
// thread-safe (the seed's design: only the restore thread touches it).
//
// Modes: while any active changelog restores, standby changelogs are paused (actives first);
// once none does, standbys resume ("standby updating").
//
// Listeners, as Kafka's StoreChangelogReader calls them (docs/DESIGN.md, "Kafka fidelity"):
// an active changelog's restore listener hears start when it is prepared — also when there is
// nothing to restore (its position is at the end offset: start and end at once, 0 records) —
// then batches, then end or suspended; a standby changelog's update listener (KIP-988) hears
// start when it is prepared, batches, and suspended when it is unregistered (PROMOTED or
// MIGRATED: UnregisterReason), nothing when the reader is cleared at shutdown. A checkpoint past
// the changelog's end is restored from like any other: the restore consumer's fetch from there
// is out of range, which is corruption (auto.offset.reset=none, as Kafka's restore consumer).
//
// Per changelog: registered -> restoring -> completed (actives only). A registration names the
// task incarnation it belongs to, so corruption is reported for the incarnation that owned the
// changelog, and the stream thread can drop reports about incarnations it no longer owns.
// Out-of-range positions (the log start moved past a checkpoint) become corruption: the
// changelogs are unregistered here, so restoration of the others goes on while the stream
// thread handles the report.
//
// Errors, as Kafka's StoreChangelogReader classifies them (docs/DESIGN.md, "Kafka fidelity"):
//   task-scoped   a store that cannot take a restored batch (or end its restoration) with a
//                 non-retryable error fails its task: every changelog of the owner is
//                 unregistered and the failure reported in RestoreStep::failed;
//   retriable     an end-offset read that fails with a retryable error, or a store write
//                 that does, stalls the tasks it concerns (RestoreStep::stalled): their
//                 restore thread starts or checks their task.timeout.ms; progress of a task
//                 (records applied, a changelog completed, its end offsets read) is reported
//                 in RestoreStep::progressed and clears it;
//   task-less     any other non-retryable error (a poll, an assignment): Restore() returns it.
//
// Thread-safety: not thread-safe; the restore thread only.
#ifndef RESTORESIM_CORE_RUNTIME_CHANGELOG_READER_H_
#define RESTORESIM_CORE_RUNTIME_CHANGELOG_READER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/runtime/restore_listener.h"
#include "core/runtime/standby_update_listener.h"
#include "core/runtime/state_manager.h"
#include "core/sync/clock.h"
#include "core/transport/transport.h"

namespace restoresim {

struct ChangelogReaderConfig {
  std::string name = "changelog-reader";  // its restore thread's name, for observers
  TimeNs poll_timeout_ns = 100 * kMillisecond;
  // Told about standby changelogs (KIP-988); may be null. Called on the reader's thread.
  StandbyUpdateListener* standby_listener = nullptr;
};

// Why changelogs leave the reader: a standby's suspend reason for its update listener, or
// kShutdown (its restore thread stops: standbys are told nothing, as Kafka's state updater
// clears its reader; actives still hear suspended — a departure, docs/DESIGN.md).
enum class UnregisterReason { kMigrated, kPromoted, kShutdown };

// One incarnation's restoration over its registered changelogs, for task-level metrics:
// records written to its stores, and records announced to restore (an active's end offset
// minus its start position, summed over its started changelogs; Kafka's remaining-records
// sensor is raised by this at the start).
struct OwnerRestoration {
  TaskType type = TaskType::kActive;
  int64_t restored = 0;
  int64_t announced = 0;
};

enum class ReaderMode { kActiveRestoring, kStandbyUpdating };

// What one Restore() step did.
struct RestoreStep {
  int64_t records = 0;
  // Corrupted changelogs per owning incarnation (already unregistered).
  std::map<TaskIncarnation, std::set<TopicPartition>> corrupted;
  // Active changelogs that completed during this step.
  std::vector<TopicPartition> completed;
  // Task-scoped failures, per owning incarnation (its changelogs already unregistered).
  std::map<TaskIncarnation, absl::Status> failed;
  // Owners held back by a retryable error this step (the first error each), and owners that
  // made progress (no owner is in both: progress wins).
  std::map<TaskIncarnation, absl::Status> stalled;
  std::set<TaskIncarnation> progressed;
};

class ChangelogReader {
 public:
  ChangelogReader(RestoreConsumer& consumer, Admin& admin, StateRestoreListener* listener,
                  ChangelogReaderConfig config = {});
  ~ChangelogReader();

  // REQUIRES: `changelog` not registered; `state` owns it and outlives the registration.
  void Register(const TopicPartition& changelog, StateManager* state, TaskIncarnation owner);
  // Unregisters (idempotent). A changelog that had started but not completed is reported to
  // its listener as suspended (standbys with `reason`; none under kShutdown).
  void Unregister(const std::vector<TopicPartition>& changelogs,
                  UnregisterReason reason = UnregisterReason::kMigrated);

  // One step: prepares new changelogs, polls once, applies what came, completes actives.
  // Retryable transport errors leave the step empty (the next step retries); other errors are
  // returned — also after the step applied batches, completed changelogs or marked owners
  // failed or corrupted (a seek back or an assignment that failed late): TakeFailedStep then
  // gives what it did.
  absl::StatusOr<RestoreStep> Restore();
  // After Restore returned an error: what that step did before it failed, with every failure
  // and corruption report not yet returned (as a step returns them); empty otherwise.
  RestoreStep TakeFailedStep();
  // After a checkpoint's restore: re-reads the end offset of every restoring active changelog
  // (the broker may have moved on while the process was frozen). On failure the next Restore
  // step tries again before it fetches.
  absl::Status RefreshEndOffsets();

  ReaderMode mode() const;
  bool IsRegistered(const TopicPartition& changelog) const;
  // Every changelog registered by `owner`, completed ones included.
  std::vector<TopicPartition> ChangelogsOf(const TaskIncarnation& owner) const;
  std::set<TopicPartition> Registered() const;
  std::set<TopicPartition> Completed() const;
  // Records between the position and the end offset, summed over restoring actives.
  int64_t RemainingRecords() const;
  // For one incarnation's active changelogs not completed: records left (1 for one not yet
  // started); 0 when all completed.
  int64_t RemainingOf(const TaskIncarnation& owner) const;
  // Per incarnation with a registered changelog (completed ones included).
  std::map<TaskIncarnation, OwnerRestoration> RestorationByOwner() const;
  int64_t total_restored() const { return total_restored_; }
  // Records written to standby stores (a subset of total_restored).
  int64_t standby_updated() const { return standby_updated_; }

 private:
  enum class State { kRegistered, kRestoring, kCompleted };
  struct Changelog {
    StateManager* state = nullptr;
    TaskIncarnation owner;
    TaskType type = TaskType::kActive;
    State status = State::kRegistered;
    int64_t end_offset = -1;  // actives only, once known
    int64_t position = 0;
    int64_t restored = 0;
    bool started = false;   // its listener was told it started (restore or update)
    int64_t announced = 0;  // actives: records to restore, told at the start
    std::string store;
  };

  // changelog_reader_listeners.cc: the listener calls, each observed first.
  void NotifyStart(const TopicPartition& tp, Changelog& c);
  void NotifyBatch(const TopicPartition& tp, const Changelog& c, int64_t batch_end_offset,
                   int64_t records);
  void NotifyEnd(const TopicPartition& tp, const Changelog& c);
  void NotifySuspended(const TopicPartition& tp, const Changelog& c, UnregisterReason reason);

  absl::Status Prepare(RestoreStep& step);
  // Assigns the restore consumer every changelog restoring, and those in `preparing` (about to
  // be positioned); pauses standbys while actives restore. A changelog registered but not yet
  // positioned is never assigned: the consumer's poll would fail as a whole for want of its
  // position (issue 23, bug 1).
  absl::Status UpdateAssignment(const std::set<TopicPartition>& preparing = {});
  // Moves the records' keys and values into the store.
  absl::Status Apply(PartitionRecords& records, RestoreStep& step);
  absl::Status CheckCompletion(const TopicPartition& tp, Changelog& c, RestoreStep& step);
  absl::Status Step(RestoreStep& step);
  // Moves the reports not yet returned into `step`.
  RestoreStep WithReports(RestoreStep step);
  // Unregisters the owners' changelogs and keeps the report until a step returns (or
  // TakeFailedStep takes it): a step that fails after finding corruption must not lose it (the
  // task would never come back).
  void MarkCorrupted(const std::vector<TopicPartition>& partitions);
  // A task-scoped failure of `tp`'s owner: unregisters every changelog of it and keeps the
  // report until a step returns or TakeFailedStep takes it (as corruption).
  void MarkFailed(const TopicPartition& tp, const absl::Status& error);
  // A store error on `tp`: a retryable one stalls its owner, any other fails it.
  void StoreError(const TopicPartition& tp, const absl::Status& error, RestoreStep& step);
  // Whether an assigned changelog restores and is not paused (asked every step).
  bool AnyFetchable() const;

  RestoreConsumer& consumer_;
  Admin& admin_;
  StateRestoreListener* listener_;
  const ChangelogReaderConfig config_;
  std::map<TopicPartition, Changelog> changelogs_;
  std::vector<TopicPartition> assigned_;
  std::vector<TopicPartition> paused_;
  int64_t total_restored_ = 0;
  int64_t standby_updated_ = 0;
  std::map<TaskIncarnation, std::set<TopicPartition>> corrupted_;  // not yet reported
  std::map<TaskIncarnation, absl::Status> failed_;                 // not yet reported
  std::optional<RestoreStep> failed_step_;  // the last Restore's, when it failed
  ReaderMode reported_mode_ = ReaderMode::kStandbyUpdating;  // last told to observers
  bool refresh_pending_ = false;  // RefreshEndOffsets failed: retried at the next step
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_CHANGELOG_READER_H_
