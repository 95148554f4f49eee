#include "core/runtime/state_updater_metrics.h"

#include <algorithm>

#include "core/util/check.h"

namespace restoresim {
namespace {

using Kind = SampledStat::Kind;

KafkaMetric Metric(std::string_view group, std::string_view name,
                   std::map<std::string, std::string> tags, double value) {
  return KafkaMetric{.group = std::string(group), .name = std::string(name),
                     .tags = std::move(tags), .value = value};
}

}  // namespace

StateUpdaterMetricsSnapshot::StateUpdaterMetricsSnapshot(std::string thread,
                                                         const StateUpdaterMetricsConfig& config)
    : thread_id(std::move(thread)),
      task_thread_id(config.task_thread_id.empty() ? thread_id : config.task_thread_id),
      sample(config.sample),
      idle_ratio(Kind::kAvg, config.sample),
      active_restore_ratio(Kind::kAvg, config.sample),
      standby_update_ratio(Kind::kAvg, config.sample),
      checkpoint_ratio(Kind::kAvg, config.sample),
      restore_records_rate(Kind::kRate, config.sample),
      restore_call_rate(Kind::kWindowedCount, config.sample) {}

std::vector<KafkaMetric> StateUpdaterMetricsSnapshot::Measure(TimeNs now_ns) const {
  std::vector<KafkaMetric> out;
  const std::map<std::string, std::string> thread_tags = {{"thread-id", thread_id}};
  auto add = [&](std::string_view name, double value) {
    out.push_back(Metric(kStateUpdaterMetricsGroup, name, thread_tags, value));
  };
  add("active-restoring-tasks", static_cast<double>(counts.active_restoring));
  add("standby-updating-tasks", static_cast<double>(counts.standby_updating));
  add("active-paused-tasks", static_cast<double>(counts.active_paused));
  add("standby-paused-tasks", static_cast<double>(counts.standby_paused));
  add("idle-ratio", idle_ratio.Measure(now_ns));
  add("active-restore-ratio", active_restore_ratio.Measure(now_ns));
  add("standby-update-ratio", standby_update_ratio.Measure(now_ns));
  add("checkpoint-ratio", checkpoint_ratio.Measure(now_ns));
  add("restore-records-rate", restore_records_rate.Measure(now_ns));
  add("restore-call-rate", restore_call_rate.Measure(now_ns));
  for (const auto& [id, t] : tasks) {
    const std::map<std::string, std::string> tags = {{"thread-id", task_thread_id},
                                                     {"task-id", id.ToString()}};
    const bool active = t.type == TaskType::kActive;
    out.push_back(Metric(kTaskMetricsGroup, active ? "restore-total" : "update-total", tags,
                         static_cast<double>(t.restored)));
    out.push_back(Metric(kTaskMetricsGroup, active ? "restore-rate" : "update-rate", tags,
                         t.rate.Measure(now_ns)));
    if (active) {
      out.push_back(Metric(kTaskMetricsGroup, "restore-remaining-records-total", tags,
                           static_cast<double>(t.announced - t.restored)));
    }
  }
  return out;
}

StateUpdaterMetrics::StateUpdaterMetrics(std::string thread_id,
                                         const StateUpdaterMetricsConfig& config)
    : state_(std::move(thread_id), config) {}

void StateUpdaterMetrics::BeginIteration(TimeNs now_ns) {
  RS_CHECK(now_ns >= 0, "iteration at {} ns", now_ns);
  iteration_start_ns_ = now_ns;
  wait_ns_ = 0;
  checkpoint_ns_ = 0;
}

void StateUpdaterMetrics::AddWait(TimeNs ns) {
  RS_CHECK(iteration_start_ns_ >= 0 && ns >= 0, "wait of {} ns outside an iteration", ns);
  wait_ns_ += ns;
}

void StateUpdaterMetrics::AddCheckpoint(TimeNs ns) {
  RS_CHECK(ns >= 0, "checkpoint of {} ns", ns);
  checkpoint_ns_ += ns;  // also outside an iteration (a hand-back at shutdown): not recorded
}

void StateUpdaterMetrics::RecordRestoreCall(int64_t records) {
  RS_CHECK(iteration_start_ns_ >= 0 && records >= 0, "restore call of {} records", records);
  // Kafka records the step at the iteration's start time.
  state_.restore_records_rate.Record(static_cast<double>(records), iteration_start_ns_);
  state_.restore_call_rate.Record(1, iteration_start_ns_);
}

void StateUpdaterMetrics::EndIteration(
    TimeNs now_ns, bool restoring_active, const UpdaterTaskCounts& counts,
    const std::map<TaskIncarnation, OwnerRestoration>& by_owner) {
  RS_CHECK(iteration_start_ns_ >= 0 && now_ns >= iteration_start_ns_,
           "iteration ends at {} ns, began at {} ns", now_ns, iteration_start_ns_);
  const TimeNs total_ns = now_ns - iteration_start_ns_;
  // An iteration in which no (virtual) time passed has no fractions: Kafka would record 0/0
  // (NaN) into its averages; it is left out here.
  if (total_ns > 0) {
    const double total = static_cast<double>(total_ns);
    const TimeNs restore_ns = std::max<TimeNs>(0, total_ns - wait_ns_ - checkpoint_ns_);
    state_.idle_ratio.Record(static_cast<double>(wait_ns_) / total, now_ns);
    state_.checkpoint_ratio.Record(static_cast<double>(checkpoint_ns_) / total, now_ns);
    const double restoring = static_cast<double>(restore_ns) / total;
    state_.active_restore_ratio.Record(restoring_active ? restoring : 0.0, now_ns);
    state_.standby_update_ratio.Record(restoring_active ? 0.0 : restoring, now_ns);
  }
  state_.counts = counts;
  UpdateTasks(now_ns, by_owner);
  iteration_start_ns_ = -1;
}

// In place (an iteration used to build a new map): by_owner and the tasks are both in TaskId
// order, so one merge walk keeps, replaces, adds and drops entries.
void StateUpdaterMetrics::UpdateTasks(TimeNs now_ns,
                                      const std::map<TaskIncarnation, OwnerRestoration>& by_owner) {
  auto& tasks = state_.tasks;
  auto task = tasks.begin();
  for (auto it = by_owner.begin(); it != by_owner.end(); ++it) {
    const auto& [who, r] = *it;
    while (task != tasks.end() && task->first < who.id) task = tasks.erase(task);  // gone
    // The same incarnation: its totals and rate go on.
    const bool same = task != tasks.end() && task->first == who.id &&
                      task->second.incarnation == who;
    RS_CHECK(!same || task->second.type == r.type, "task metrics of {} kept for {}",
             task->second.incarnation.ToString(), who.ToString());
    // One incarnation of a task holds its changelogs at a time; should two show, the newer (the
    // later: by_owner orders a task's incarnations ascending) wins.
    if (auto next = std::next(it); next != by_owner.end() && next->first.id == who.id) continue;
    if (!same) {
      task = tasks.insert_or_assign(
          task, who.id,
          StateUpdaterMetricsSnapshot::Task{.incarnation = who, .type = r.type,
                                            .rate = SampledStat(Kind::kRate, state_.sample)});
    }
    StateUpdaterMetricsSnapshot::Task& t = task->second;
    // Only what it restored since the last iteration feeds the rate (the sum can fall if some
    // of its changelogs were unregistered: nothing is recorded then).
    if (r.restored > t.restored) {
      t.rate.Record(static_cast<double>(r.restored - t.restored), now_ns);
    }
    t.restored = r.restored;
    t.announced = r.announced;
    ++task;
  }
  tasks.erase(task, tasks.end());
}

}  // namespace restoresim
