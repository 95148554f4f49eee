// paused_tasks: paused tasks receive no records (KIP-834). While a task's topology is paused,
// nothing is processed by it and nothing is restored or updated into its stores:
//   * a task its holder reported paused (OnTaskPaused: a restore thread took it out of its
//     reader, or a stream thread stopped processing it) gets no restored batch and processes
//     no record until that holder resumes it (a restore thread's pause also ends when the task
//     leaves it; a stream thread's when it stops running);
//   * and a pause is taken up at once: a thread named by the pause (OnTopologyPause) that
//     began a loop iteration after it restores nothing and processes nothing until the
//     topology is resumed — so a thread that never pauses its tasks is caught too;
//   * a pause holds from the moment each task arrives (KIP-834: a task added to the state
//     updater while its topology is paused is added paused): once a restore thread took up
//     the pause (an iteration began after it), every task it holds at the start of its next
//     iteration is one it reported paused — the tasks it held then and those it received since;
//   * pause and resume reports pair: a task is not paused twice by one holder, nor resumed
//     by a holder that did not pause it.
#include <set>

#include <fmt/format.h>

#include "absl/container/flat_hash_map.h"
#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class PausedTasksChecker final : public Checker {
 public:
  explicit PausedTasksChecker(OracleContext& c) : Checker(c, "paused_tasks") {}

  void OnTopologyPause(std::string_view topology, bool paused,
                       const std::vector<std::string>& threads) override {
    const uint64_t now = ++seq_;
    for (const std::string& t : threads) {
      if (paused) {
        pause_seq_.try_emplace(t, now);  // a second Pause does not move the first
      } else {
        pause_seq_.erase(t);
      }
    }
    (void)topology;
  }

  void OnTaskPaused(std::string_view thread, const TaskIncarnation& who, bool paused) override {
    auto it = paused_by_.find(who);
    if (paused) {
      if (it != paused_by_.end()) {
        Violation(who.ToString(), fmt::format("{} pauses it, paused already by {}", Str(thread),
                                              it->second));
      }
      paused_by_.emplace(who, Str(thread));
      return;
    }
    if (it == paused_by_.end() || it->second != thread) {
      Violation(who.ToString(), fmt::format("{} resumes it, but {}", Str(thread),
                                            it == paused_by_.end()
                                                ? std::string("it is not paused")
                                                : "it was paused by " + it->second));
    }
    paused_by_.erase(it);
  }

  void OnRestoreLoop(events::Name rt) override {
    if (HeldToPause(rt)) CheckAllPaused(rt);  // the iteration that ends took it up
    LoopBegan(rt);
  }
  void OnStreamLoop(events::Name st, events::Name) override {
    LoopBegan(st);
    processing_ = events::Name();
  }
  void OnProcessBegin(events::Name st) override { processing_ = st; }

  void OnRestoredBatch(std::string_view reader, const TopicPartition& tp,
                       const TaskIncarnation& owner, TaskType type, int64_t,
                       int64_t records) override {
    if (records <= 0) return;
    // (Formatted only for a violation: this runs at every batch.)
    auto what = [&] {
      return fmt::format("{} {} records of {} {}",
                         type == TaskType::kActive ? "restores" : "updates", records,
                         tp.ToString(), owner.ToString());
    };
    if (auto it = paused_by_.find(owner); it != paused_by_.end()) {
      Violation(owner.ToString(), fmt::format("{} {} while {} holds it paused", Str(reader),
                                              what(), it->second));
    }
    if (HeldToPause(reader)) {
      Violation(owner.ToString(), fmt::format("{} {}, in an iteration it began after its "
                                              "topology was paused",
                                              Str(reader), what()));
    }
  }

  void OnProcess(const events::TaskInfo& task, size_t records) override {
    if (records == 0) return;
    const TaskIncarnation& who = task.who;
    if (auto it = paused_by_.find(who); it != paused_by_.end()) {
      Violation(who.ToString(), fmt::format("processes {} records while {} holds it paused",
                                            records, it->second));
    }
    if (!processing_.empty() && HeldToPause(processing_)) {
      Violation(who.ToString(), fmt::format("processes {} records on {}, in an iteration it "
                                            "began after its topology was paused",
                                            records, processing_));
    }
  }

  // A pause ends when its holder lets the task go.
  void OnHandOff(std::string_view rt, const TaskIncarnation& who, TaskHolder from,
                 TaskHolder to) override {
    if (to == TaskHolder::kRestoreThread) held_[Str(rt)].insert(who);
    if (from == TaskHolder::kRestoreThread) held_[Str(rt)].erase(who);
    auto it = paused_by_.find(who);
    if (from == TaskHolder::kRestoreThread && it != paused_by_.end() && it->second == rt) {
      paused_by_.erase(it);
    }
  }
  void OnTaskTransition(const events::TaskInfo& task, TaskState from, TaskState) override {
    if (from == TaskState::kRunning) paused_by_.erase(task.who);
  }
  void OnTaskDestroyed(const TaskIncarnation& who, TaskState) override {
    paused_by_.erase(who);
    for (auto& [thread, tasks] : held_) tasks.erase(who);
  }

 private:
  // `thread` begins a loop iteration: now.
  void LoopBegan(events::Name thread) { loop_seq_[thread.id()] = ++seq_; }

  // Called at the start of an iteration of `thread` after one that began under the pause.
  void CheckAllPaused(std::string_view thread) {
    auto held = held_.find(thread);
    if (held == held_.end()) return;
    for (const TaskIncarnation& who : held->second) {
      auto it = paused_by_.find(who);
      if (it != paused_by_.end() && it->second == thread) continue;
      Violation(who.ToString(),
                fmt::format("{} holds it unpaused at the start of an iteration, after an "
                            "iteration that began under its topology's pause",
                            thread));
    }
  }

  // Whether `thread` began its current iteration after a pause that still holds.
  bool HeldToPause(std::string_view thread) const {
    auto paused = pause_seq_.find(thread);
    if (paused == pause_seq_.end()) return false;  // (no pause in force: the usual answer)
    auto loop = loop_seq_.find(events::Name(thread).id());
    return loop != loop_seq_.end() && loop->second > paused->second;
  }

  uint64_t seq_ = 0;  // orders pauses and loop iterations
  // (Keyed by name with transparent lookups: a hook's string_view finds without allocating.)
  std::map<std::string, uint64_t, std::less<>> pause_seq_;  // per thread named by a pause in force
  // Per thread by its name's identity: its last iteration's (looked up only, never iterated).
  absl::flat_hash_map<const void*, uint64_t> loop_seq_;
  events::Name processing_;  // the stream thread processing now ("" between loops)
  std::map<TaskIncarnation, std::string> paused_by_;  // task paused -> the holder that did it
  // Restore thread -> the tasks it holds.
  std::map<std::string, std::set<TaskIncarnation>, std::less<>> held_;
};

RESTORESIM_CHECKER(180, PausedTasksChecker);

}  // namespace

}  // namespace restoresim::properties
