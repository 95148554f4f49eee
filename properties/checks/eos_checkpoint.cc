// eos_checkpoint: under exactly-once no checkpoint file exists on disk while a task processes
// (a crash mid-transaction must find data without a checkpoint, and wipe it, never a checkpoint
// that lets the store keep writes of a transaction that aborts).
//
// The checker's own account of each task directory: a checkpoint is (maybe) on disk once a
// write of it succeeded, and gone once the state manager deleted it (at load and before
// processing, checkpoint_deleted) or wiped the directory. A task that processes records under
// exactly-once while its directory's checkpoint may be on disk fails the run.
#include <fmt/format.h>

#include <map>
#include <string>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class EosCheckpointChecker final : public Checker {
 public:
  explicit EosCheckpointChecker(OracleContext& c) : Checker(c, "eos_checkpoint") {}

  void OnCheckpointResult(const events::StateInfo& state, bool written) override {
    // A failed write may have left the old file in place (an atomic rename that did not
    // happen): whatever was on disk before still is.
    if (written) on_disk_[state.task_dir] = true;
  }
  void OnCheckpointDeleted(const events::StateInfo& state) override {
    on_disk_[state.task_dir] = false;
  }
  void OnWiped(const events::StateInfo& state) override { on_disk_[state.task_dir] = false; }

  void OnProcess(const events::TaskInfo& task, size_t records) override {
    if (!task.exactly_once || records == 0) return;
    auto it = on_disk_.find(task.task_dir);
    if (it == on_disk_.end() || !it->second) return;
    Violation(task.who.ToString(),
              fmt::format("processes {} records under exactly-once with a checkpoint in {}",
                          records, task.task_dir));
  }

 private:
  std::map<std::string, bool> on_disk_;  // per task directory
};

RESTORESIM_CHECKER(190, EosCheckpointChecker);

}  // namespace

}  // namespace restoresim::properties
