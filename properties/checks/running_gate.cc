// running_gate: nothing processes before its restoration completed — an active task
// processes records only after every one of its changelogs completed under that incarnation —
// and a stream thread reports RUNNING only while every active task it is assigned runs (none
// restores, waits to be initialised or to be handed over).
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class RunningGateChecker final : public Checker {
 public:
  explicit RunningGateChecker(OracleContext& c) : Checker(c, "running_gate") {}

  void OnProcess(const events::TaskInfo& task, size_t records) override {
    if (records == 0) return;
    const TaskRecord* record = ledger().Find(task.who);
    if (record == nullptr) return;  // single_owner's to report
    for (const TopicPartition& tp : task.changelogs) {
      if (!record->completed.contains(tp)) {
        Violation(task.who.ToString(),
                  fmt::format("processes {} records before changelog {} completed restoration",
                              records, tp.ToString()));
      }
    }
  }

  void OnStreamThreadState(std::string_view st, StreamThreadState from,
                           StreamThreadState to) override {
    if (to != StreamThreadState::kRunning) return;
    auto w = ledger().wanted.find(Str(st));
    if (w == ledger().wanted.end()) return;
    for (const TaskId& id : w->second.active) {
      if (!Runs(Str(st), id)) {
        Violation(Str(st), fmt::format("reports RUNNING while its assigned active task {} does "
                                       "not run",
                                       id.ToString()));
      }
    }
  }

 private:
  bool Runs(const std::string& st, TaskId id) const {
    for (const auto& [who, record] : ledger().open) {
      if (who.id == id && record.stream_thread == st && record.state == TaskState::kRunning &&
          record.type == TaskType::kActive) {
        return true;
      }
    }
    return false;
  }
};

RESTORESIM_CHECKER(100, RunningGateChecker);

}  // namespace

}  // namespace restoresim::properties
