// The invariant oracle: a RuntimeObserver that checks the runtime's invariants at every event
// of a simulated run and fails the run at the first violation, naming the invariant, the step
// and the task incarnation:
//
//   [invariant:registration] step 8123, 0_2#14: changelog app-counts-changelog-2 registered
//   twice in instance-a-restore (already by 0_2#11)
//
// Invariants (names as they appear in messages):
//   single_owner     every open task is held by exactly one of the stream thread (registry,
//                    pending initialisation, ready), the restore thread, or one of the queues
//                    between them; it moves only along the hand-off edges, only its holder
//                    changes its state (a restore thread touches only what it holds; nobody
//                    touches a task in a queue or held by a restore thread; the stream side
//                    is not pinned to one thread, as the thread that joined a stream thread
//                    closes its tasks), one state manager at a time has a task directory's
//                    stores open, and nothing is left open, or dropped unclosed, after
//                    shutdown.
//   registration     a changelog is registered at most once per restore thread, only by the
//                    incarnation the restore thread holds, never after that incarnation's
//                    CLOSE was applied, and nothing of it is registered once its CLOSE is
//                    applied; a type conversion completes only while none of the task's
//                    changelogs is registered.
//   process_before_restored  an active task processes records only after every one of its
//                    changelogs completed restoration under that incarnation.
//   store_contents   a restored active task's store equals the fold of its changelog up to
//                    the restored position (checked when it reaches the stream thread).
//   checkpoint       a checkpoint never names an offset beyond what the stores flushed (the
//                    oracle's own account of Advance and flushes: it catches a checkpoint of
//                    unflushed offsets, not an Advance past the store's data — store_contents
//                    does), and never a changelog reported corrupted until the directory is
//                    wiped.
//   errors           every event the restore thread emits reaches the stream thread; an event
//                    carries the task it names; a corruption report is applied only to the
//                    incarnation it names.
//   listener_pairing each restore start is followed by exactly one end or suspended, with
//                    batches only in between.
//   reader_mode      a standby changelog is updated only while no active changelog of the
//                    same restore thread is restoring.
//   restore_progress restoration moves forward and completes at (or past) its end offset.
// The scenarios check liveness and the final state against the reference model themselves
// (scenarios/scenario_checks.h), with the same message format.
//
// Cost: every hook is a few map operations; store_contents reads the store and folds the
// changelog once per restored task. Observing adds no scheduling point (the changelog is read
// with FakeBroker::PeekLog), so a run's schedule and trace hash are the same with the oracle
// on or off.
//
// Thread-safety: not thread-safe; installed on the OS thread that runs one simulation, whose
// simulated threads it observes.
#ifndef RESTORESIM_PROPERTIES_ORACLE_H_
#define RESTORESIM_PROPERTIES_ORACLE_H_

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/runtime_observer.h"
#include "sim/simulation.h"

namespace restoresim::properties {

// A changelog partition as the broker holds it: its log start offset and every record from
// there on.
struct PeekedLog {
  int64_t start_offset = 0;
  std::vector<ConsumerRecord> records;
};
using LogPeek = std::function<PeekedLog(const TopicPartition&)>;

struct OracleCounts {
  int64_t events = 0;            // hook calls observed
  int64_t store_checks = 0;      // store_contents comparisons made
  int64_t store_checks_skipped = 0;  // changelog truncated below the restored range
};

class Oracle final : public RuntimeObserver {
 public:
  Oracle(sim::Simulation& sim, LogPeek peek_log);

  // End-of-run checks, after the runtime shut down: nothing open, every event drained, every
  // listener start closed.
  void CheckFinal();
  const OracleCounts& counts() const { return counts_; }

  // Process-wide switch (for benchmarks measuring the oracle's cost): when off, scenarios do
  // not install the oracle. On by default.
  static void SetEnabled(bool enabled);
  static bool Enabled();

