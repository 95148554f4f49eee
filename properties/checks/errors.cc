// errors: every event the restore thread emits reaches the stream thread; an event carries
// the task it names; a corruption report is handled only if it was made, and applied only to
// the incarnation it names.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class ErrorsChecker final : public Checker {
 public:
  explicit ErrorsChecker(OracleContext& c) : Checker(c, "errors") {}

  void OnRestoreEvent(events::Name rt, const events::RestoreEventInfo& event,
                      bool drained) override {
    auto it = ledger().events_in_flight.find(rt.view());
    const int64_t in_flight = it == ledger().events_in_flight.end() ? 0 : it->second;
    if (drained && in_flight <= 0) {
      Violation(event.incarnation.ToString(),
                fmt::format("restore thread '{}': an event drained that was never emitted",
                            Str(rt)));
    }
    if (event.task.has_value() && event.task->who != event.incarnation) {
      Violation(event.incarnation.ToString(),
                fmt::format("event carries task {}", event.task->who.ToString()));
    }
  }

  void OnCorruptionHandled(const TaskIncarnation& reported,
                           const std::optional<TaskIncarnation>& acted_on) override {
    if (!ledger().corruption_reported.contains(reported)) {
      Violation(reported.ToString(), "corruption handled that was never reported");
    }
    if (acted_on.has_value() && *acted_on != reported) {
      Violation(reported.ToString(), fmt::format("corruption report applied to another "
                                                 "incarnation, {}",
                                                 acted_on->ToString()));
    }
  }

  void Final() override {
    for (const auto& [rt, in_flight] : ledger().events_in_flight) {
      if (in_flight != 0) {
        Violation("-", fmt::format("{} events emitted by restore thread '{}' never reached the "
                                   "stream thread",
                                   in_flight, rt));
      }
    }
  }
};

RESTORESIM_CHECKER(140, ErrorsChecker);

}  // namespace

}  // namespace restoresim::properties
