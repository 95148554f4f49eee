// single_owner: every open task is held by exactly one of the stream thread (running,
// pending initialisation, ready), the restore thread, or one of the queues between them. It
// moves only along the hand-off edges, from the holder the ledger saw; only its holder changes
// it (a restore thread touches only what it holds, nobody touches a task in a queue; the
// stream side is not pinned to one thread: the thread that joined a stream thread closes its
// tasks); a task manager lists each task once; one state manager at a time has a task
// directory's stores open; nothing is open, or dropped unclosed, after shutdown.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <type_traits>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class SingleOwnerChecker final : public Checker {
 public:
  explicit SingleOwnerChecker(OracleContext& c) : Checker(c, "single_owner") {}

  void OnTaskOpened(const events::TaskInfo& task) override {
    if (ledger().Find(task.who) != nullptr) {
      Violation(task.who.ToString(), "opened twice");
    }
  }

  void OnTaskTransition(const events::TaskInfo& task, TaskState from, TaskState to) override {
    const TaskIncarnation& who = task.who;
    const TaskRecord* record = ledger().Find(who);
    if (record == nullptr) {
      Violation(who.ToString(), fmt::format("{} -> {} of a task that is not open",
                                            TaskStateName(from), TaskStateName(to)));
    }
    CheckHolderThread(who, *record, [&] {
      return fmt::format("{} -> {}", TaskStateName(from), TaskStateName(to));
    });
    if (to == TaskState::kClosed && record->holder != TaskHolder::kStreamThread) {
      Violation(who.ToString(),
                fmt::format("closed while held by the {}", TaskHolderName(record->holder)));
    }
  }

  void OnProcess(const events::TaskInfo& task, size_t records) override {
    if (records == 0) return;
    const TaskRecord* record = ledger().Find(task.who);
    if (record == nullptr) {
      Violation(task.who.ToString(), "processes records but is not open");
    }
    CheckHolderThread(task.who, *record, "processing");
  }

  void OnHandOff(std::string_view rt, const TaskIncarnation& who, TaskHolder from,
                 TaskHolder to) override {
    const TaskRecord* record = ledger().Find(who);
    if (record == nullptr) {
      Violation(who.ToString(), fmt::format("moves from the {} to the {} but is not open",
                                            TaskHolderName(from), TaskHolderName(to)));
    }
    if (record->holder != from) {
      Violation(who.ToString(),
                fmt::format("moves from the {} to the {}, but the {} holds it",
                            TaskHolderName(from), TaskHolderName(to),
                            TaskHolderName(record->holder)));
    }
    if (!record->restore_thread.empty() && record->restore_thread != rt) {
      Violation(who.ToString(), fmt::format("handed to restore thread '{}' after '{}'", rt,
                                            record->restore_thread));
    }
  }

  // A state manager's stores change only on the thread that holds its task.
  void OnAdvance(const events::StateInfo& state, const TopicPartition& tp, int64_t next) override {
    CheckStateToucher(state, [&] { return fmt::format("advancing {}", tp.ToString()); });
  }
  void OnFlushed(const events::StateInfo& state) override { CheckStateToucher(state, "a flush"); }
  void OnCheckpointWritten(const events::StateInfo& state, const CheckpointOffsets&) override {
    CheckStateToucher(state, "a checkpoint");
  }

  void OnStoresRegistered(const events::StateInfo& state) override {
    auto user = ledger().dir_users.find(state.task_dir);
    if (user != ledger().dir_users.end() && user->second != state.state_id) {
      Violation(state.task_dir,
                "stores opened while another incarnation of the task has them open");
    }
  }

  // A task manager lists each task once (KAFKA-17402: one task in two collections).
  // (A view lists a handful: each entry against those before it, no set built per view.)
  void OnTaskManagerView(std::string_view st, const std::vector<TaskView>& tasks) override {
    for (auto t = tasks.begin(); t != tasks.end(); ++t) {
      auto first = std::find_if(tasks.begin(), t,
                                [&](const TaskView& u) { return u.who.id == t->who.id; });
      if (first != t) {
        Violation(t->who.ToString(), fmt::format("{} lists task {} twice: {} and {}", st,
                                                 t->who.id.ToString(),
                                                 TaskViewWhereName(first->where),
                                                 TaskViewWhereName(t->where)));
      }
    }
  }

  void Final() override {
    for (const auto& [who, record] : ledger().open) {
      Violation(who.ToString(), fmt::format("still open after shutdown, held by the {}",
                                            TaskHolderName(record.holder)));
    }
    for (const auto& [who, holder] : ledger().dropped) {
      Violation(who.ToString(), fmt::format("destroyed without being closed, held by the {}",
                                            TaskHolderName(holder)));
    }
  }

 private:
  // Only the holder changes a task: a restore thread touches only what it holds, and nobody
  // touches a task the restore thread holds or one in a queue.
  // `action`: what is done, as text or as a callable making it (called for a violation only).
  template <typename Action>
  static std::string Text(const Action& action) {
    if constexpr (std::is_invocable_v<const Action&>) {
      return action();
    } else {
      return std::string(action);
    }
  }

  template <typename Action>
  void CheckHolderThread(const TaskIncarnation& who, const TaskRecord& record,
                         const Action& action) {
    const std::string_view current = context().CurrentThreadView();
    switch (record.holder) {
      case TaskHolder::kRestoreThread:
        if (current != record.restore_thread) {
          Violation(who.ToString(),
                    fmt::format("{} on thread '{}' while restore thread '{}' holds it",
                                Text(action), current, record.restore_thread));
        }
        return;
      case TaskHolder::kStreamThread:
        if (ledger().restore_threads.contains(current)) {
          Violation(who.ToString(),
                    fmt::format("{} on restore thread '{}' while the stream thread holds it",
                                Text(action), current));
        }
        return;
      case TaskHolder::kToRestore:
      case TaskHolder::kFromRestore:
        Violation(who.ToString(), fmt::format("{} on thread '{}' while it is in the {}",
                                              Text(action), current,
                                              TaskHolderName(record.holder)));
    }
  }

  template <typename Action>
  void CheckStateToucher(const events::StateInfo& state, const Action& action) {
    const TaskIncarnation* owner = ledger().OwnerOf(state);
    if (owner == nullptr) return;  // a state manager without a task (a test's own)
    const TaskRecord* record = ledger().Find(*owner);
    if (record != nullptr) CheckHolderThread(*owner, *record, action);
  }
};

RESTORESIM_CHECKER(10, SingleOwnerChecker);

}  // namespace

}  // namespace restoresim::properties
