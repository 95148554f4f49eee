// client_close: a client's close follows Kafka's KafkaStreams.close(timeout) — it returns within
// its timeout of the moment it began (after any checkpoint/restore cycle or thread replacement
// it waits for, by design), and one that returns while a stream thread of the client is still
// alive (started, not DEAD) neither returns OK nor leaves the client NOT_RUNNING (it stays
// PENDING_SHUTDOWN or PENDING_ERROR), so a close after one that timed out does not return
// before the threads stopped.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class ClientCloseChecker final : public Checker {
 public:
  explicit ClientCloseChecker(OracleContext& c) : Checker(c, "client_close") {}

  void OnRuntimeState(std::string_view instance, RuntimeState from, RuntimeState,
                      const std::vector<std::string>& threads) override {
    for (const std::string& t : threads) {
      if (from == RuntimeState::kCreated) thread_state_.erase(t);  // a restart reuses names
    }
    threads_[Str(instance)] = threads;
  }

  void OnStreamThreadState(std::string_view st, StreamThreadState, StreamThreadState to) override {
    thread_state_[Str(st)] = to;
  }

  void OnClientClose(std::string_view instance, bool returned, TimeNs timeout_ns, int64_t code,
                     RuntimeState state) override {
    const std::string who = Str(instance);
    const std::pair<std::string, std::string> call{who, context().CurrentThreadName()};
    if (!returned) {
      deadline_[call] = DeadlineAfter(context().now_ns(), timeout_ns);
      return;
    }
    if (auto it = deadline_.find(call); it != deadline_.end()) {
      const TimeNs late = context().now_ns() - it->second;
      deadline_.erase(it);
      if (late > 0) {
        Violation(who, fmt::format("close({} ms) returns {} ms of virtual time after its "
                                   "deadline",
                                   timeout_ns / kMillisecond, late / kMillisecond));
      }
    }
    if (code != 0 && state != RuntimeState::kNotRunning) return;  // timed out, stays pending
    auto it = threads_.find(who);
    if (it == threads_.end()) return;  // never started
    for (const std::string& t : it->second) {
      auto s = thread_state_.find(t);
      if (s == thread_state_.end() || s->second == StreamThreadState::kDead ||
          s->second == StreamThreadState::kCreated) {
        continue;  // stopped, or never started
      }
      Violation(who, fmt::format("close returns {} with the client {} while its stream thread {} "
                                 "is {} (a close that did not stop every thread leaves it "
                                 "PENDING_SHUTDOWN and does not return OK)",
                                 code == 0 ? std::string("OK") : fmt::format("code {}", code),
                                 RuntimeStateName(state), t, StreamThreadStateName(s->second)));
    }
  }

 private:

  std::map<std::string, std::vector<std::string>> threads_;  // per client: its stream threads
  std::map<std::string, StreamThreadState> thread_state_;
  // Per client and calling thread: the deadline of the close under way.
  std::map<std::pair<std::string, std::string>, TimeNs> deadline_;
};

RESTORESIM_CHECKER(210, ClientCloseChecker);

}  // namespace

}  // namespace restoresim::properties
