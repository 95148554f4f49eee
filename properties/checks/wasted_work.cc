// no_wasted_work: the runtime does not throw work away without a stated cause. Counted per
// run, failing past the scenario's budget (WasteBudget; 0 unless a scenario says otherwise):
//   * a task closed while its assignment still wants it as it is (it will be created and
//     restored again) — stated causes, not counted: a revive after corruption, a lost
//     partition, shutdown;
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

  void OnDecision(std::string_view st, const TaskIncarnation& who, TaskDecision decision,
                  TaskType type) override {
    if (decision != TaskDecision::kClose) return;
    auto w = ledger().wanted.find(Str(st));
    if (w == ledger().wanted.end() || w->second.Of(who.id) != type) return;
    OracleCounts& counts = context().counts();
    if (++counts.wanted_closes > context().budget().wanted_closes_max) {
      Violation(who.ToString(), fmt::format("{} closes it while its assignment wants it as {} "
                                            "({} such closes, budget {})",
                                            Str(st), TaskTypeName(type), counts.wanted_closes,
                                            context().budget().wanted_closes_max));
    }
  }

  void OnRestoredBatch(std::string_view reader, const TopicPartition& tp,
                       const TaskIncarnation& owner, TaskType, int64_t next_offset,
                       int64_t records) override {
    const TaskRecord* record = ledger().Find(owner);
    if (record == nullptr) return;
    auto dir = ledger().dirs.find(record->task_dir);
    if (dir == ledger().dirs.end()) return;
    auto high = dir->second.checkpointed_high.find(tp);
    auto reg = ledger().registered.find({Str(reader), tp});
    if (high == dir->second.checkpointed_high.end() || reg == ledger().registered.end()) return;
    // The batch covers (previous position, next_offset); what lies below the high mark was
    // restored before.
    const int64_t from = reg->second.position < 0 ? next_offset - records : reg->second.position;
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
};

RESTORESIM_CHECKER(120, WastedWorkChecker);

}  // namespace

}  // namespace restoresim::properties
