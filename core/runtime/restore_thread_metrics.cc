// RestoreThread, its KIP-869 metrics (state_updater_metrics.h): the loop's timing, as Kafka's
// DefaultStateUpdater.runOnce measures it — the whole iteration, the wait for work, the
// checkpoints (periodic and forced) — the gauges of the tasks it owns, and the snapshot it
// publishes for readers on other threads. All time from the clock port.
#include "core/runtime/restore_thread.h"
#include "core/util/check.h"

namespace restoresim {
void RestoreThread::MeasuredIdleWait(std::vector<std::vector<TaskItem>>& rounds) {
  const TimeNs start_ns = clock_.NowNs();
  IdleWait(rounds);
  metrics_.AddWait(clock_.NowNs() - start_ns);
}

// The backoff after a failed step waits too: it counts as idle (Kafka has no such backoff).
void RestoreThread::MeasuredErrorBackoff() {
  const TimeNs start_ns = clock_.NowNs();
  clock_.SleepFor(config_.error_backoff_ns);
  metrics_.AddWait(clock_.NowNs() - start_ns);
}

void RestoreThread::MeasuredMaybeCheckpoint() {
  const TimeNs start_ns = clock_.NowNs();
  MaybeCheckpoint();
  metrics_.AddCheckpoint(clock_.NowNs() - start_ns);
}

UpdaterTaskCounts RestoreThread::TaskCounts() const {
  UpdaterTaskCounts counts;
  // The paused set (restore_thread_pause.cc): the gauges active- and standby-paused-tasks.
  for (const auto& [id, task] : paused_) {
    RS_CHECK(task != nullptr, "restore thread pauses an empty slot for {}", id.ToString());
    ++(task->type() == TaskType::kActive ? counts.active_paused : counts.standby_paused);
  }
  for (const auto& [id, task] : owned_) {
    RS_CHECK(task != nullptr, "restore thread owns an empty slot for {}", id.ToString());
    if (task->type() == TaskType::kActive) {
      ++counts.active_restoring;
    } else {
      ++counts.standby_updating;
    }
  }
  RS_CHECK_LE(counts.active_restoring + counts.standby_updating,
              static_cast<int64_t>(owned_.size()));
  return counts;
}

void RestoreThread::EndIterationMetrics() {
  // Kafka's reader restores actives unless only standbys are left: an empty reader counts as
  // restoring actives (StoreChangelogReader starts, and returns to, ACTIVE_RESTORING).
  bool any_standby = false;
  for (const auto& [id, task] : owned_) any_standby |= task->type() == TaskType::kStandby;
  const bool restoring_active = reader_->mode() == ReaderMode::kActiveRestoring || !any_standby;
  metrics_.EndIteration(clock_.NowNs(), restoring_active, TaskCounts(),
                        reader_->RestorationByOwner());
  metrics_snapshot_.Publish(metrics_.state());
}

std::vector<KafkaMetric> RestoreThread::KafkaMetrics(TimeNs now_ns) const {
  return metrics_snapshot_.Snapshot()->Measure(now_ns);
}

}  // namespace restoresim
