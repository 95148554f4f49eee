#include "properties/oracle.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>

namespace restoresim::properties {
namespace {

std::atomic<bool> oracle_enabled{true};
std::atomic<events::EventSink*> default_tap{nullptr};

// A checker with every hook at its default: what Oracle::Judge compares hooks against.
class NoHooks final : public Checker {
 public:
  explicit NoHooks(OracleContext& context) : Checker(context, "none") {}
};

}  // namespace

void Oracle::SetEnabled(bool enabled) { oracle_enabled.store(enabled); }
bool Oracle::Enabled() { return oracle_enabled.load(); }
void Oracle::SetDefaultTap(events::EventSink* tap) { default_tap.store(tap); }

void OracleContext::Violation(std::string_view invariant, std::string_view who,
                              std::string detail) {
  host_.Fail(InvariantFailure(invariant, who, std::move(detail)));
  std::abort();  // (OracleHost::Fail never returns; the compiler cannot see through virtual)
}

[[noreturn]] void StandaloneHost::Fail(Failure failure) {
  if (!failure_.has_value()) failure_ = std::move(failure);
  throw OracleStopped{};
}

void StandaloneHost::NoteThread(std::string_view thread) {
  if (!threads_.contains(thread)) threads_.emplace(thread);
}

Oracle::Oracle(OracleHost& host)
    : host_(host),
      context_(host, ledger_),
      checkers_(AllCheckers(context_)),
      no_hooks_(std::make_unique<NoHooks>(context_)),
      tap_(default_tap.load()) {
  // Outside the simulator the stream's order between threads is the recorder's lock order,
  // not the run's global step order: the simulator-only invariants (docs/DESIGN.md, the
  // real-thread table) would report races that did not happen.
  if (dynamic_cast<StandaloneHost*>(&host) == nullptr) return;
  std::erase_if(checkers_, [](const std::unique_ptr<Checker>& c) {
    return c->invariant() == "liveness_bounds" || c->invariant() == "stopped_processing" ||
           c->invariant() == "paused_tasks" || c->invariant() == "client_close";
  });
}

Oracle::~Oracle() = default;

void Oracle::CheckFinal() {
  if (Off()) return;
  if (tap_ != nullptr) tap_->OnEvent(events::Event{last_header_, events::RunFinished{}});
  RunFinal();
}

void Oracle::RunFinal() {
  for (auto& c : checkers_) c->Final();
}

void Oracle::OnEvent(const events::Event& event) {
  // Appends and crashes are the world's facts: recorded even while a failed run unwinds.
  if (const auto* append = std::get_if<events::Appended>(&event.body)) {
    if (tap_ != nullptr) tap_->OnEvent(event);
    ledger_.OnAppend(*append);
    return;
  }
  if (const auto* abort = std::get_if<events::Aborted>(&event.body)) {
    if (tap_ != nullptr) tap_->OnEvent(event);
    ledger_.OnAbort(*abort);
    return;
  }
  if (std::holds_alternative<events::FsCrashed>(event.body)) {
    if (tap_ != nullptr) tap_->OnEvent(event);
    ledger_.OnCrash();
    return;
  }
  if (Off()) return;
  if (tap_ != nullptr) {
    tap_->OnEvent(event);
    last_header_ = event.header;
  }
  if (std::holds_alternative<events::RunFinished>(event.body)) {
    RunFinal();
    return;
  }
  host_.NoteThread(event.header.thread);
  context_.SetCurrent(&event.header);
  ledger_.SetCurrent(&event.header);
  ++context_.counts().events;
  JudgeBody(event.body);
  context_.SetCurrent(nullptr);
  ledger_.SetCurrent(nullptr);
}

}  // namespace restoresim::properties
