// client_close: a client's close follows Kafka's KafkaStreams.close(timeout) — a close called
// while no checkpoint/restore cycle and no thread replacement of its client is under way passes
// its waits for them at once (the same virtual time), and one called during them passes them once
// they are over; it returns within its timeout of passing them; and one that returns while a
// stream thread of the client is still alive (started, not DEAD) neither returns OK nor leaves
// the client NOT_RUNNING (it stays PENDING_SHUTDOWN or PENDING_ERROR), so a close after one that
// timed out does not return before the threads stopped. A bound is judged at the first event past
// it, and a close not returned when the run finishes fails at its end.
#include <fmt/format.h>

#include <optional>

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

  void OnCheckpointNotice(std::string_view instance, CheckpointNotice notice) override {
    if (notice == CheckpointNotice::kCheckpointBegin) cycle_[Str(instance)] = true;
    if (notice == CheckpointNotice::kAbandoned || notice == CheckpointNotice::kRestored) {
      cycle_[Str(instance)] = false;
    }
    RefreshWaits();
  }

  void OnThreadReplacement(std::string_view instance, std::string_view, bool done) override {
    int32_t& n = replacing_[Str(instance)];
    n += done ? -1 : 1;
    if (n < 0) Violation(Str(instance), "a thread replacement ends that never began");
    RefreshWaits();
  }

  void OnClientCloseCalled(std::string_view instance, TimeNs timeout_ns) override {
    Call& call = calls_[{Str(instance), context().CurrentThreadName()}];
    call = Call{.called_ns = context().now_ns(), .timeout_ns = timeout_ns};
    if (!Busy(instance)) call.free_since_ns = call.called_ns;
  }

  // Every bound in virtual time, at the first event past it. (Runs before every event: with
  // no close under way, as almost always, it asks nothing, not even the time.)
  void BeforeEvent() override {
    if (calls_.empty()) return;
    const TimeNs now = context().now_ns();
    for (const auto& [key, call] : calls_) {
      if (call.waiting && call.free_since_ns && now > *call.free_since_ns) {
        Violation(key.first, fmt::format(
            "close({} ms), called at {} ms on {}, has not passed its waits at {} ms, although "
            "no checkpoint/restore cycle and no thread replacement of the client was under way "
            "since {} ms",
            call.timeout_ns / kMillisecond, call.called_ns / kMillisecond, key.second,
            now / kMillisecond, *call.free_since_ns / kMillisecond));
      }
      if (!call.waiting && now > call.deadline_ns) {
        Violation(key.first, fmt::format("close({} ms) not returned by its deadline: {} ms of "
                                         "virtual time past it",
                                         call.timeout_ns / kMillisecond,
                                         (now - call.deadline_ns) / kMillisecond));
      }
    }
  }

  void Final() override {
    for (const auto& [key, call] : calls_) {
      Violation(key.first, fmt::format("close({} ms), called at {} ms on {}, has not returned "
                                       "when the run finishes ({})",
                                       call.timeout_ns / kMillisecond,
                                       call.called_ns / kMillisecond, key.second,
                                       call.waiting ? "still in its waits" : "past its waits"));
    }
  }

  void OnClientClose(std::string_view instance, bool returned, TimeNs timeout_ns, int64_t code,
                     RuntimeState state) override {
    const std::string who = Str(instance);
    const std::pair<std::string, std::string> key{who, context().CurrentThreadName()};
    if (!returned) {  // past its waits (a call not observed: an event file of format 2)
      auto [it, fresh] = calls_.try_emplace(key);
      if (fresh) it->second = Call{.called_ns = context().now_ns(), .timeout_ns = timeout_ns};
      it->second.waiting = false;
      it->second.deadline_ns = DeadlineAfter(context().now_ns(), timeout_ns);
      return;
    }
    calls_.erase(key);  // (a return past the deadline failed at BeforeEvent)
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
  struct Call {
    TimeNs called_ns = 0;
    TimeNs timeout_ns = 0;
    bool waiting = true;  // not yet past its waits for a cycle or a replacement
    // While waiting: since when no cycle and no replacement of its client was under way.
    std::optional<TimeNs> free_since_ns;
    TimeNs deadline_ns = 0;  // once past its waits
  };

  // A checkpoint notice names the instance's checkpoint name, which may be empty while the close
  // names the application: a cycle of "" counts for every client (it can only excuse a wait).
  bool Busy(std::string_view instance) const {
    auto cycle = [&](std::string_view i) {
      auto it = cycle_.find(i);
      return it != cycle_.end() && it->second;
    };
    auto r = replacing_.find(instance);
    return cycle(instance) || cycle("") || (r != replacing_.end() && r->second > 0);
  }

  void RefreshWaits() {
    for (auto& [key, call] : calls_) {
      if (!call.waiting) continue;
      if (Busy(key.first)) {
        call.free_since_ns.reset();
      } else if (!call.free_since_ns) {
        call.free_since_ns = context().now_ns();
      }
    }
  }

  std::map<std::string, bool, std::less<>> cycle_;  // per instance: a cycle under way
  std::map<std::string, int32_t, std::less<>> replacing_;  // per client: replacements starting

  std::map<std::string, std::vector<std::string>> threads_;  // per client: its stream threads
  std::map<std::string, StreamThreadState> thread_state_;
  // Per client and calling thread: the close under way.
  std::map<std::pair<std::string, std::string>, Call> calls_;
};

RESTORESIM_CHECKER(210, ClientCloseChecker);

}  // namespace

}  // namespace restoresim::properties
