// RestoreThread, its KIP-869 metrics (state_updater_metrics.h): the loop's timing, as Kafka's
// DefaultStateUpdater.runOnce measures it — the whole iteration, the wait for work, the
// checkpoints (periodic and forced) — the gauges of the tasks it owns (UpdaterTasks::Counts),
// and the snapshot it publishes for readers on other threads. All time from the clock port.
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

void RestoreThread::EndIterationMetrics() {
  // Kafka's reader restores actives unless only standbys are left: an empty reader counts as
  // restoring actives (StoreChangelogReader starts, and returns to, ACTIVE_RESTORING).
  const bool restoring_active =
      reader_->mode() == ReaderMode::kActiveRestoring || !tasks_.AnyStandbyUpdating();
  metrics_.EndIteration(clock_.NowNs(), restoring_active, tasks_.Counts(),
                        reader_->RestorationByOwner());
  metrics_snapshot_.Publish(metrics_.state());
}

std::vector<KafkaMetric> RestoreThread::KafkaMetrics(TimeNs now_ns) const {
  return metrics_snapshot_.Snapshot()->Measure(now_ns);
}

}  // namespace restoresim
