// checkpoint_restore: a runtime instance frozen by a checkpoint (core/runtime/runtime.h,
// Checkpoint/Restore) is really frozen, and comes back as itself and nobody else:
//  * at the freeze no connection of the instance is open, and until the restore begins no
//    call of any of its clients reaches the broker;
//  * no thread of a frozen instance makes progress (a stream loop, a restore loop, a task
//    processing records);
//  * no wire client id is used by two instances (two clones restored from one image never
//    impersonate each other: each restore takes a fresh identity);
//  * an active changelog that was restoring when the restore began completes at or past the
//    end offset the broker had then (the end offsets are re-read after the freeze, never taken
//    from before it).
// A truncation during the freeze is judged by the other invariants: positions below the new
// log start must take the corruption path (checkpoint and store_contents see a silent gap).
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class CheckpointRestoreChecker final : public Checker {
 public:
  explicit CheckpointRestoreChecker(OracleContext& c) : Checker(c, "checkpoint_restore") {}

  void OnCheckpointNotice(std::string_view instance, CheckpointNotice notice) override {
    if (notice != CheckpointNotice::kFrozen) return;
    auto it = ledger().instances.find(instance);
    if (it == ledger().instances.end() || it->second.open_wires.empty()) return;
    Violation(Name(instance), fmt::format("frozen with {} connection(s) open, first {}",
                                          it->second.open_wires.size(),
                                          *it->second.open_wires.begin()));
  }

  void OnTransportCall(events::Name client_id, events::Name call) override {
    const auto* instance = ledger().InstanceOfWire(client_id);
    if (instance == nullptr || !instance->frozen) return;
    Violation(Str(client_id), fmt::format("calls {} while its instance is frozen", call));
  }

  void OnClientConnection(std::string_view instance, std::string_view,
                          std::string_view wire_id, bool open) override {
    if (!open) return;
    auto it = ledger().wire_instance.find(wire_id);
    if (it == ledger().wire_instance.end() || it->second == instance) return;
    Violation(Str(wire_id), fmt::format("connected by instance {} while it is instance {}'s "
                                        "identity: two clones share a client id",
                                        Name(instance), Name(it->second)));
  }

  void OnStreamLoop(events::Name stream_thread, events::Name) override {
    NoProgress(stream_thread, [] { return std::string("runs a stream loop"); });
  }
  void OnRestoreLoop(events::Name restore_thread) override {
    NoProgress(restore_thread, [] { return std::string("runs a restore loop"); });
  }
  void OnProcess(const events::TaskInfo& task, size_t records) override {
    // The message is built only for a violation: this runs on every Process call.
    NoProgress(context().CurrentThread(), [&] {
      return fmt::format("processes {} records of {}", records, task.who.ToString());
    });
  }

  void OnCompleted(std::string_view reader, const TopicPartition& changelog,
                   const TaskIncarnation& owner, int64_t, int64_t end_offset) override {
    const auto* instance = ledger().InstanceOfThread(reader);
    if (instance == nullptr) return;
    auto it = instance->end_at_restore.find({Str(reader), changelog});
    if (it == instance->end_at_restore.end()) return;
    const auto& [restoring_owner, end_then] = it->second;
    // Only the registration that was restoring at the restore: a new one reads fresh ends.
    if (!(restoring_owner == owner) || end_offset >= end_then) return;
    Violation(owner.ToString(),
              fmt::format("completed {} at end offset {}, below the {} the broker had when the "
                          "instance was restored: an end offset from before the freeze",
                          changelog.ToString(), end_offset, end_then));
  }

 private:
  static std::string Name(std::string_view instance) {
    return instance.empty() ? std::string("(runtime)") : Str(instance);
  }
  template <typename What>
  void NoProgress(events::Name thread, const What& what) {
    const auto* instance = ledger().InstanceOfThread(thread);
    if (instance == nullptr || !instance->frozen) return;
    Violation(Str(thread), fmt::format("{} while its instance is frozen", what()));
  }
};

RESTORESIM_CHECKER(160, CheckpointRestoreChecker);

}  // namespace

}  // namespace restoresim::properties
