// registration: a changelog is registered in a restore thread's reader iff its task is held
// there — every changelog of a task the restore thread holds unpaused is registered there to
// that incarnation whenever an iteration of its loop begins; and a changelog is registered at
// most once, only by the incarnation that restore thread holds, never after that
// incarnation's CLOSE was applied, and nothing of it left registered (but completed active
// changelogs, kept until the CLOSE) once the task leaves the restore thread or its CLOSE is
// applied; a CLOSE never overtakes its own queued CREATE; a type conversion completes only
// while none of the task directory's changelogs is registered in its restore thread.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class RegistrationChecker final : public Checker {
 public:
  explicit RegistrationChecker(OracleContext& c) : Checker(c, "registration") {}

  void OnRegistered(std::string_view reader, const TopicPartition& tp, const TaskIncarnation& owner,
                    TaskType type) override {
    const std::string rt = Str(reader);
    if (auto it = ledger().registered.find({rt, tp}); it != ledger().registered.end()) {
      Violation(owner.ToString(), fmt::format("changelog {} registered twice in {} (already by {})",
                                              tp.ToString(), rt, it->second.owner.ToString()));
    }
    if (ledger().close_applied.contains({rt, owner})) {
      Violation(owner.ToString(),
                fmt::format("changelog {} registered in {} after the incarnation's CLOSE was "
                            "applied",
                            tp.ToString(), rt));
    }
    const TaskRecord* record = ledger().Find(owner);
    if (record == nullptr) {
      if (ledger().closed.contains(owner)) {
        Violation(owner.ToString(),
                  fmt::format("changelog {} registered for an incarnation already closed",
                              tp.ToString()));
      }
      return;  // never opened as a Task: a reader driven directly by a test
    }
    if (record->holder != TaskHolder::kRestoreThread || record->restore_thread != rt) {
      Violation(owner.ToString(), fmt::format("changelog {} registered in {} while the {} holds "
                                              "the task",
                                              tp.ToString(), rt, TaskHolderName(record->holder)));
    }
  }

  void OnUnregistered(std::string_view reader, const TopicPartition& tp,
                      const TaskIncarnation& owner) override {
    const Registration* reg = ledger().RegistrationOf(reader, tp);
    if (reg == nullptr || reg->owner != owner) {
      Violation(owner.ToString(),
                fmt::format("changelog {} unregistered but not registered by it", tp.ToString()));
    }
  }

  void OnRestoredBatch(std::string_view reader, const TopicPartition& tp,
                       const TaskIncarnation& owner, TaskType, int64_t, int64_t) override {
    RequireRegistered(reader, tp, owner, "restores");
    // Restoring into a task the restore thread no longer holds.
    const TaskRecord* record = ledger().Find(owner);
    if (record != nullptr && record->holder != TaskHolder::kRestoreThread) {
      Violation(owner.ToString(),
                fmt::format("changelog {} restores into the task while the {} holds it",
                            tp.ToString(), TaskHolderName(record->holder)));
    }
  }

  void OnCompleted(std::string_view reader, const TopicPartition& tp,
                   const TaskIncarnation& owner, int64_t, int64_t) override {
    RequireRegistered(reader, tp, owner, "completes");
  }

  // Held => registered: at the start of each iteration of a restore thread's loop, every
  // changelog of every task it holds (RESTORING, not paused by it) is registered in its reader
  // to that incarnation. (Completed active changelogs stay registered until the CLOSE.)
  void OnRestoreLoop(events::Name rt) override {
    for (const auto& [who, record] : ledger().open) {
      // (The enums first: the name is compared only for tasks some restore thread restores.)
      if (record.holder != TaskHolder::kRestoreThread || record.state != TaskState::kRestoring ||
          record.restore_thread != rt.view() || paused_.contains(who)) {
        continue;
      }
      auto known = changelogs_.find(who);
      if (known == changelogs_.end()) continue;  // its stores never reported
      for (const TopicPartition& tp : known->second) RequireHeldRegistered(rt, tp, who);
    }
  }

  // What each task's stores' changelogs are, as its transitions report them.
  void OnTaskTransition(const events::TaskInfo& task, TaskState, TaskState to) override {
    if (to == TaskState::kClosed) {
      changelogs_.erase(task.who);
    } else if (!task.changelogs.empty()) {
      changelogs_[task.who] = task.changelogs;
    }
  }
  void OnTaskDestroyed(const TaskIncarnation& who, TaskState) override {
    changelogs_.erase(who);
    paused_.erase(who);
  }
  void OnTaskPaused(std::string_view thread, const TaskIncarnation& who, bool paused) override {
    if (paused && ledger().restore_threads.contains(thread)) {
      paused_.insert(who);
    } else if (!paused) {
      paused_.erase(who);
    }
  }

  void OnCloseApplied(std::string_view reader, const TaskIncarnation& who) override {
    const std::string rt = Str(reader);
    if (const TaskRecord* record = ledger().Find(who);
        record != nullptr && record->holder == TaskHolder::kToRestore &&
        record->restore_thread == rt) {
      // Rounds apply in the order they were sent: a CLOSE cannot overtake the CREATE before it.
      Violation(who.ToString(),
                fmt::format("its CLOSE was applied in {} before its CREATE, still queued", rt));
    }
    for (const auto& [key, reg] : ledger().registered) {
      if (key.first == rt && reg.owner == who) {
        Violation(who.ToString(),
                  fmt::format("changelog {} still registered in {} after its CLOSE was applied",
                              key.second.ToString(), rt));
      }
    }
  }

  // Registration <-> ownership: a task leaves the restore thread with nothing of it still
  // restoring or updating (completed active changelogs stay until the CLOSE, by design).
  void OnHandOff(std::string_view reader, const TaskIncarnation& who, TaskHolder from,
                 TaskHolder to) override {
    if (from != TaskHolder::kRestoreThread) return;
    paused_.erase(who);  // a restore thread's pause ends when the task leaves it
    for (const auto& [key, reg] : ledger().registered) {
      if (key.first == reader && reg.owner == who && !reg.completed) {
        Violation(who.ToString(),
                  fmt::format("leaves {} with changelog {} still registered and not completed",
                              Str(reader), key.second.ToString()));
      }
    }
  }

  // The conversion belongs to one restore thread: the one completing it, or (when a stream
  // thread completes it) that stream thread's own. Another thread's reader may still hold a
  // completed registration of an incarnation that moved away: it never touches the stores.
  void OnTypeConversion(const events::StateInfo& state, TaskType from, TaskType to) override {
    const std::string current = context().CurrentThreadName();
    std::string reader;
    if (ledger().restore_threads.contains(current)) {
      reader = current;
    } else {
      for (const auto& [rt, st] : ledger().stream_of) {
        if (st == current) reader = rt;
      }
    }
    for (const auto& [key, reg] : ledger().registered) {
      if (!reader.empty() && key.first != reader) continue;
      if (reg.task_dir == state.task_dir) {
        Violation(reg.owner.ToString(),
                  fmt::format("type conversion {} -> {} of {} while changelog {} is registered "
                              "in {} (by {})",
                              TaskTypeName(from), TaskTypeName(to), state.task_dir,
                              key.second.ToString(), key.first, reg.owner.ToString()));
      }
    }
  }

 private:
  void RequireHeldRegistered(std::string_view rt, const TopicPartition& tp,
                             const TaskIncarnation& who) {
    const Registration* reg = ledger().RegistrationOf(rt, tp);
    if (reg != nullptr && reg->owner == who) return;
    Violation(who.ToString(),
              fmt::format("held unpaused by {} when an iteration begins, but its changelog {} is "
                          "{}",
                          Str(rt), tp.ToString(),
                          reg == nullptr ? std::string("not registered there")
                                         : "registered there to " + reg->owner.ToString()));
  }

  void RequireRegistered(std::string_view reader, const TopicPartition& tp,
                         const TaskIncarnation& owner, std::string_view what) {
    const Registration* reg = ledger().RegistrationOf(reader, tp);
    if (reg == nullptr || reg->owner != owner) {
      Violation(owner.ToString(), fmt::format("{} changelog {} without being registered for it",
                                              what, tp.ToString()));
    }
  }

  std::map<TaskIncarnation, std::vector<TopicPartition>> changelogs_;  // per open incarnation
  std::set<TaskIncarnation> paused_;  // held paused by a restore thread
};

RESTORESIM_CHECKER(30, RegistrationChecker);

}  // namespace

}  // namespace restoresim::properties
