// stopped_processing: nothing processes once its client stops — no stream thread begins
// processing after its client entered PENDING_SHUTDOWN, PENDING_ERROR, ERROR or NOT_RUNNING
// (nor after its processing gate closed, nor while the thread itself is PENDING_SHUTDOWN or
// DEAD); no records are processed at all once the client is ERROR or NOT_RUNNING; and every
// client transition is one Kafka's KafkaStreams.State allows, checked as the oracle sees it (the
// runtime checks it as it makes it).
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

bool Stopping(RuntimeState s) {
  return s == RuntimeState::kPendingShutdown || s == RuntimeState::kPendingError ||
         s == RuntimeState::kError || s == RuntimeState::kNotRunning;
}

class StoppedProcessingChecker final : public Checker {
 public:
  explicit StoppedProcessingChecker(OracleContext& c) : Checker(c, "stopped_processing") {}

  void OnRuntimeState(std::string_view instance, RuntimeState from, RuntimeState to,
                      const std::vector<std::string>& threads) override {
    auto it = client_.find(Str(instance));
    // (A new instance of the same name, a restart, begins again from CREATED.)
    const RuntimeState was = it == client_.end() || from == RuntimeState::kCreated
                                 ? RuntimeState::kCreated
                                 : it->second;
    if (was != from || !IsValidRuntimeTransition(from, to)) {
      Violation(Str(instance), fmt::format("client moves {} -> {} (last seen {})",
                                           RuntimeStateName(from), RuntimeStateName(to),
                                           RuntimeStateName(was)));
    }
    client_[Str(instance)] = to;
    for (const std::string& t : threads) {
      client_of_[t] = Str(instance);
      if (from == RuntimeState::kCreated) {  // a restart's threads reuse the names
        gate_closed_.erase(t);
        thread_state_.erase(t);
      }
    }
  }

  void OnProcessingStopped(std::string_view st) override { gate_closed_.insert(Str(st)); }

  void OnStreamThreadState(std::string_view st, StreamThreadState, StreamThreadState to) override {
    thread_state_[Str(st)] = to;
  }

  void OnProcessBegin(std::string_view thread) override {
    if (const RuntimeState* c = ClientOf(thread); c != nullptr && Stopping(*c)) {
      Violation(thread, fmt::format("begins processing while its client is {}",
                                    RuntimeStateName(*c)));
    }
    if (gate_closed_.contains(thread)) {
      Violation(thread, "begins processing after its processing gate closed");
    }
    if (auto s = thread_state_.find(thread);
        s != thread_state_.end() && (s->second == StreamThreadState::kPendingShutdown ||
                                     s->second == StreamThreadState::kDead)) {
      Violation(thread, fmt::format("begins processing in {}", StreamThreadStateName(s->second)));
    }
  }

  void OnProcess(const events::TaskInfo& task, size_t records) override {
    if (records == 0) return;
    const TaskRecord* record = ledger().Find(task.who);
    if (record == nullptr) return;  // single_owner's to report
    const RuntimeState* c = ClientOf(record->stream_thread);
    if (c != nullptr && (*c == RuntimeState::kError || *c == RuntimeState::kNotRunning)) {
      Violation(task.who.ToString(),
                fmt::format("processes {} records on {} while its client is {}", records,
                            record->stream_thread, RuntimeStateName(*c)));
    }
  }

 private:
  const RuntimeState* ClientOf(std::string_view thread) const {
    auto t = client_of_.find(thread);
    if (t == client_of_.end()) return nullptr;  // not a Runtime's thread (a fleet's)
    auto c = client_.find(t->second);
    return c == client_.end() ? nullptr : &c->second;
  }

  // (Keyed by name with transparent lookups: a hook's string_view finds without allocating.)
  std::map<std::string, RuntimeState, std::less<>> client_;    // by instance
  std::map<std::string, std::string, std::less<>> client_of_;  // stream thread -> instance
  std::set<std::string, std::less<>> gate_closed_;
  std::map<std::string, StreamThreadState, std::less<>> thread_state_;
};

RESTORESIM_CHECKER(170, StoppedProcessingChecker);

}  // namespace

}  // namespace restoresim::properties
