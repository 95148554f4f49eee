#include "core/runtime/task_reviver.h"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "core/runtime/runtime_observer.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

TaskReviver::TaskReviver(const TaskManagerConfig& config, Parts parts, TaskManagerStats& stats,
                         std::vector<absl::Status>& errors, Wanted wanted)
    : config_(config),
      parts_(parts),
      stats_(stats),
      errors_(errors),
      wanted_(std::move(wanted)) {
  RS_CHECK(wanted_ != nullptr, "{}: a reviver without its manager's policy",
           config_.thread_name);
}

void TaskReviver::HandleCorrupted(
    std::map<TaskIncarnation, std::set<TopicPartition>>& corrupted,
    std::map<TaskIncarnation, std::unique_ptr<Task>>& corrupted_tasks, bool revive) {
  for (auto& [who, task] : corrupted_tasks) {
    RS_CHECK(corrupted.contains(who), "corrupted task {} without its report", who.ToString());
    RS_OBSERVE(OnCorruptionHandled, who, task.get());
    if (task->type() == TaskType::kActive) active_corrupted_ = true;
    if (!revive) {
      // The thread fails with this drain: closed dirty and wiped (the revive's close, without
      // the new incarnation), as Kafka closes its failed set at the thread's shutdown.
      TraceMark("task", "corrupted " + who.ToString() + " not revived: the thread fails");
      parts_.closer.CloseOwned(std::move(task), /*clean=*/false, TaskDecision::kCloseShutdown,
                               /*wipe=*/true);
    } else if (wanted_(who.id) == task->type()) {
      Revive(std::move(task), corrupted[who]);
    } else {
      // No longer ours to revive: close it and revive nothing — but wipe it, as a revive
      // would: its directory stays this instance's, and another thread's incarnation of the
      // task (it may have moved there) would open the corrupted stores and checkpoint (found
      // by scenario.swarm, pct:3 seed 192: "[invariant:checkpoint] ... checkpoint names
      // app-counts-changelog-1, reported corrupted and not wiped since").
      ++stats_.stale_reports;
      TraceMark("cover", "corruption report for an incarnation no longer wanted");
      parts_.closer.CloseOwned(std::move(task), /*clean=*/false, TaskDecision::kCloseStale,
                               /*wipe=*/true);
    }
  }
  for (const auto& [who, changelogs] : corrupted) {
    if (!corrupted_tasks.contains(who)) RS_OBSERVE(OnCorruptionHandled, who, nullptr);
  }
}

// Wiping under at-least-once too: a store restored from a truncated changelog over its old
// contents would not be the fold of any changelog (see docs/DESIGN.md).
void TaskReviver::Revive(std::unique_ptr<Task> task, const std::set<TopicPartition>& corrupted) {
  const TaskId id = task->id();
  const TaskType type = task->type();
  RS_CHECK(!parts_.tasks.Where(id).has_value(), "revive of {} while another incarnation is held",
           task->incarnation().ToString());
  TraceMark("task", fmt::format("revive {} ({} corrupted changelogs)",
                                task->incarnation().ToString(), corrupted.size()));
  parts_.closer.CloseOwned(std::move(task), /*clean=*/false, TaskDecision::kRevive,
                           /*wipe=*/true);
  ++stats_.revived;
  std::unique_ptr<Task> revived = parts_.factory.Create(id, type);
  // Mutation revived-not-readded (PR 13829): the revived incarnation is booked as the restore
  // thread's but never handed to it.
  if (RS_MUTANT(kRevivedNotReadded)) {
    parts_.tasks.BookWithoutHandOver(revived->incarnation(), type);
    parked_.push_back(std::move(revived));
    return;
  }
  parts_.tasks.AddPendingInit(std::move(revived));
}

// A store's data loss found while processing (RocksDB reads a block whose checksum fails only
// when a Get reaches it) is handled as the restore thread's corruption reports are: closed
// dirty, wiped, and a new incarnation restores from the changelog — never the thread's failure
// (Kafka's TaskCorruptedException, caught by the stream thread's loop, handleCorruption). Its
// input waits, paused, for that incarnation, which seeks it back to the last commit. Under
// exactly once the dirty close ends the thread's transaction, and every other running task
// follows it (HandleTransactionLost): their records were in it. Under at-least-once what it sent
// is flushed first: a changelog write landing after the new incarnation read the changelog's
// end would be in the changelog and never in the store (found by
// scenario.store_corrupt_while_processing, pct:3 seed 10: "[invariant:checkpoint] ... store
// 'counts' differs from the changelog's history below it"). A flush that fails for good fails
// the thread: reviving over writes that may still land would be a silent divergence.
absl::Status TaskReviver::ReviveRunning(TaskId id, const absl::Status& cause) {
  RS_CHECK(absl::IsDataLoss(cause) && parts_.tasks.running().contains(id),
           "{}: revive of {} for {}", config_.thread_name, id.ToString(), cause.ToString());
  ++stats_.corrupted_while_processing;
  errors_.push_back(cause);
  active_corrupted_ = true;
  if (!config_.exactly_once) {
    if (absl::Status s = parts_.executor.FlushSends(); !s.ok()) {
      return absl::Status(s.code(), fmt::format("stream thread '{}': task {} corrupted while "
                                                "processing ({}), and its sends not flushed: {}",
                                                config_.thread_name, id.ToString(),
                                                std::string(cause.message()),
                                                std::string(s.message())));
    }
  }
  if (wanted_(id) != TaskType::kActive) {
    // Revoked, waiting for its assignment: no longer ours to revive, but wiped all the same.
    parts_.closer.CloseRunning(id, /*clean=*/false, TaskDecision::kCloseStale,
                               /*commit=*/false, /*wipe=*/true);
    return absl::OkStatus();
  }
  TraceMark("cover", "store data loss while processing: task revived");
  const TopicPartition input = parts_.factory.InputOf(id);
  parts_.closer.CloseRunning(id, /*clean=*/false, TaskDecision::kRevive, /*commit=*/false,
                             /*wipe=*/true);
  ++stats_.revived;
  parts_.tasks.AddPendingInit(parts_.factory.Create(id, TaskType::kActive));
  // What it fetched and did not process is fetched again: from the last commit, or from the
  // beginning when there is none (Kafka resets a revived task's input the same way).
  parts_.starter.RewindUncommitted(id);
  RS_CHECK(!parts_.tasks.running().contains(id), "{}: {} still running after its revive",
           config_.thread_name, id.ToString());
  if (absl::Status s = parts_.consumer.Pause({input}); !s.ok()) errors_.push_back(s);
  return absl::OkStatus();
}

}  // namespace restoresim
