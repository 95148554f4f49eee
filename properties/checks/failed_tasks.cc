// failed_tasks: a failed task is owned by exactly one place. Once its restore thread hands it
// back failed, it is reported once, travels only back to its stream thread, is never handed to
// a restore thread again, never restores, runs or registers a changelog again, is listed by no
// task manager, is decided about only to be closed (kCloseFailed, or at shutdown), and is closed
// by the end of the run; and only a task that failed is closed as failed.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class FailedTasksChecker final : public Checker {
 public:
  explicit FailedTasksChecker(OracleContext& c) : Checker(c, "failed_tasks") {}

  void OnRestoreEvent(events::Name rt, const events::RestoreEventInfo& event,
                      bool drained) override {
    if (event.kind != RestoreEvent::Kind::kFailed || !event.task.has_value()) return;
    if (drained) {  // from here its stream thread knows: it may only close it
      if (auto it = failed_.find(event.incarnation); it != failed_.end()) it->second.known = true;
      return;
    }
    if (!failed_.emplace(event.incarnation, Failed{std::string(rt)}).second) {
      Violation(event.incarnation.ToString(),
                fmt::format("reported failed again by '{}' (first by '{}')", rt,
                            failed_.at(event.incarnation).restore_thread));
    }
  }

  // Failed on its stream thread before it ran: known there at once.
  void OnTaskFailed(std::string_view st, const TaskIncarnation& who,
                    const absl::Status& error) override {
    if (error.ok()) Violation(who.ToString(), fmt::format("{} fails it without an error", st));
    auto [it, first] = failed_.emplace(who, Failed{std::string(st)});
    if (!first) {
      Violation(who.ToString(), fmt::format("reported failed again by '{}' (first by '{}')", st,
                                            it->second.restore_thread));
    }
    it->second.known = true;
  }

  // A later instance in the same world (a restart) numbers its incarnations from 1 again.
  void OnTaskOpened(const events::TaskInfo& task) override {
    auto it = failed_.find(task.who);
    if (it == failed_.end()) return;
    if (!it->second.closed) {
      Violation(task.who.ToString(), "opened again while its failed incarnation is open");
    }
    failed_.erase(it);
  }

  void OnHandOff(std::string_view, const TaskIncarnation& who, TaskHolder from,
                 TaskHolder to) override {
    if (!failed_.contains(who)) return;
    if (from == TaskHolder::kFromRestore && to == TaskHolder::kStreamThread) return;
    Violation(who.ToString(), fmt::format("moves from the {} to the {} after it failed",
                                          TaskHolderName(from), TaskHolderName(to)));
  }

  void OnTaskTransition(const events::TaskInfo& task, TaskState, TaskState to) override {
    auto it = failed_.find(task.who);
    if (it == failed_.end()) return;
    if (to == TaskState::kClosed) it->second.closed = true;
    if (to == TaskState::kRestoring || to == TaskState::kRunning) {
      Violation(task.who.ToString(),
                fmt::format("becomes {} after it failed", TaskStateName(to)));
    }
  }

  void OnRegistered(std::string_view reader, const TopicPartition& tp,
                    const TaskIncarnation& owner, TaskType) override {
    if (failed_.contains(owner)) {
      Violation(owner.ToString(), fmt::format("registers {} in {} after it failed",
                                              tp.ToString(), reader));
    }
  }

  void OnDecision(std::string_view st, const TaskIncarnation& who, TaskDecision decision,
                  TaskType) override {
    auto it = failed_.find(who);
    const bool failed = it != failed_.end();
    if (decision == TaskDecision::kCloseFailed && !failed) {
      Violation(who.ToString(), fmt::format("{} closes it as failed, but it never failed", st));
    }
    // (Before the failure reaches it, its stream thread may still decide about it: a CLOSE
    // sent while the failure is on its way is fine.)
    if (failed && it->second.known && decision != TaskDecision::kCloseFailed &&
        decision != TaskDecision::kCloseShutdown) {
      Violation(who.ToString(), fmt::format("{} decides to {} it after it failed", st,
                                            TaskDecisionName(decision)));
    }
  }

  void OnTaskManagerView(std::string_view st, const std::vector<TaskView>& tasks) override {
    for (const TaskView& t : tasks) {
      if (auto it = failed_.find(t.who); it != failed_.end() && it->second.known) {
        Violation(t.who.ToString(), fmt::format("{} lists it ({}) after it failed", st,
                                                TaskViewWhereName(t.where)));
      }
    }
  }

  void Final() override {
    for (const auto& [who, f] : failed_) {
      if (!f.closed) {
        Violation(who.ToString(),
                  fmt::format("failed in '{}' and never closed", f.restore_thread));
      }
    }
  }

 private:
  struct Failed {
    std::string restore_thread;  // that reported it
    bool known = false;          // the failure reached its stream thread
    bool closed = false;
  };
  std::map<TaskIncarnation, Failed> failed_;
};

RESTORESIM_CHECKER(20, FailedTasksChecker);

}  // namespace

}  // namespace restoresim::properties
