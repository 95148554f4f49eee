// stopped_processing: nothing processes once its client stops — no stream thread begins
// processing after its client entered PENDING_SHUTDOWN, PENDING_ERROR, ERROR or NOT_RUNNING
// (nor after its processing gate closed, nor while the thread itself is PENDING_SHUTDOWN or
// DEAD); no records are processed at all once the client is ERROR or NOT_RUNNING; and every
// client transition is one Kafka's KafkaStreams.State allows, checked as the oracle sees it (the
// runtime checks it as it makes it).
#include <fmt/format.h>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
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
    const events::Name client(instance);
    auto it = client_.find(client.id());
    // (A new instance of the same name, a restart, begins again from CREATED.)
    const RuntimeState was = it == client_.end() || from == RuntimeState::kCreated
                                 ? RuntimeState::kCreated
                                 : it->second;
    if (was != from || !IsValidRuntimeTransition(from, to)) {
      Violation(Str(instance), fmt::format("client moves {} -> {} (last seen {})",
                                           RuntimeStateName(from), RuntimeStateName(to),
                                           RuntimeStateName(was)));
    }
    client_[client.id()] = to;
    for (const std::string& name : threads) {
      const events::Name t(name);
      client_of_[t.id()] = client;
      if (from == RuntimeState::kCreated) {  // a restart's threads reuse the names
        gate_closed_.erase(t.id());
        thread_state_.erase(t.id());
      }
    }
  }

  void OnProcessingStopped(events::Name st) override { gate_closed_.insert(st.id()); }

  void OnStreamThreadState(std::string_view st, StreamThreadState, StreamThreadState to) override {
    thread_state_[events::Name(st).id()] = to;
  }

  void OnProcessBegin(events::Name thread) override {
    if (const RuntimeState* c = ClientOf(thread); c != nullptr && Stopping(*c)) {
      Violation(thread, fmt::format("begins processing while its client is {}",
                                    RuntimeStateName(*c)));
    }
    if (gate_closed_.contains(thread.id())) {
      Violation(thread, "begins processing after its processing gate closed");
    }
    if (auto s = thread_state_.find(thread.id());
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
  const RuntimeState* ClientOf(events::Name thread) const {
    auto t = client_of_.find(thread.id());
    if (t == client_of_.end()) return nullptr;  // not a Runtime's thread (a fleet's)
    auto c = client_.find(t->second.id());
    return c == client_.end() ? nullptr : &c->second;
  }

  // Keyed by the interned name's identity (events::Name::id), a hashed lookup at every
  // process begin; looked up only, never iterated.
  absl::flat_hash_map<const void*, RuntimeState> client_;   // by instance
  absl::flat_hash_map<const void*, events::Name> client_of_;  // stream thread -> instance
  absl::flat_hash_set<const void*> gate_closed_;
  absl::flat_hash_map<const void*, StreamThreadState> thread_state_;
};

RESTORESIM_CHECKER(170, StoppedProcessingChecker);

}  // namespace

}  // namespace restoresim::properties
