// liveness_bounds: requests are answered within a bound, so a lost wake-up hidden by a timed
// wait is a failure, not latency.
//   * A round queued before an iteration of the restore thread's loop begins is drained in
//     that iteration.
//   * An idle restore thread wakes at once for a round queued before or during its wait: the
//     wait ends at the same virtual time as the push (time cannot pass while a woken thread
//     can run).
//   * An idle restore thread holding paused tasks wakes at once when its topology is resumed:
//     a wait under way when the resume is signalled ends at the virtual time of the resume
//     (Kafka wakes its state updater on resume: KAFKA-14299).
//   * Once its shutdown is requested, the restore thread begins at most one more iteration.
//   * Every event the restore thread emits is handled by its stream thread before that
//     thread's second loop after the emission begins.
#include <fmt/format.h>

#include "absl/container/flat_hash_map.h"
#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class LivenessBoundsChecker final : public Checker {
 public:
  explicit LivenessBoundsChecker(OracleContext& c) : Checker(c, "liveness_bounds") {}

  void OnRoundQueued(events::Name rt, size_t) override {
    Thread& t = ThreadOf(rt);
    if (t.queued == t.drained) t.oldest_pending_ns = context().now_ns();
    ++t.queued;
  }

  void OnRestoreLoop(events::Name rt) override {
    Thread& t = ThreadOf(rt);
    if (t.stopped) {  // a new restore thread of the same name (a restarted instance)
      std::vector<int64_t> pending = std::move(t.pending_events);
      t = Thread{};
      t.pending_events = std::move(pending);
    }
    if (t.shutdown_loops >= 0 && ++t.shutdown_loops > 1) {
      Violation(Str(rt), "began another iteration of its loop after its shutdown was requested "
                         "and one iteration ran");
    }
    t.due = t.queued;
  }

  void OnRoundsDrained(events::Name rt, size_t rounds) override {
    Thread& t = ThreadOf(rt);
    t.drained += static_cast<int64_t>(rounds);
    if (t.drained < t.due) {
      Violation(Str(rt), fmt::format("drained {} rounds in an iteration begun with {} queued and "
                                     "not drained",
                                     rounds, t.due - (t.drained - static_cast<int64_t>(rounds))));
    }
  }

  void OnRestoreIdle(events::Name rt, bool begin, bool woken) override {
    Thread& t = ThreadOf(rt);
    if (begin) {
      t.idle_since_ns = context().now_ns();
      t.idle = true;
      return;
    }
    if (t.resumed_ns >= 0 && context().now_ns() > t.resumed_ns) {
      Violation(Str(rt), fmt::format("idle for {} ms of virtual time after its topology was "
                                     "resumed, holding {} paused tasks (a resume that does not "
                                     "wake it)",
                                     (context().now_ns() - t.resumed_ns) / kMillisecond,
                                     t.paused_at_resume));
    }
    t.idle = false;
    t.resumed_ns = -1;
    // Rounds queued before or during the wait that it did not wake for at once.
    if (t.queued > t.drained) {
      const TimeNs pushed = std::max(t.oldest_pending_ns, t.idle_since_ns);
      const TimeNs now = context().now_ns();
      if (now > pushed) {
        Violation(Str(rt), fmt::format("idle for {} ms of virtual time with a round queued (a "
                                       "lost wake-up)",
                                       (now - pushed) / kMillisecond));
      }
    }
  }

  // A resume naming an idle restore thread that holds paused tasks: its wait must end now.
  void OnTopologyPause(std::string_view, bool paused,
                       const std::vector<std::string>& threads) override {
    if (paused) return;
    for (const std::string& name : threads) {
      auto it = threads_.find(events::Name(name).id());
      if (it == threads_.end()) continue;
      Thread& t = it->second;
      const size_t held = PausedIn(name);
      if (t.idle && !t.stopped && held > 0 && t.resumed_ns < 0) {
        t.resumed_ns = context().now_ns();
        t.paused_at_resume = held;
      }
    }
  }

  // The tasks each thread holds paused (a restore thread's pause ends when the task leaves it).
  void OnTaskPaused(std::string_view thread, const TaskIncarnation& who, bool paused) override {
    if (paused) {
      paused_[who] = Str(thread);
    } else {
      paused_.erase(who);
    }
  }
  void OnHandOff(std::string_view rt, const TaskIncarnation& who, TaskHolder from,
                 TaskHolder) override {
    auto it = paused_.find(who);
    if (from == TaskHolder::kRestoreThread && it != paused_.end() && it->second == rt) {
      paused_.erase(it);
    }
  }
  void OnTaskDestroyed(const TaskIncarnation& who, TaskState) override { paused_.erase(who); }

  void OnRestoreShutdownRequested(events::Name rt) override {
    Thread& t = ThreadOf(rt);
    if (!t.stopped) t.shutdown_loops = 0;  // (a second request after it stopped asks nothing)
  }

  // A restore thread of the same name may start again (a restarted instance): it starts with
  // an empty queue, at its first iteration. Its predecessor's undrained events stay owed.
  void OnRestoreStopped(events::Name rt) override { ThreadOf(rt).stopped = true; }

  void OnRestoreEvent(events::Name rt, const events::RestoreEventInfo& event,
                      bool drained) override {
    Thread& t = ThreadOf(rt);
    if (drained) {
      if (!t.pending_events.empty()) t.pending_events.erase(t.pending_events.begin());
      return;
    }
    const events::Name* stream = ledger().StreamOf(rt);
    t.pending_events.push_back(LoopsOf(stream == nullptr ? events::Name() : *stream));
  }

  void OnStreamLoop(events::Name st, events::Name rt) override {
    const int64_t loop = ++LoopsOf(st);
    const Thread& t = ThreadOf(rt);
    if (t.pending_events.empty()) return;
    // The oldest event was emitted during loop e: it must have been drained in loop e + 1.
    if (loop >= t.pending_events.front() + 2) {
      Violation(Str(st), fmt::format("{} events of {} not handled: the oldest was emitted during "
                                     "loop {}, loop {} begins",
                                     t.pending_events.size(), Str(rt), t.pending_events.front(),
                                     loop));
    }
  }

 private:
  struct Thread {
    int64_t queued = 0;
    int64_t drained = 0;
    int64_t due = 0;
    TimeNs oldest_pending_ns = 0;
    TimeNs idle_since_ns = 0;
    int64_t shutdown_loops = -1;        // iterations begun since shutdown was requested
    bool stopped = false;               // its loop ended
    bool idle = false;                  // inside an idle wait
    TimeNs resumed_ns = -1;             // a resume owed a wake-up during this wait, or -1
    size_t paused_at_resume = 0;
    std::vector<int64_t> pending_events;  // the stream loop each undrained event was emitted in
  };

  // A thread's entry, made at its first event.
  Thread& ThreadOf(events::Name rt) { return threads_[rt.id()]; }
  int64_t& LoopsOf(events::Name st) { return loops_[st.id()]; }

  size_t PausedIn(const std::string& thread) const {
    size_t n = 0;
    for (const auto& [who, holder] : paused_) n += holder == thread ? 1 : 0;
    return n;
  }

  // Per thread by its name's identity (events::Name::id): looked up at every loop, never
  // iterated.
  absl::flat_hash_map<const void*, Thread> threads_;
  std::map<TaskIncarnation, std::string> paused_;  // task paused -> the thread holding it
  absl::flat_hash_map<const void*, int64_t> loops_;  // per stream thread
};

RESTORESIM_CHECKER(90, LivenessBoundsChecker);

}  // namespace

}  // namespace restoresim::properties
