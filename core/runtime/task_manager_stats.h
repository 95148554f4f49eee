// TaskManagerStats: counts of what a stream thread's TaskManager and the types it decides with
// did (Kafka keeps such counts as the task-created / task-closed sensors of
// ThreadMetrics), for metrics and tests.
//
// Thread-safety: its stream thread only (a plain struct the manager hands out by reference).
#ifndef RESTORESIM_CORE_RUNTIME_TASK_MANAGER_STATS_H_
#define RESTORESIM_CORE_RUNTIME_TASK_MANAGER_STATS_H_

#include <cstdint>

namespace restoresim {

struct TaskManagerStats {
  int64_t created = 0;
  int64_t recycled = 0;
  int64_t revived = 0;
  int64_t closed_clean = 0;
  int64_t closed_dirty = 0;
  int64_t corrupted_reports = 0;
  int64_t corrupted_while_processing = 0;  // a store's data loss found by processing: revived
  int64_t stale_reports = 0;  // about incarnations no longer wanted: not revived
  int64_t restore_errors = 0;  // warnings from the restore thread (nothing failed)
  int64_t init_attempts_locked = 0;  // initialisations refused: the directory was locked
  int64_t failed = 0;          // tasks handed back failed, closed dirty
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_MANAGER_STATS_H_
