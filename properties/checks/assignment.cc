// assignment: a stream thread holds what it is assigned. After every rebalance callback,
// hand-over and drain of the restore thread's events (its task manager's view):
//   * every view entry is an open incarnation held where the entry says (running, pending
//     and ready ones by the stream thread that created them; those in the restore thread, or
//     awaiting their CLOSE, by the restore thread or a queue between);
//   * every assigned task is there with its assigned type (or awaits the return of the
//     incarnation whose CLOSE was sent: its fate is decided when it comes back);
//   * nothing is there that the assignment does not want in that form.
// And every decision agrees with the assignment at the moment it is taken: a create, recycle,
// resume, revive or start only into the wanted form, a close or CLOSE only of a form no longer
// wanted — so a decision left pending from an older assignment never overrides a newer one.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

std::string Form(std::optional<TaskType> type) {
  return type ? std::string(TaskTypeName(*type)) : std::string("not assigned");
}

class AssignmentChecker final : public Checker {
 public:
  explicit AssignmentChecker(OracleContext& c) : Checker(c, "assignment") {}

  void OnDecision(std::string_view st, const TaskIncarnation& who, TaskDecision decision,
                  TaskType type) override {
    auto w = ledger().wanted.find(st);
    if (w == ledger().wanted.end()) return;  // no assignment yet (a hand-driven test)
    const std::optional<TaskType> want = w->second.Of(who.id);
    bool agrees = true;
    switch (decision) {
      case TaskDecision::kCreate:
      case TaskDecision::kRecycle:
      case TaskDecision::kResume:
      case TaskDecision::kRevive:
        agrees = want == type;
        break;
      case TaskDecision::kStartRunning:
        agrees = want == TaskType::kActive && type == TaskType::kActive;
        break;
      case TaskDecision::kSendClose:
      case TaskDecision::kClose:
      case TaskDecision::kCloseStale:
        agrees = want != type;
        break;
      case TaskDecision::kCloseLost:
      case TaskDecision::kCloseShutdown:
      case TaskDecision::kCloseFailed:
        break;
    }
    if (!agrees) {
      Violation(who.ToString(), fmt::format("{} decides to {} it as {} while its assignment has "
                                            "it {}",
                                            st, TaskDecisionName(decision), TaskTypeName(type),
                                            Form(want)));
    }
  }

  void OnTaskManagerView(std::string_view thread, const std::vector<TaskView>& tasks) override {
    for (const TaskView& t : tasks) CheckHeld(thread, t);
    // The view's first entry for a task (a view lists a handful: a scan, no index built).
    auto first_of = [&tasks](const TaskId& id) -> const TaskView* {
      for (const TaskView& t : tasks) {
        if (t.who.id == id) return &t;
      }
      return nullptr;
    };
    // Everything the stream thread holds is in the view.
    for (const auto& [who, record] : ledger().open) {
      if (record.holder != TaskHolder::kStreamThread || record.stream_thread != thread) continue;
      const TaskView* listed = first_of(who.id);
      if (listed == nullptr || listed->who != who) {
        Violation(who.ToString(), fmt::format("held by {} but not in its task manager", thread));
      }
    }
    auto w = ledger().wanted.find(thread);
    if (w == ledger().wanted.end()) return;
    for (const TaskView& t : tasks) {
      // Decided later: when the restore thread returns it, or at the rebalance's assignment.
      if (t.where == TaskView::Where::kAwaiting || t.where == TaskView::Where::kRevoked) continue;
      if (w->second.Of(t.who.id) != t.type) {
        Violation(t.who.ToString(), fmt::format("{} holds it as {} ({}) while its assignment has "
                                                "it {}",
                                                thread, TaskTypeName(t.type),
                                                TaskViewWhereName(t.where),
                                                Form(w->second.Of(t.who.id))));
      }
    }
    auto check_wanted = [&](const std::set<TaskId>& ids, TaskType type) {
      for (const TaskId& id : ids) {
        if (first_of(id) != nullptr) continue;  // there (its type checked above), or awaited
        Violation(id.ToString(), fmt::format("assigned to {} as {} but it holds no incarnation",
                                             thread, TaskTypeName(type)));
      }
    };
    check_wanted(w->second.active, TaskType::kActive);
    check_wanted(w->second.standby, TaskType::kStandby);
  }

 private:
  void CheckHeld(std::string_view thread, const TaskView& t) {
    const TaskRecord* record = ledger().Find(t.who);
    if (record == nullptr) {
      Violation(t.who.ToString(), fmt::format("{} lists it {}, but it is not open", thread,
                                              TaskViewWhereName(t.where)));
    }
    const bool restore_side = t.where == TaskView::Where::kInRestore ||
                              t.where == TaskView::Where::kAwaiting;
    const bool with_stream = record->holder == TaskHolder::kStreamThread;
    if (restore_side == with_stream) {
      Violation(t.who.ToString(), fmt::format("{} lists it {}, but the {} holds it", thread,
                                              TaskViewWhereName(t.where),
                                              TaskHolderName(record->holder)));
    }
    if (!restore_side && record->type != t.type) {
      Violation(t.who.ToString(), fmt::format("{} lists it as {}, but it was created {}", thread,
                                              TaskTypeName(t.type), TaskTypeName(record->type)));
    }
  }
};

RESTORESIM_CHECKER(40, AssignmentChecker);

}  // namespace

}  // namespace restoresim::properties