  // ---- RuntimeObserver ----
  void OnTaskOpened(const Task& task) override;
  void OnTaskTransition(const Task& task, TaskState from, TaskState to) override;
  void OnTaskDestroyed(const TaskIncarnation& who, TaskState state) override;
  void OnProcess(const Task& task, size_t records) override;
  void OnHandOff(std::string_view restore_thread, const TaskIncarnation& who, TaskHolder from,
                 TaskHolder to) override;
  void OnCloseApplied(std::string_view restore_thread, const TaskIncarnation& who) override;
  void OnTypeConversion(std::string_view restore_thread, const TaskIncarnation& who,
                        TaskType from, TaskType to) override;
  void OnRestoreEvent(std::string_view restore_thread, const RestoreEvent& event,
                      bool drained) override;
  void OnCorruptionHandled(const TaskIncarnation& reported, const Task* acted_on) override;
  void OnRegistered(std::string_view reader, const TopicPartition& changelog,
                    const TaskIncarnation& owner, TaskType type) override;
  void OnUnregistered(std::string_view reader, const TopicPartition& changelog,
                      const TaskIncarnation& owner) override;
  void OnRestoredBatch(std::string_view reader, const TopicPartition& changelog,
                       const TaskIncarnation& owner, TaskType type, int64_t next_offset,
                       int64_t records) override;
  void OnCompleted(std::string_view reader, const TopicPartition& changelog,
                   const TaskIncarnation& owner, int64_t position, int64_t end_offset) override;
  void OnListener(std::string_view reader, const TopicPartition& changelog,
                  ListenerCall call) override;
  void OnReaderDestroyed(std::string_view reader) override;
  void OnStoresRegistered(const StateManager& state) override;
  void OnStoresReleased(const StateManager& state) override;
  void OnAdvance(const StateManager& state, const TopicPartition& changelog,
                 int64_t next_offset) override;
  void OnFlushed(const StateManager& state) override;
  void OnCheckpointWritten(const StateManager& state, const CheckpointOffsets& offsets) override;
  void OnWiped(const StateManager& state) override;

 private:
  struct TaskRecord {
    TaskHolder holder = TaskHolder::kStreamThread;
    std::string restore_thread;  // once handed to one
    std::string task_dir;
    TaskType type = TaskType::kActive;
    std::set<TopicPartition> completed;  // changelogs completed under this incarnation
  };
  struct Registration {
    TaskIncarnation owner;
    TaskType type = TaskType::kActive;
    bool completed = false;
    int64_t position = -1;
  };
  struct DirRecord {
    std::map<TopicPartition, int64_t> pending;
    std::map<TopicPartition, int64_t> flushed;
    std::set<TopicPartition> corrupted;
  };
  using ReaderKey = std::pair<std::string, TopicPartition>;

  bool Off() const;
  [[noreturn]] void Violation(std::string_view invariant, const std::string& who,
                              const std::string& message);
  TaskRecord* Find(const TaskIncarnation& who);
  std::string CurrentThreadName() const;
  void CheckHolderThread(const TaskIncarnation& who, const TaskRecord& record,
                         std::string_view action);
  void CheckStoreContents(const Task& task);

  sim::Simulation& sim_;
  LogPeek peek_log_;
  OracleCounts counts_;
  std::map<TaskIncarnation, TaskRecord> open_;
  // Which state manager has each task directory's stores open (identity only; never ordered
  // by address).
  std::map<std::string, const StateManager*> dir_users_;
  std::set<std::pair<std::string, TaskIncarnation>> close_applied_;
  std::set<TaskIncarnation> closed_;
  // Destroyed without being closed (reported by CheckFinal; tests of parts drop tasks freely).
  std::map<TaskIncarnation, TaskHolder> dropped_;
  std::map<ReaderKey, Registration> registered_;
  std::set<ReaderKey> listening_;
  std::map<std::string, DirRecord> dirs_;
  std::map<std::string, int64_t> events_in_flight_;  // per restore thread
  std::set<TaskIncarnation> corruption_reported_;
  std::set<std::string> restore_threads_;
};

}  // namespace restoresim::properties

#endif  // RESTORESIM_PROPERTIES_ORACLE_H_
