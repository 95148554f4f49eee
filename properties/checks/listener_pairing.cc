// listener_pairing (strict): each restore start is followed by exactly one restore end — when
// the changelog completed — or one restore suspended — when it was unregistered before it
// completed — never the other (KAFKA-10575), with batches only in between; nothing is left
// started at the end.
#include <fmt/format.h>

#include "properties/checks/checkers.h"

namespace restoresim::properties {
namespace {

std::string Str(std::string_view s) { return std::string(s); }

class ListenerPairingChecker final : public Checker {
 public:
  explicit ListenerPairingChecker(OracleContext& c) : Checker(c, "listener_pairing") {}

  void OnListener(std::string_view reader, const TopicPartition& tp, ListenerCall call) override {
    const Ledger::ReaderKey key{Str(reader), tp};
    const bool open = ledger().listening.contains(key);
    auto reg = ledger().registered.find(key);
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
    }
  }

  void Final() override {
    for (const Ledger::ReaderKey& key : ledger().listening) {
      Violation("-", fmt::format("restore of {} in {} started and never ended or suspended",
                                 key.second.ToString(), key.first));
    }
  }
};

}  // namespace

std::unique_ptr<Checker> NewListenerPairingChecker(OracleContext& c) {
  return std::make_unique<ListenerPairingChecker>(c);
}

}  // namespace restoresim::properties
