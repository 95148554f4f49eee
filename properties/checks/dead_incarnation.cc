// dead_incarnation: no decision is taken for an incarnation that is already dead — one whose
// CLOSE was sent to the restore thread is never started running, resumed, handed over again or
// processed until that CLOSE was applied and the task came back removed; after applying it the
// restore thread never hands it back restored (as live); and a closed incarnation is decided
// about no more.
//
// Kafka's counterpart: the pending actions of TaskManager for tasks the state updater still
// owns (Tasks' pending close/recycle/update actions). KAFKA-16077 overwrote a pending close with
// a later assignment's action, so a task whose close was due ran on: the class this states.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class DeadIncarnationChecker final : public Checker {
 public:
  explicit DeadIncarnationChecker(OracleContext& c) : Checker(c, "dead_incarnation") {}

  void OnDecision(std::string_view st, const TaskIncarnation& who, TaskDecision decision,
                  TaskType) override {
    if (closed_.contains(who)) {
      Violation(who.ToString(), fmt::format("{} decides to {} it after it was closed", st,
                                            TaskDecisionName(decision)));
    }
    if (decision == TaskDecision::kSendClose) {
      close_sent_[who] = CloseInFlight{};
      return;
    }
    if (decision == TaskDecision::kStartRunning || decision == TaskDecision::kResume) {
      RejectWhileCloseSent(who, [&] {
        return fmt::format("{} decides to {} it", st, TaskDecisionName(decision));
      });
    }
  }

  void OnHandOff(std::string_view, const TaskIncarnation& who, TaskHolder from,
                 TaskHolder to) override {
    if (from != TaskHolder::kStreamThread || to != TaskHolder::kToRestore) return;
    RejectWhileCloseSent(who, [] {
      return std::string("it is handed to the restore thread again");
    });
  }

  void OnTaskTransition(const events::TaskInfo& task, TaskState, TaskState to) override {
    if (to == TaskState::kClosed) {
      closed_.insert(task.who);
    } else if (to == TaskState::kRunning) {
      RejectWhileCloseSent(task.who, [] { return std::string("it transitions to RUNNING"); });
    }
  }

  void OnProcess(const events::TaskInfo& task, size_t records) override {
    if (records == 0) return;
    RejectWhileCloseSent(task.who, [&] { return fmt::format("it processes {} records", records); });
  }

  void OnCloseApplied(std::string_view, const TaskIncarnation& who) override {
    auto it = close_sent_.find(who);
    if (it != close_sent_.end()) it->second.applied = true;
  }

  void OnRestoreEvent(events::Name rt, const events::RestoreEventInfo& event,
                      bool drained) override {
    auto it = close_sent_.find(event.incarnation);
    if (it == close_sent_.end() || !it->second.applied) return;
    if (!drained && event.kind == RestoreEvent::Kind::kRestored) {
      Violation(event.incarnation.ToString(),
                fmt::format("{} hands it back restored after it applied its CLOSE", rt));
    }
    // Removed as its CLOSE asked: the stream thread holds it again and may resume it.
    if (drained && event.kind == RestoreEvent::Kind::kRemoved) close_sent_.erase(it);
  }

  // Gone for good: nothing is kept per incarnation past its end (a soak runs for hours).
  void OnTaskDestroyed(const TaskIncarnation& who, TaskState) override {
    close_sent_.erase(who);
    closed_.erase(who);
  }

 private:
  struct CloseInFlight {
    bool applied = false;  // the restore thread applied the CLOSE (its changelogs unregistered)
  };

  // `what` makes the text, for a violation only (processing calls this for every task).
  template <typename What>
  void RejectWhileCloseSent(const TaskIncarnation& who, const What& what) {
    auto it = close_sent_.find(who);
    if (it == close_sent_.end()) return;
    Violation(who.ToString(),
              fmt::format("{} while its CLOSE is {}", what(),
                          it->second.applied ? "applied and the task not yet back"
                                             : "still in flight to the restore thread"));
  }

  std::map<TaskIncarnation, CloseInFlight> close_sent_;
  std::set<TaskIncarnation> closed_;  // CLOSED, not yet destroyed
};

RESTORESIM_CHECKER(240, DeadIncarnationChecker);

}  // namespace

}  // namespace restoresim::properties
