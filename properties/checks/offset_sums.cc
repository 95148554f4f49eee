// offset_sums: the task offset sums a stream thread reports for the Streams assignor tell where
// state is: every active it runs is reported LATEST (-2), LATEST is reported only for actives it
// holds, every other sum is a position sum (never negative), and every task directory whose
// checkpoint on disk one of its own tasks wrote, not deleted or wiped since, is reported (Kafka's
// TaskManager.getTaskOffsetSums reads the checkpoint of every task directory it can lock).
//
// The sums reach the assignor only in subscription user data; the event `offset_sums` carries
// them to the oracle. Without it the campaign's survivor c614c8c47514 (the sums forgot the tasks
// a thread held before) changed placements that nothing judged (docs/MUTATION_SCORE.md).
#include <map>
#include <string>

#include <fmt/format.h>

#include "core/runtime/assignment_info.h"
#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class OffsetSumsChecker final : public Checker {
 public:
  explicit OffsetSumsChecker(OracleContext& c) : Checker(c, "offset_sums") {}

  // A checkpoint on disk now names what its task's stores hold: the thread whose task wrote it
  // must report the directory once it no longer holds the task. The ledger holds the write's
  // claim (OnCheckpointWritten) until it takes this result in.
  void OnCheckpointResult(const events::StateInfo& state, bool written) override {
    if (!written) return;  // the file on disk is the one before
    const TaskIncarnation* who = ledger().OwnerOf(state);
    const std::string* thread = StreamThreadOf(state);
    if (thread == nullptr || thread->empty()) return;
    auto dir = ledger().dirs.find(state.task_dir);
    if (dir == ledger().dirs.end()) return;  // a result without its write (an event file's)
    on_disk_[state.task_dir] = OnDisk{*thread, who->id, SumOf(dir->second.checkpointed)};
  }
  void OnCheckpointDeleted(const events::StateInfo& state) override {
    on_disk_.erase(state.task_dir);
  }
  void OnWiped(const events::StateInfo& state) override { on_disk_.erase(state.task_dir); }
  // Another thread's task took the directory: what it reports is that thread's business. Its
  // own: the checkpoint as read, a claim the stores do not back dropped from the file already.
  void OnStoresRegistered(const events::StateInfo& state) override {
    auto it = on_disk_.find(state.task_dir);
    if (it == on_disk_.end() || ledger().OwnerOf(state) == nullptr) return;
    const std::string* thread = StreamThreadOf(state);
    if (thread != nullptr && *thread != it->second.thread) {
      on_disk_.erase(it);
    } else {
      it->second.sum = SumOf(state.flushed);
    }
  }

  void OnOffsetSumsReported(std::string_view stream_thread,
                            const std::map<TaskId, int64_t>& sums) override {
    const std::string thread(stream_thread);
    CheckRunningAreLatest(thread, sums);
    for (const auto& [id, sum] : sums) {
      if (sum == kLatestOffset) {
        if (!Holds(thread, id, /*active_only=*/true)) {
          Violation(id.ToString(), fmt::format("{} reports LATEST for a task it holds no active "
                                               "of",
                                               thread));
        }
      } else if (sum < 0) {
        Violation(id.ToString(), fmt::format("{} reports the offset sum {}", thread, sum));
      }
    }
    for (const auto& [dir, disk] : on_disk_) {
      if (disk.thread != thread) continue;
      auto it = sums.find(disk.task);
      if (it == sums.end()) {
        Violation(disk.task.ToString(),
                  fmt::format("{} leaves out of its offset sums the task directory {}, whose "
                              "checkpoint one of its tasks wrote",
                              thread, dir));
      }
      // A directory it holds no task of: what its checkpoint names, as Kafka reads the file.
      if (!Holds(thread, disk.task, /*active_only=*/false) && it->second != disk.sum) {
        Violation(disk.task.ToString(),
                  fmt::format("{} reports the offset sum {} for the task directory {} it holds "
                              "nothing of, whose checkpoint names {}",
                              thread, it->second, dir, disk.sum));
      }
    }
  }

 private:
  struct OnDisk {
    std::string thread;  // the stream thread whose task wrote the checkpoint
    TaskId task;
    int64_t sum = 0;  // of the offsets it names (pinned at INT64_MAX, as Kafka's)
  };

  static int64_t SumOf(const CheckpointOffsets& offsets) {
    int64_t sum = 0;
    for (const auto& [changelog, offset] : offsets) {
      if (__builtin_add_overflow(sum, offset, &sum)) return INT64_MAX;
    }
    return sum;
  }

  void CheckRunningAreLatest(const std::string& thread, const std::map<TaskId, int64_t>& sums) {
    for (const auto& [who, record] : ledger().open) {
      if (record.stream_thread != thread || record.state != TaskState::kRunning) continue;
      auto it = sums.find(who.id);
      if (it != sums.end() && it->second == kLatestOffset) continue;
      Violation(who.ToString(),
                fmt::format("{} runs it but reports {}", thread,
                            it == sums.end() ? std::string("no offset sum")
                                             : fmt::format("the offset sum {}", it->second)));
    }
  }
  // The stream thread whose task manager made the open task these stores belong to.
  const std::string* StreamThreadOf(const events::StateInfo& state) const {
    const TaskIncarnation* who = ledger().OwnerOf(state);
    if (who == nullptr) return nullptr;
    auto record = ledger().open.find(*who);
    return record == ledger().open.end() ? nullptr : &record->second.stream_thread;
  }
  // Whether `thread` holds an open incarnation of `id` (an active one, with active_only).
  bool Holds(const std::string& thread, const TaskId& id, bool active_only) const {
    for (const auto& [who, record] : ledger().open) {
      if (who.id == id && record.stream_thread == thread &&
          (!active_only || record.type == TaskType::kActive)) {
        return true;
      }
    }
    return false;
  }

  std::map<std::string, OnDisk> on_disk_;  // task directory -> who wrote its checkpoint
};

RESTORESIM_CHECKER(270, OffsetSumsChecker);

}  // namespace

}  // namespace restoresim::properties
