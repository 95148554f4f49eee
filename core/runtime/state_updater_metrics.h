// The KIP-869 metrics of one restore thread (Kafka's DefaultStateUpdater.StateUpdaterMetrics)
// and of the tasks it restores or updates (Kafka's TaskMetrics restore/update sensors), under
// Kafka's names, groups and tags:
//   stream-state-updater-metrics {thread-id = the restore thread}
//     active-restoring-tasks, standby-updating-tasks, active-paused-tasks, standby-paused-tasks
//                           gauges: the tasks it owns, as of its last loop iteration;
//     idle-ratio, active-restore-ratio, standby-update-ratio, checkpoint-ratio
//                           Avg of each loop iteration's fraction of its (virtual) time spent
//                           waiting idle, checkpointing, and the rest (restoring) — the rest is
//                           active-restore while the reader restores actives (or holds no
//                           standby), standby-update otherwise, the other recording 0: Kafka's
//                           runOnce/recordMetrics;
//     restore-records-rate, restore-call-rate
//                           Rate of records restored (actives and standbys) per reader step,
//                           and of reader steps;
//   stream-task-metrics {thread-id = the stream thread that made the task, task-id}
//     actives: restore-total, restore-rate, restore-remaining-records-total (raised by the
//              records to restore at each changelog's start, lowered by each batch);
//     standbys: update-total, update-rate.
// A task's metrics exist while it has a changelog registered with the reader (from its CREATE to
// its CLOSE, or until corruption or failure unregisters it), and start from 0 for a new
// incarnation (Kafka removes a task's sensors when it closes and a new task object adds them).
//
// Thread-safety: StateUpdaterMetrics is the restore thread's only; it hands out snapshots (plain
// values) that any thread may measure.
#ifndef RESTORESIM_CORE_RUNTIME_STATE_UPDATER_METRICS_H_
#define RESTORESIM_CORE_RUNTIME_STATE_UPDATER_METRICS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/runtime/changelog_reader.h"
#include "core/runtime/kafka_metrics.h"
#include "core/runtime/task_id.h"
#include "core/sync/clock.h"

namespace restoresim {

inline constexpr std::string_view kStateUpdaterMetricsGroup = "stream-state-updater-metrics";
inline constexpr std::string_view kTaskMetricsGroup = "stream-task-metrics";

struct StateUpdaterMetricsConfig {
  std::string task_thread_id;  // the task metrics' thread-id (empty: the restore thread's)
  SampleConfig sample;
};

// The tasks a restore thread holds, by kind (the gauges).
struct UpdaterTaskCounts {
  int64_t active_restoring = 0;
  int64_t standby_updating = 0;
  int64_t active_paused = 0;
  int64_t standby_paused = 0;
};

// Everything needed to measure one restore thread's metrics at a given time.
struct StateUpdaterMetricsSnapshot {
  struct Task {
    TaskIncarnation incarnation;
    TaskType type = TaskType::kActive;
    int64_t restored = 0;   // restore-total / update-total
    int64_t announced = 0;  // actives: remaining = announced - restored
    SampledStat rate;       // restore-rate / update-rate
  };

  StateUpdaterMetricsSnapshot(std::string thread_id, const StateUpdaterMetricsConfig& config);
  // The metrics as KafkaStreams.metrics() lists them, measured at now_ns.
  std::vector<KafkaMetric> Measure(TimeNs now_ns) const;

  std::string thread_id;
  std::string task_thread_id;
  SampleConfig sample;
  UpdaterTaskCounts counts;
  SampledStat idle_ratio, active_restore_ratio, standby_update_ratio, checkpoint_ratio;
  SampledStat restore_records_rate, restore_call_rate;
  std::map<TaskId, Task> tasks;
};

class StateUpdaterMetrics {
 public:
  StateUpdaterMetrics(std::string thread_id, const StateUpdaterMetricsConfig& config);

  // One loop iteration, as Kafka's runOnce measures it: from its start, the time spent waiting
  // for work and checkpointing; a reader step that returned (restore-records, restore-call).
  void BeginIteration(TimeNs now_ns);
  void AddWait(TimeNs ns);
  void AddCheckpoint(TimeNs ns);
  void RecordRestoreCall(int64_t records);
  // REQUIRES: after BeginIteration. Records the ratios and refreshes the gauges and the task
  // metrics from the reader's per-incarnation restoration.
  void EndIteration(TimeNs now_ns, bool restoring_active, const UpdaterTaskCounts& counts,
                    const std::map<TaskIncarnation, OwnerRestoration>& by_owner);
  const StateUpdaterMetricsSnapshot& state() const { return state_; }

 private:
  void UpdateTasks(TimeNs now_ns, const std::map<TaskIncarnation, OwnerRestoration>& by_owner);

  StateUpdaterMetricsSnapshot state_;
  TimeNs iteration_start_ns_ = -1;  // -1: no iteration open
  TimeNs wait_ns_ = 0;
  TimeNs checkpoint_ns_ = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_STATE_UPDATER_METRICS_H_
