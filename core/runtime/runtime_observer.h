// RuntimeObserver: the runtime's observation port. The runtime reports every event an
// invariant is about — task lifecycle, hand-offs between the stream thread and its restore
// thread, changelog registration and restore progress, restore listener calls, store flushes
// and checkpoints — to the observer installed on the calling OS thread, if any. The invariant
// oracle (properties/oracle.h) is the observer of simulated runs; real runs install none and
// each hook costs one thread-local load.
//
// Why ambient and not injected: the hooks sit deep in parts (Task, StateManager,
// ChangelogReader) that scenario tests also build by hand, and the simulator runs every
// simulated thread of one run on one OS thread, so a thread-local observer reaches all of them
// without threading a pointer through every constructor (the same choice as CurrentSim()).
// Observers see events on whichever simulated thread raised them; they must not block or
// yield (they run inside the runtime's critical sections).
//
// Thread-safety: InstallObserver/CurrentObserver are per OS thread. An installed observer is
// called only from that OS thread.
#ifndef RESTORESIM_CORE_RUNTIME_RUNTIME_OBSERVER_H_
#define RESTORESIM_CORE_RUNTIME_RUNTIME_OBSERVER_H_

#include <cstdint>
#include <string_view>

#include "core/runtime/restore_thread.h"
#include "core/runtime/state_manager.h"
#include "core/runtime/task.h"

namespace restoresim {

// Who holds an open task. A task moves only along these edges:
//   kStreamThread -> kToRestore (AddItems) -> kRestoreThread (CREATE applied)
//   kRestoreThread -> kFromRestore (event emitted) -> kStreamThread (DrainEvents)
//   kToRestore -> kStreamThread (refused at shutdown) | kFromRestore (returned at shutdown)
enum class TaskHolder : uint8_t {
  kStreamThread,
  kToRestore,
  kRestoreThread,
  kFromRestore,
};
std::string_view TaskHolderName(TaskHolder holder);

enum class ListenerCall : uint8_t { kStart, kBatch, kEnd, kSuspended };

class RuntimeObserver {
 public:
  virtual ~RuntimeObserver() = default;

  // ---- tasks (on the thread that holds the task) ----
  virtual void OnTaskOpened(const Task& task) {}
  virtual void OnTaskTransition(const Task& task, TaskState from, TaskState to) {}
  virtual void OnTaskDestroyed(const TaskIncarnation& who, TaskState state) {}
  virtual void OnProcess(const Task& task, size_t records) {}

  // ---- the restore thread's boundary ----
  virtual void OnHandOff(std::string_view restore_thread, const TaskIncarnation& who,
                         TaskHolder from, TaskHolder to) {}
  // A CLOSE item was applied: every changelog of `who` is unregistered now.
  virtual void OnCloseApplied(std::string_view restore_thread, const TaskIncarnation& who) {}
  // A prepared type conversion completes (before the task's changelogs register again).
  virtual void OnTypeConversion(std::string_view restore_thread, const TaskIncarnation& who,
                                TaskType from, TaskType to) {}
  // An event left the restore thread (drained = false) or reached the stream thread (true).
  virtual void OnRestoreEvent(std::string_view restore_thread, const RestoreEvent& event,
                              bool drained) {}
  // The stream thread handled a corruption report about `reported`, acting on `acted_on`
  // (null: the report was stale and nothing was applied).
  virtual void OnCorruptionHandled(const TaskIncarnation& reported, const Task* acted_on) {}

  // ---- the changelog reader (on its restore thread) ----
  virtual void OnRegistered(std::string_view reader, const TopicPartition& changelog,
                            const TaskIncarnation& owner, TaskType type) {}
  virtual void OnUnregistered(std::string_view reader, const TopicPartition& changelog,
                              const TaskIncarnation& owner) {}
  // Records up to (not including) next_offset were written to the owner's store.
  virtual void OnRestoredBatch(std::string_view reader, const TopicPartition& changelog,
                               const TaskIncarnation& owner, TaskType type,
                               int64_t next_offset, int64_t records) {}
  virtual void OnCompleted(std::string_view reader, const TopicPartition& changelog,
                           const TaskIncarnation& owner, int64_t position,
                           int64_t end_offset) {}
  virtual void OnListener(std::string_view reader, const TopicPartition& changelog,
                          ListenerCall call) {}
  // The reader is gone (its restore thread stopped): nothing is registered in it any more.
  virtual void OnReaderDestroyed(std::string_view reader) {}

  // ---- state managers (on the thread that holds the task) ----
  virtual void OnStoresRegistered(const StateManager& state) {}
  // The stores are closed (Close, Clear) or the state manager is destroyed.
  virtual void OnStoresReleased(const StateManager& state) {}
  virtual void OnAdvance(const StateManager& state, const TopicPartition& changelog,
                         int64_t next_offset) {}
  virtual void OnFlushed(const StateManager& state) {}
  virtual void OnCheckpointWritten(const StateManager& state, const CheckpointOffsets& offsets) {}
  virtual void OnWiped(const StateManager& state) {}
};

// The observer of this OS thread (null: none).
RuntimeObserver* CurrentObserver();

// Installs `observer` on this OS thread for the scope's lifetime (restoring the previous one).
class ScopedObserver {
 public:
  explicit ScopedObserver(RuntimeObserver* observer);
  ~ScopedObserver();
  ScopedObserver(const ScopedObserver&) = delete;
  ScopedObserver& operator=(const ScopedObserver&) = delete;

 private:
  RuntimeObserver* previous_;
};

// Calls observer->method(args...) when an observer is installed.
#define RS_OBSERVE(method, ...)                                              \
  do {                                                                       \
    if (::restoresim::RuntimeObserver* rs_observer_ =                        \
            ::restoresim::CurrentObserver()) {                               \
      rs_observer_->method(__VA_ARGS__);                                     \
    }                                                                        \
  } while (false)

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_RUNTIME_OBSERVER_H_
