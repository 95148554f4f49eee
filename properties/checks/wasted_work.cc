// no_wasted_work: the runtime does not throw work away without a stated cause. Counted per
// run, failing past the scenario's budget (WasteBudget; 0 unless a scenario says otherwise):
//   * a task closed while its assignment still wants it as it is (it will be created and
//     restored again) — stated causes, not counted: a revive after corruption, a lost
//     partition, shutdown. A running active closed on a revocation's partial view is judged
//     against the assignment that completes the rebalance (the stream thread's next one): one
//     that assignment wants, in either form, should have kept its incarnation or been recycled
//     in place (Kafka suspends it at the revocation and decides at the assignment);
//   * records restored into a store again, below an offset its directory already checkpointed
//     — stated causes, not counted: a wipe (corruption, exactly-once data without a
//     checkpoint) or a crash of the file system since.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class WastedWorkChecker final : public Checker {
 public:
  explicit WastedWorkChecker(OracleContext& c) : Checker(c, "no_wasted_work") {}

  void OnAssignment(std::string_view st, const std::set<TaskId>& active,
                    const std::set<TaskId>& standby, bool revocation) override {
    auto it = in_revocation_.find(st);
    if (revocation) {
      if (it == in_revocation_.end()) in_revocation_.emplace(Str(st), Closes{});
      return;
    }
    if (it == in_revocation_.end()) return;
    const Closes closes = std::move(it->second);
    in_revocation_.erase(it);
    // Wanted in either form: kept (or recycled in place), it would not be made again.
    for (const auto& [who, type] : closes) {
      if (active.contains(who.id) || standby.contains(who.id)) {
        CountWantedClose(st, who, active.contains(who.id) ? TaskType::kActive : TaskType::kStandby,
                         "the assignment completing its rebalance");
      }
    }
  }

  void OnDecision(std::string_view st, const TaskIncarnation& who, TaskDecision decision,
                  TaskType type) override {
    if (decision != TaskDecision::kClose) return;
    // A running active closed on a revocation's view: judged when the rebalance's assignment
    // comes. (A task not running yet that is closed then loses no processing state: judged as
    // before, against the view of the moment.)
    if (auto r = in_revocation_.find(st); r != in_revocation_.end() && ran_.contains(who)) {
      r->second[who] = type;
      return;
    }
    auto w = ledger().wanted.find(Str(st));
    if (w == ledger().wanted.end() || w->second.Of(who.id) != type) return;
    CountWantedClose(st, who, type, "its assignment");
  }

  // (A running task is suspended before its close is decided: what counts is that it ran.)
  void OnTaskTransition(const events::TaskInfo& task, TaskState, TaskState to) override {
    if (to == TaskState::kRunning) ran_.insert(task.who);
  }
  void OnTaskDestroyed(const TaskIncarnation& who, TaskState) override { ran_.erase(who); }

  void OnRestoredBatch(std::string_view reader, const TopicPartition& tp,
                       const TaskIncarnation& owner, TaskType, int64_t next_offset,
                       int64_t records) override {
    const TaskRecord* record = ledger().Find(owner);
    if (record == nullptr) return;
    auto dir = ledger().dirs.find(record->task_dir);
    if (dir == ledger().dirs.end()) return;
    auto high = dir->second.checkpointed_high.find(tp);
    if (high == dir->second.checkpointed_high.end()) return;
    const Registration* reg = ledger().RegistrationOf(reader, tp);
    if (reg == nullptr) return;
    // The batch covers (previous position, next_offset); what lies below the high mark was
    // restored before.
    const int64_t from = reg->position < 0 ? next_offset - records : reg->position;
    const int64_t again = std::min(next_offset, high->second) - from;
    if (again <= 0) return;
    OracleCounts& counts = context().counts();
    counts.rerestored_records += again;
    if (counts.rerestored_records > context().budget().rerestored_records_max) {
      Violation(owner.ToString(), fmt::format("restores {} records of {} again below offset {}, "
                                              "already checkpointed in {} ({} in all, budget {})",
                                              again, tp.ToString(), high->second,
                                              record->task_dir, counts.rerestored_records,
                                              context().budget().rerestored_records_max));
    }
  }

 private:
  using Closes = std::map<TaskIncarnation, TaskType>;

  void CountWantedClose(std::string_view st, const TaskIncarnation& who, TaskType type,
                        std::string_view by) {
    OracleCounts& counts = context().counts();
    if (++counts.wanted_closes > context().budget().wanted_closes_max) {
      Violation(who.ToString(), fmt::format("{} closes it while {} wants it as {} ({} such "
                                            "closes, budget {})",
                                            Str(st), by, TaskTypeName(type), counts.wanted_closes,
                                            context().budget().wanted_closes_max));
    }
  }

  // Per stream thread inside a rebalance (a revocation reported, its assignment not yet): the
  // closes decided meanwhile.
  std::map<std::string, Closes, std::less<>> in_revocation_;
  std::set<TaskIncarnation> ran_;  // incarnations that were RUNNING, until destroyed
};

RESTORESIM_CHECKER(120, WastedWorkChecker);

}  // namespace

}  // namespace restoresim::properties
