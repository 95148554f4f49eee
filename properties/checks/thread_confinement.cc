// thread_confinement: each transport client is called only by the thread that owns it — the
// main consumer and the producer by their stream thread (so only it resumes input partitions
// and commits), the restore consumer and its admin client by their restore thread — except
// that once the owner finished, the thread that joined it may close what it left; a changelog
// reader is driven only by its restore thread; a task becomes RUNNING only on the stream
// thread that created it. (The transport reports every call: fakes/fake_broker.h.)
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class ThreadConfinementChecker final : public Checker {
 public:
  explicit ThreadConfinementChecker(OracleContext& c) : Checker(c, "thread_confinement") {}

  void OnTransportCall(events::Name client_id, events::Name call) override {
    const events::Name* owner = ledger().ClientOwnerOf(client_id);
    if (owner == nullptr) return;
    const events::Name current = context().CurrentThread();
    if (current == *owner || ledger().finished_threads.contains(owner->view())) return;
    // A checkpoint closes its instance's connections from the checkpointing thread, while
    // the owners hold at their safe points.
    if (const auto* instance = ledger().InstanceOfWire(client_id);
        instance != nullptr && instance->in_cycle) {
      return;
    }
    Violation(current, fmt::format("calls {} of client {} owned by thread '{}'", call, client_id,
                                   *owner));
  }

  void OnTaskTransition(const events::TaskInfo& task, TaskState, TaskState to) override {
    if (to != TaskState::kRunning) return;
    const TaskRecord* record = ledger().Find(task.who);
    if (record == nullptr) return;
    const std::string current = context().CurrentThreadName();
    if (record->stream_thread.empty() || !context().ThreadExists(record->stream_thread)) return;
    if (current != record->stream_thread) {
      Violation(task.who.ToString(),
                fmt::format("made RUNNING on thread '{}', not on its stream thread '{}'", current,
                            record->stream_thread));
    }
  }

  void OnRegistered(std::string_view reader, const TopicPartition&, const TaskIncarnation&,
                    TaskType) override {
    CheckReaderThread(reader, "registers");
  }
  void OnUnregistered(std::string_view reader, const TopicPartition&,
                      const TaskIncarnation&) override {
    CheckReaderThread(reader, "unregisters");
  }
  void OnRestoredBatch(std::string_view reader, const TopicPartition&, const TaskIncarnation&,
                       TaskType, int64_t, int64_t) override {
    CheckReaderThread(reader, "restores a batch");
  }
  void OnReaderMode(std::string_view reader, ReaderMode) override {
    CheckReaderThread(reader, "changes mode");
  }

 private:
  // A reader is named after its restore thread; a reader driven by a test has no such thread.
  void CheckReaderThread(std::string_view reader, std::string_view action) {
    const std::string_view current = context().CurrentThreadView();
    if (current == reader || !context().ThreadExists(reader)) return;
    Violation(current, fmt::format("the changelog reader of {} {} on thread '{}'", Str(reader),
                                   Str(action), current));
  }
};

RESTORESIM_CHECKER(70, ThreadConfinementChecker);

}  // namespace

}  // namespace restoresim::properties
