#include "scenarios/scenario_checks.h"

#include <fmt/format.h>

#include <limits>

#include "core/runtime/count_topology.h"
#include "core/state/checkpoint_file.h"
#include "core/state/log_store.h"
#include "sim/simulation.h"

namespace restoresim::scenarios {
namespace {

using testing::Changelog;
using testing::Input;
using testing::RuntimeWorld;


// The changelog from its log start (earlier records may have been deleted).
std::vector<ConsumerRecord> LiveChangelog(RuntimeWorld& w, int32_t p,
                                          std::string_view store = "counts") {
  const TopicPartition tp = testing::ChangelogOf(store, p);
  const int64_t start = *w.broker.LogStartOffset(tp);
  // As read_committed sees it: exactly once's aborted records are not part of any fold (at
  // least once has none, and this reads the same records).
  return *w.broker.ReadCommittedLog(tp, start, std::numeric_limits<int64_t>::max());
}

bool HasLatest(const RuntimeWorld& w) {
  return std::find(w.stores.begin(), w.stores.end(), kLatestStoreName) != w.stores.end();
}

// " key: expected X, found Y;" for every key that differs.
std::string Diff(const std::map<std::string, std::string>& expected,
                 const std::map<std::string, std::string>& actual) {
  std::string diff;
  for (const auto& [key, value] : expected) {
    auto it = actual.find(key);
    if (it == actual.end() || it->second != value) {
      diff += fmt::format(" {}: expected {}, found {};", key, value,
                          it == actual.end() ? "nothing" : it->second);
    }
  }
  for (const auto& [key, value] : actual) {
    if (!expected.contains(key)) {
      diff += fmt::format(" {}: expected nothing, found {};", key, value);
    }
  }
  return diff;
}

std::string TaskName(int32_t p) { return TaskId{0, p}.ToString(); }

// Why partition p has not converged yet ("" when it has).
std::string NotConverged(RuntimeWorld& w, const std::vector<Member>& members, int32_t p,
                         const std::map<TopicPartition, int64_t>& committed) {
  const TaskId id{0, p};
  std::vector<std::string> running_on;
  bool wanted_where_running = true;
  for (const Member& m : members) {
    TaskManager& tm = m.thread->task_manager();
    if (tm.running().contains(id)) {
      running_on.push_back(m.thread->name());
      wanted_where_running = wanted_where_running && tm.wanted_active().contains(id);
    }
  }
  if (running_on.size() != 1 || !wanted_where_running) {
    return fmt::format("running on [{}]", fmt::join(running_on, ", "));
  }
  const int64_t end = *w.broker.EndOffset(Input(p));
  auto it = committed.find(Input(p));
  const int64_t at = it == committed.end() ? 0 : it->second;  // nothing committed: offset 0
  if (at != end) return fmt::format("input committed to {} of {}", at, end);
  return "";
}

// Where a task's checkpoint in `state_dir` puts its store's changelog: the offset it names, or
// the log start when it names none.
int64_t CheckpointedPosition(RuntimeWorld& w, const std::string& state_dir, int32_t p,
                             std::string_view store = "counts") {
  const TopicPartition tp = testing::ChangelogOf(store, p);
  const int64_t log_start = *w.broker.LogStartOffset(tp);
  absl::StatusOr<CheckpointOffsets> checkpoint =
      ReadCheckpoint(w.fs, fmt::format("{}/{}/.checkpoint", state_dir, TaskName(p)));
  if (!checkpoint.ok() || !checkpoint->contains(tp)) return log_start;
  return checkpoint->at(tp);
}

// Whether nothing a standby could apply lies in [at, end): exactly once's commit and abort
// markers and aborted records take offsets but are no data, so a standby whose position is
// short of the end by only those is caught up. Read without the broker's lock (PeekLog): no
// scheduling point, so at least once (where this is always false) schedules as before.
bool OnlyControlRecordsFrom(RuntimeWorld& w, const TopicPartition& tp, int64_t at, int64_t end) {
  if (w.broker.PeekLastStableOffset(tp) < end) return false;  // a transaction is open
  for (const ConsumerRecord& r : w.broker.PeekLog(tp, IsolationLevel::kReadCommitted)) {
    if (r.offset >= at) return false;
  }
  return true;
}

// Standbys wanted but not caught up: not held by the restore thread, or their checkpoint on
// disk (written by the restore thread every checkpoint interval) behind the changelog's end.
// The checkpoint is what shows a standby is really updated: a CREATE may sit in the restore
// thread's queue while the thread waits out an injected request timeout.
std::string StandbysNotCaughtUp(RuntimeWorld& w, const std::vector<Member>& members) {
  std::string missing;
  for (const Member& m : members) {
    TaskManager& tm = m.thread->task_manager();
    const std::set<TaskId> held = tm.in_restore();
    for (const TaskId& id : tm.wanted_standby()) {
      const int64_t end = *w.broker.EndOffset(Changelog(id.partition));
      const int64_t at = CheckpointedPosition(w, m.state_dir, id.partition);
      if (!held.contains(id) || (at < end && !OnlyControlRecordsFrom(w, Changelog(id.partition),
                                                                     at, end))) {
        missing += fmt::format(" {} on {} (checkpoint {} of {});", id.ToString(), m.thread->name(),
                               at, end);
      }
    }
  }
  return missing;
}

// Waits until converged or the timeout; returns "" or why it has not converged, with `who`.
std::string WaitConverged(RuntimeWorld& w, const std::vector<Member>& members, int32_t partitions,
                          const ConvergeOptions& options, std::string* who) {
  const TimeNs deadline = w.clock.NowNs() + options.timeout_ns;
  for (;;) {
    const auto committed = w.broker.CommittedOffsets("app");
    std::string why;
    // A member that has not yet polled the latest generation still wants what it had: its
    // stale view must not pass for convergence (POS found the tail checking stores that a
    // pending revocation was about to close).
    if (!w.broker.PeekGroupSettled("app")) {
      why = "a rebalance not yet taken and acknowledged by every member";
      *who = "-";
    }
    for (int32_t p = 0; p < partitions && why.empty(); ++p) {
      why = NotConverged(w, members, p, committed);
      *who = TaskName(p);
    }
    if (why.empty() && options.require_standbys) {
      why = StandbysNotCaughtUp(w, members);
      if (!why.empty()) why = "standbys not caught up:" + why;
      *who = "-";
    }
    if (why.empty() || w.clock.NowNs() >= deadline) return why;
    w.clock.SleepFor(options.check_every_ns);
  }
}

// One store of a standby, read back from its state directory: its checkpoint lags the
// changelog's end by at most lag_records_max and it holds the fold up to that checkpoint.
void CheckStandbyStore(sim::RunEnv& env, RuntimeWorld& w, const Member& m, int32_t p,
                       const std::string& name, int64_t lag_records_max) {
  const std::string who = fmt::format("{} standby ({}) on {}", TaskName(p), name, m.thread->name());
  const std::string dir = fmt::format("{}/{}", m.state_dir, TaskName(p));
  const TopicPartition tp = testing::ChangelogOf(name, p);
  const int64_t log_start = *w.broker.LogStartOffset(tp);
  const int64_t end = *w.broker.EndOffset(tp);
  const int64_t position = CheckpointedPosition(w, m.state_dir, p, name);
  if (end - position > lag_records_max && !OnlyControlRecordsFrom(w, tp, position, end)) {
    FailInvariant(env, "liveness", who,
                  fmt::format("standby at {} lags the changelog end {} by more than {} records",
                              position, end, lag_records_max));
  }
  absl::StatusOr<std::unique_ptr<LogStore>> store = LogStore::Open(w.fs, dir + "/" + name, name);
  if (!store.ok()) {
    FailInvariant(env, "final_state", who,
                  fmt::format("store unreadable: {}", store.status().ToString()));
  }
  absl::StatusOr<std::map<std::string, std::string>> contents = (*store)->ReadAll();
  (void)(*store)->Close();
  const auto fold =
      FoldChangelog(*w.broker.ReadCommittedLog(tp, log_start, std::max(position, log_start)));
  if (!contents.ok() || *contents != fold) {
    FailInvariant(env, "final_state", who,
                  fmt::format("store differs from the fold of its changelog up to its "
                              "checkpoint at {}:{}",
                              position, contents.ok() ? Diff(fold, *contents) : " unreadable"));
  }
}

}  // namespace

void FailInvariant(sim::RunEnv& env, std::string_view invariant, std::string_view who,
                   const std::string& message) {
  env.FailInvariant(invariant, who, message);
}

Baselines BaselinesNow(RuntimeWorld& w, int32_t partitions) {
  Baselines baselines;
  for (int32_t p = 0; p < partitions; ++p) {
    baselines[p].initial = FoldChangelog(LiveChangelog(w, p));
    if (HasLatest(w)) baselines[p].initial_latest = FoldChangelog(LiveChangelog(w, p, "latest"));
  }
  return baselines;
}

TimeNs AwaitConverged(sim::RunEnv& env, RuntimeWorld& w, const std::vector<Member>& members,
                      int32_t partitions, const ConvergeOptions& options) {
  const TimeNs start = w.clock.NowNs();
  std::string who;
  const std::string why = WaitConverged(w, members, partitions, options, &who);
  if (!why.empty()) {
    FailInvariant(env, "liveness", who,
                  fmt::format("not converged within {} ms of fault-free virtual time: {}\n{}",
                              options.timeout_ns / kMillisecond, why, env.sim.ThreadsReport()));
  }
  return w.clock.NowNs() - start;
}

bool Converges(RuntimeWorld& w, const std::vector<Member>& members, int32_t partitions,
               const ConvergeOptions& options) {
  std::string who;
  return WaitConverged(w, members, partitions, options, &who).empty();
}

void CheckRunningStores(sim::RunEnv& env, RuntimeWorld& w, const std::vector<Member>& members) {
  for (const Member& m : members) {
    TaskManager& tm = m.thread->task_manager();
    for (const TaskId& id : tm.running()) {
      for (const std::string& name : w.stores) {
        absl::StatusOr<std::map<std::string, std::string>> store =
            tm.RunningStoreContents(id, name);
        // Reading the stores before it has scheduling points: a task that stopped running
        // meanwhile (a restored instance's first poll reports its old partitions lost) is no
        // longer the check's (found by scenario.checkpoint_differential, pos seed 297).
        if (absl::IsNotFound(store.status()) && !tm.running().contains(id)) continue;
        if (!store.ok()) {
          FailInvariant(env, "final_state", id.ToString(),
                        fmt::format("store {} unreadable on {}: {}", name, m.thread->name(),
                                    store.status().ToString()));
        }
        const auto fold = FoldChangelog(LiveChangelog(w, id.partition, name));
        if (*store != fold) {
          FailInvariant(env, "final_state", id.ToString(),
                        fmt::format("running store {} on {} differs from the fold of its "
                                    "changelog:{}",
                                    name, m.thread->name(), Diff(fold, *store)));
        }
      }
    }
  }
}

std::vector<std::pair<Member, int32_t>> WantedStandbys(const std::vector<Member>& members) {
  std::vector<std::pair<Member, int32_t>> standbys;
  for (const Member& m : members) {
    for (const TaskId& id : m.thread->task_manager().wanted_standby()) {
      standbys.emplace_back(m, id.partition);
    }
  }
  return standbys;
}

void ShutdownWithin(sim::RunEnv& env, RuntimeWorld& w, std::string_view who, TimeNs timeout_ns,
                    const std::function<absl::Status(TimeNs)>& shutdown) {
  const TimeNs start = w.clock.NowNs();
  const absl::Status s = shutdown(timeout_ns);
  const TimeNs took = w.clock.NowNs() - start;
  if (took > timeout_ns) {
    FailInvariant(env, "liveness", who,
                  fmt::format("shutdown took {} ms of virtual time, over its timeout of {} ms",
                              took / kMillisecond, timeout_ns / kMillisecond));
  }
  if (!s.ok()) {
    FailInvariant(
        env, "liveness", who,
        fmt::format("shutdown within {} ms failed: {}", timeout_ns / kMillisecond, s.ToString()));
  }
}

void CheckChangelogs(sim::RunEnv& env, RuntimeWorld& w, int32_t partitions,
                     const Baselines& baselines) {
  for (int32_t p = 0; p < partitions; ++p) {
    const Baseline& base = baselines.at(p);
    const auto expected =
        ReferenceCounts(*w.broker.ReadLog(Input(p), base.input_from, kLogRecordsMax), base.initial);
    const auto actual = FoldChangelog(LiveChangelog(w, p));
    if (actual != expected) {
      FailInvariant(env, "final_state", TaskName(p),
                    fmt::format("the changelog folds to counts that differ from the reference "
                                "model of the input (from offset {}):{}",
                                base.input_from, Diff(expected, actual)));
    }
    if (!HasLatest(w)) continue;
    const auto latest_expected = ReferenceLatest(
        *w.broker.ReadLog(Input(p), base.input_from, kLogRecordsMax), base.initial_latest);
    const auto latest = FoldChangelog(LiveChangelog(w, p, "latest"));
    if (latest != latest_expected) {
      FailInvariant(env, "final_state", TaskName(p),
                    fmt::format("the latest changelog folds to values that differ from the "
                                "reference model of the input (from offset {}):{}",
                                base.input_from, Diff(latest_expected, latest)));
    }
  }
}

void CheckStandbys(sim::RunEnv& env, RuntimeWorld& w,
                   const std::vector<std::pair<Member, int32_t>>& standbys,
                   int64_t lag_records_max) {
  for (const auto& [m, p] : standbys) {
    for (const std::string& name : w.stores) {
      CheckStandbyStore(env, w, m, p, name, lag_records_max);
    }
  }
}

}  // namespace restoresim::scenarios
