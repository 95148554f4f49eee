// listener_pairing (strict): each restore start is followed by exactly one restore end — when
// the changelog completed — or one restore suspended — when it was unregistered before it
// completed — never the other (KAFKA-10575), with batches only in between; nothing is left
// started at the end. The restore listener hears of active changelogs only.
//
// Standbys (KIP-988): each standby update start is followed by at most one update suspended,
// with batches loaded only in between; a started standby changelog is unregistered only after
// its suspended, or without one once its restore thread is shutting down (Kafka's state updater
// clears its reader silently as it stops); the update listener hears of standby changelogs
// only; nothing is left started at the end.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class ListenerPairingChecker final : public Checker {
 public:
  explicit ListenerPairingChecker(OracleContext& c) : Checker(c, "listener_pairing") {}

  void OnListener(std::string_view reader, const TopicPartition& tp, ListenerCall call) override {
    const ReaderKeyView key{reader, tp};
    auto reg = ledger().registered.find(key);
    const bool standby_call = call == ListenerCall::kStandbyStart ||
                              call == ListenerCall::kStandbyBatch ||
                              call == ListenerCall::kStandbySuspended;
    if (reg != ledger().registered.end() &&
        (reg->second.type == TaskType::kStandby) != standby_call) {
      Violation(reg->second.owner.ToString(),
                fmt::format("the {} listener was told about {} changelog {}",
                            standby_call ? "standby update" : "restore",
                            TaskTypeName(reg->second.type), tp.ToString()));
    }
    if (standby_call) return OnStandbyListener(key, call);
    const bool open = ledger().listening.contains(key);
    const bool completed = reg != ledger().registered.end() && reg->second.completed;
    switch (call) {
      case ListenerCall::kStart:
        if (open) Violation("-", fmt::format("restore of {} started twice without an end",
                                             tp.ToString()));
        return;
      case ListenerCall::kBatch:
        if (!open) Violation("-", fmt::format("batch restored for {} outside a start/end pair",
                                              tp.ToString()));
        return;
      case ListenerCall::kEnd:
      case ListenerCall::kSuspended: {
        const bool end = call == ListenerCall::kEnd;
        if (!open) {
          Violation("-", fmt::format("restore of {} {} without a start", tp.ToString(),
                                     end ? "ended" : "suspended"));
        }
        if (end && !completed) {
          Violation(reg == ledger().registered.end() ? "-" : reg->second.owner.ToString(),
                    fmt::format("restore of {} ended, but it did not complete (it was "
                                "unregistered first: suspended)",
                                tp.ToString()));
        }
        if (!end && completed) {
          Violation(reg->second.owner.ToString(),
                    fmt::format("restore of {} suspended after it completed", tp.ToString()));
        }
        return;
      }
      case ListenerCall::kStandbyStart:
      case ListenerCall::kStandbyBatch:
      case ListenerCall::kStandbySuspended:
        return;  // handled above
    }
  }

  void OnRestoreShutdownRequested(events::Name restore_thread) override {
    stopping_.insert(Str(restore_thread));
  }

  void OnUnregistered(std::string_view reader, const TopicPartition& tp,
                      const TaskIncarnation& owner) override {
    auto it = updating_.find(ReaderKeyView{reader, tp});
    if (it == updating_.end()) return;
    if (!stopping_.contains(reader)) {
      Violation(owner.ToString(), fmt::format("standby update of {} stopped without update "
                                              "suspended (its restore thread is not stopping)",
                                              tp.ToString()));
    }
    updating_.erase(it);
  }

  void Final() override {
    for (const Ledger::ReaderKey& key : ledger().listening) {
      Violation("-", fmt::format("restore of {} in {} started and never ended or suspended",
                                 key.second.ToString(), key.first));
    }
    for (const Ledger::ReaderKey& key : updating_) {
      Violation("-", fmt::format("standby update of {} in {} started and never suspended",
                                 key.second.ToString(), key.first));
    }
  }

 private:
  void OnStandbyListener(const ReaderKeyView& key, ListenerCall call) {
    auto it = updating_.find(key);
    const bool open = it != updating_.end();
    if (call == ListenerCall::kStandbyStart) {
      if (open) {
        Violation("-", fmt::format("standby update of {} started twice", key.changelog.ToString()));
      }
      updating_.emplace(Str(key.reader), key.changelog);
      return;
    }
    if (!open) {
      Violation("-", fmt::format("standby update of {}: {} without a start",
                                 key.changelog.ToString(),
                                 call == ListenerCall::kStandbyBatch ? "batch loaded"
                                                                     : "suspended"));
    }
    if (call == ListenerCall::kStandbySuspended) updating_.erase(it);
  }

  // Standby updates started and not suspended (looked up by a hook's view).
  std::set<Ledger::ReaderKey, ReaderKeyLess> updating_;
  std::set<std::string, std::less<>> stopping_;  // restore threads asked to shut down
};

RESTORESIM_CHECKER(110, ListenerPairingChecker);

}  // namespace

}  // namespace restoresim::properties
