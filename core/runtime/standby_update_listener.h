// StandbyUpdateListener, as in Kafka Streams (KIP-988): told when a standby task's changelog
// starts being updated, after each batch loaded into its store, and when the update stops
// because the standby leaves the restore thread — PROMOTED when it is recycled into an active
// task, MIGRATED when it is revoked, closed, corrupted or failed. Every start is followed by at
// most one suspended: none when the restore thread shuts down with the standby still updating
// (Kafka's state updater clears its changelog reader without listener calls as it stops).
//
// Offsets are Kafka's: `starting_offset` is the restore consumer's position (the next offset to
// load); `batch_end_offset` and `store_offset` are offsets of the last record loaded (-1: none
// yet). `current_end_offset` is the changelog's end as the consumer last saw it, -1 when unknown
// — always here: the restore consumer port reports no lag (docs/DESIGN.md, "Kafka fidelity").
//
// Thread-safety: called on the restore thread that updates the standby; an implementation
// shared by several restore threads must synchronise itself.
#ifndef RESTORESIM_CORE_RUNTIME_STANDBY_UPDATE_LISTENER_H_
#define RESTORESIM_CORE_RUNTIME_STANDBY_UPDATE_LISTENER_H_

#include <cstdint>
#include <string_view>

#include "core/runtime/task_id.h"
#include "core/transport/transport.h"

namespace restoresim {

class StandbyUpdateListener {
 public:
  enum class SuspendReason { kPromoted, kMigrated };

  virtual ~StandbyUpdateListener() = default;
  virtual void OnUpdateStart(const TopicPartition& changelog, std::string_view store,
                             int64_t starting_offset) = 0;
  virtual void OnBatchLoaded(const TopicPartition& changelog, std::string_view store,
                             const TaskId& task, int64_t batch_end_offset, int64_t batch_size,
                             int64_t current_end_offset) = 0;
  virtual void OnUpdateSuspended(const TopicPartition& changelog, std::string_view store,
                                 int64_t store_offset, int64_t current_end_offset,
                                 SuspendReason reason) = 0;
};

// "PROMOTED" / "MIGRATED", as Kafka names them.
constexpr std::string_view SuspendReasonName(StandbyUpdateListener::SuspendReason reason) {
  return reason == StandbyUpdateListener::SuspendReason::kPromoted ? "PROMOTED" : "MIGRATED";
}

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_STANDBY_UPDATE_LISTENER_H_
