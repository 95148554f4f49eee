// A rapidcheck state-machine test of the RestoreThread's queue protocol against a sequential
// model of what goes in and what must come out.
//
// The test's main simulated thread plays the stream thread; the restore thread runs as a
// simulated thread of its own over the fake broker (one simulated run per case, fixed simulator
// seed: the case is a pure function of its commands, so it shrinks). Commands:
//   * send one round of items for up to three tasks, each action resolved against what the
//     test holds at that moment, as the task manager would: CREATE of a new incarnation (fresh
//     stores or a checkpoint), CLOSE of one the restore thread owns or of one already returned
//     (with the changelogs captured before its stores were cleared), close-then-create of the
//     same task in one round, recycle active<->standby (PrepareNewTaskType: the restore thread
//     completes the conversion), resume a removed task, a stale CLOSE of a closed incarnation;
//     items of a round are sent CREATEs first half of the time (the thread must still apply
//     the round's CLOSEs first);
//   * append to a changelog, truncate one (DeleteRecords: corruption when a position falls
//     below the log start);
//   * let virtual time pass, drain the events, run until quiet (every active and every closed
//     task came back).
// The model: rounds apply in order and CLOSE before CREATE within a round, so
//   * every task handed in comes back exactly once (restored, removed or corrupted), with its
//     task, or is still owned; removed only after a CLOSE (or at shutdown); no errors (no
//     faults);
//   * restored only for an active, positioned at least at the log end it was sent with (the
//     end offset it learned later can only be larger) and at most at the log end now; its
//     store equals the fold of its changelog (when the log was never truncated);
//   * corrupted only with a cause (its changelog was truncated) and naming its changelogs;
//   * the listener pairs every start with exactly one end or suspended, batches in between
//     (two incarnations of one task registered at once would break this; the reader's own
//     check and the invariant oracle of RuntimeWorld catch it first);
//   * until quiet, every active and every closed task comes back within 60 s of virtual time;
//   * shutdown returns every task the thread still owns, after which no listener start is open
//     and the oracle's end-of-run checks pass.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <array>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/runtime/count_topology.h"
#include "core/runtime/restore_thread.h"
#include "properties/rc_check.h"
#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using testing::Changelog;

constexpr int32_t kPartitions = 3;
constexpr uint64_t kSimSeed = 1;
constexpr int kCases = 500;
constexpr TimeNs kQuietNsMax = 60 * kSecond;
constexpr TimeNs kDrainIntervalNs = 20 * kMillisecond;

// What the cases exercised, printed after the property (so a reader sees it is not vacuous).
// Counts every run, shrink attempts included.
struct Coverage {
  int64_t runs = 0, commands = 0, rounds = 0, items = 0, restored = 0, removed = 0, corrupted = 0,
          sim_steps = 0;
  TimeNs virtual_ns = 0;
};
Coverage coverage;

void Expect(bool ok, const std::string& message) {
  if (!ok) RC_FAIL(message);
}

// ---------------------------------------------------------------------------------------------
// The generation model: the changelogs' ends and starts (for valid truncations). What the test
// holds is decided at run time, by the restore thread's answers, so actions name a task and
// what to do with it, resolved when they run.

struct Model {
  std::array<int64_t, kPartitions> end{};
  std::array<int64_t, kPartitions> start{};
};

struct Action {
  enum Kind { kCreate, kClose, kRecycle, kResume };
  Kind kind = kCreate;
  int32_t partition = 0;
  TaskType type = TaskType::kActive;  // kCreate
  bool checkpoint = false;            // kCreate: stores restored up to a checkpoint...
  int64_t checkpoint_permille = 0;    // ... at this fraction of the log end

  std::string ToString() const {
    static constexpr const char* kNames[] = {"create", "close", "recycle", "resume"};
    std::string s = fmt::format("{} 0_{}", kNames[kind], partition);
    if (kind == kCreate) {
      s += std::string(" ") + std::string(TaskTypeName(type));
      if (checkpoint) s += fmt::format(" checkpoint@{}‰", checkpoint_permille);
    }
    return s;
  }
};

// ---------------------------------------------------------------------------------------------
// The system under test and the sequential model of the protocol.

struct PairingListener : StateRestoreListener {
  struct Call {
    bool start;  // start, or end/suspended
    bool batch;
    TopicPartition tp;
  };
  std::vector<Call> calls;
  void OnRestoreStart(const TopicPartition& tp, std::string_view, int64_t, int64_t) override {
    calls.push_back({true, false, tp});
  }
  void OnBatchRestored(const TopicPartition& tp, std::string_view, int64_t, int64_t) override {
    calls.push_back({false, true, tp});
  }
  void OnRestoreEnd(const TopicPartition& tp, std::string_view, int64_t) override {
    calls.push_back({false, false, tp});
  }
  void OnRestoreSuspended(const TopicPartition& tp, std::string_view, int64_t) override {
    calls.push_back({false, false, tp});
  }
};

// One incarnation as the test (the stream thread) sees it.
struct Incarnation {
  enum class Where { kHeld, kInRestore, kGone };
  TaskIncarnation who;
  TaskType type = TaskType::kActive;  // the type it was handed in with
  Where where = Where::kHeld;
  bool close_sent = false;   // a CLOSE went after it while the restore thread had it
  bool keep = false;         // held again when it comes back (a recycle waiting for it)
  bool needs_close = false;  // returned restored, no CLOSE sent: its changelogs stay registered
  std::optional<RestoreEvent::Kind> returned;
  int64_t end_at_send = 0;     // the log end when it was handed in
  std::unique_ptr<Task> task;  // while held
};

class RestoreHarness {
 public:
  explicit RestoreHarness(int32_t max_poll_records)
      : world_(/*faults=*/false, kPartitions),
        thread_(world_.broker, world_.clock, &listener_,
                RestoreThreadConfig{.max_poll_records = max_poll_records}) {
    thread_.Start();
  }

  fakes::FakeBroker& broker() { return world_.broker; }
  void NoteTruncated(int32_t partition) { truncated_[partition] = true; }

  void Send(const std::vector<Action>& actions, bool creates_first);
  void Sleep(TimeNs ns) { world_.clock.SleepFor(ns); }
  void Drain();
  void UntilQuiet();
  // Shuts the restore thread down and checks that everything came back.
  void Finish();

 private:
  Incarnation* Live(int32_t partition);
  std::unique_ptr<Task> NewTask(int32_t partition, TaskType type, std::optional<int64_t> cp);
  void Resolve(const Action& a, std::vector<TaskItem>& closes, std::vector<TaskItem>& creates);
  // `closes` null: no CLOSE can or need go (shutting down, or one already went).
  void CloseHeld(Incarnation& inc, bool clean, std::vector<TaskItem>* closes);
  TaskItem HandIn(Incarnation& inc, std::unique_ptr<Task> task);
  void Returned(RestoreEvent& e);
  void CheckRestored(const Incarnation& inc, Task& task);
  void CheckStore(Task& task);
  void CheckListener();
  bool Settled() const;
  // The changelog's records below `end` (the log was never truncated).
  std::vector<ConsumerRecord> ReadLog(const TopicPartition& tp, int64_t end) {
    if (end <= 0) return {};
    absl::StatusOr<std::vector<ConsumerRecord>> log =
        world_.broker.ReadLog(tp, 0, static_cast<size_t>(end));
    RS_CHECK(log.ok() && static_cast<int64_t>(log->size()) == end);
    return *log;
  }

  testing::RuntimeWorld world_;
  PairingListener listener_;
  RestoreThread thread_;
  uint64_t next_incarnation_ = 1;
  std::map<uint64_t, Incarnation> incs_;
  std::map<int32_t, uint64_t> live_;       // partition -> its live incarnation
  std::map<int32_t, uint64_t> last_gone_;  // partition -> its last closed incarnation
  std::array<bool, kPartitions> truncated_{};
  std::set<TopicPartition> listening_;
  size_t listener_seen_ = 0;
  bool shutting_down_ = false;
};

Incarnation* RestoreHarness::Live(int32_t partition) {
  auto it = live_.find(partition);
  return it == live_.end() ? nullptr : &incs_.at(it->second);
}

// A new incarnation over its own directory, its store restored to a checkpoint if asked.
std::unique_ptr<Task> RestoreHarness::NewTask(int32_t partition, TaskType type,
                                              std::optional<int64_t> cp) {
  const TaskIncarnation who{{0, partition}, next_incarnation_++};
  auto open = [&]() {
    StateManagerConfig c;
    c.application_id = "app";
    c.task_dir = fmt::format("/state/app/{}-{}", who.id.ToString(), who.incarnation);
    c.fs = &world_.fs;
    c.open_store = world_.LogStoreOpener();
    auto sm = std::make_unique<StateManager>(who.id, type, std::move(c));
    RS_CHECK(sm->RegisterStores().ok());
    return sm;
  };
  std::unique_ptr<StateManager> sm = open();
  if (cp.has_value()) {
    std::vector<KeyValueWrite> writes;
    for (const ConsumerRecord& r : ReadLog(Changelog(partition), *cp)) {
      writes.push_back({r.key, r.value});
    }
    RS_CHECK(sm->StoreForChangelog(Changelog(partition))->ApplyBatch(writes).ok());
    sm->Advance(Changelog(partition), *cp);
    RS_CHECK(sm->Close(/*clean=*/true).ok());
    sm.reset();  // releases the directory before the next incarnation's state opens it
    sm = open();
  }
  auto task = std::make_unique<Task>(who, std::move(sm), testing::Input(partition));
  Incarnation& inc = incs_[who.incarnation];
  inc.who = who;
  return task;
}

TaskItem RestoreHarness::HandIn(Incarnation& inc, std::unique_ptr<Task> task) {
  inc.type = task->effective_type();
  inc.where = Incarnation::Where::kInRestore;
  inc.close_sent = inc.keep = inc.needs_close = false;
  inc.returned.reset();
  inc.end_at_send = *world_.broker.EndOffset(Changelog(inc.who.id.partition));
  live_[inc.who.id.partition] = inc.who.incarnation;
  TaskItem item;
  item.kind = TaskItem::Kind::kCreate;
  item.incarnation = inc.who;
  item.task = std::move(task);
  return item;
}

TaskItem CloseItem(const TaskIncarnation& who, std::vector<TopicPartition> changelogs) {
  TaskItem item;
  item.kind = TaskItem::Kind::kClose;
  item.incarnation = who;
  item.changelogs = std::move(changelogs);
  return item;
}

// Closes a task the test holds, as the task manager does; a CLOSE goes only where the restore
// thread still has its changelogs registered (returned restored, no CLOSE sent yet).
void RestoreHarness::CloseHeld(Incarnation& inc, bool clean, std::vector<TaskItem>* closes) {
  Task& task = *inc.task;
  if (task.state() == TaskState::kRestoring || task.state() == TaskState::kRunning) {
    task.TransitionTo(TaskState::kSuspended);
  }
  if (inc.needs_close && closes != nullptr) {
    closes->push_back(CloseItem(inc.who, task.state_manager().CaptureChangelogPartitions()));
  }
  RS_CHECK(task.state_manager().Close(clean).ok());
  task.state_manager().Clear();
  task.TransitionTo(TaskState::kClosed);
  inc.task.reset();
  inc.where = Incarnation::Where::kGone;
  if (live_.contains(inc.who.id.partition) &&
      live_.at(inc.who.id.partition) == inc.who.incarnation) {
    live_.erase(inc.who.id.partition);
  }
  last_gone_[inc.who.id.partition] = inc.who.incarnation;
}

void RestoreHarness::Resolve(const Action& a, std::vector<TaskItem>& closes,
                             std::vector<TaskItem>& creates) {
  Incarnation* live = Live(a.partition);
  const bool held = live != nullptr && live->where == Incarnation::Where::kHeld;
  const bool in_restore = live != nullptr && live->where == Incarnation::Where::kInRestore;
  switch (a.kind) {
    case Action::kCreate: {
      if (in_restore) {  // close-then-create in one round; it comes back and is closed
        if (!live->close_sent) closes.push_back(CloseItem(live->who, {}));
        live->close_sent = true;
        live->keep = false;
        live_.erase(a.partition);
      } else if (held) {
        CloseHeld(*live, /*clean=*/live->returned != RestoreEvent::Kind::kCorrupted, &closes);
      }
      std::optional<int64_t> cp;
      const int64_t end = *world_.broker.EndOffset(Changelog(a.partition));
      if (a.checkpoint && !truncated_[a.partition]) cp = end * a.checkpoint_permille / 1000;
      std::unique_ptr<Task> task = NewTask(a.partition, a.type, cp);
      Incarnation& inc = incs_.at(task->incarnation().incarnation);
      creates.push_back(HandIn(inc, std::move(task)));
      return;
    }
    case Action::kClose:
      if (in_restore) {
        if (!live->close_sent) closes.push_back(CloseItem(live->who, {}));
        live->close_sent = true;
        live->keep = false;
        live_.erase(a.partition);
      } else if (held) {
        CloseHeld(*live, live->returned != RestoreEvent::Kind::kCorrupted, &closes);
      } else if (last_gone_.contains(a.partition)) {  // a stale CLOSE: must change nothing
        closes.push_back(CloseItem(incs_.at(last_gone_.at(a.partition)).who, {}));
      }
      return;
    case Action::kRecycle:
      if (in_restore) {  // ask for it back first (the task manager's "awaiting")
        if (!live->close_sent) closes.push_back(CloseItem(live->who, {}));
        live->close_sent = live->keep = true;
      } else if (held && live->returned != RestoreEvent::Kind::kCorrupted) {
        Task& old = *live->task;
        if (old.state() != TaskState::kSuspended) old.TransitionTo(TaskState::kSuspended);
        if (live->needs_close) {
          closes.push_back(CloseItem(live->who, old.state_manager().CaptureChangelogPartitions()));
        }
        const TaskType to =
            old.type() == TaskType::kActive ? TaskType::kStandby : TaskType::kActive;
        std::unique_ptr<StateManager> sm = old.CloseAndRecycleState();
        sm->PrepareNewTaskType(to);
        live->task.reset();
        live->where = Incarnation::Where::kGone;
        last_gone_[a.partition] = live->who.incarnation;
        const TaskIncarnation who{{0, a.partition}, next_incarnation_++};
        auto task = std::make_unique<Task>(who, std::move(sm), testing::Input(a.partition));
        incs_[who.incarnation].who = who;
        creates.push_back(HandIn(incs_.at(who.incarnation), std::move(task)));
      }
      return;
    case Action::kResume:
      if (held && live->returned == RestoreEvent::Kind::kRemoved) {
        std::unique_ptr<Task> task = std::move(live->task);
        creates.push_back(HandIn(*live, std::move(task)));
      }
      return;
  }
}

void RestoreHarness::Send(const std::vector<Action>& actions, bool creates_first) {
  std::vector<TaskItem> closes, creates;
  for (const Action& a : actions) Resolve(a, closes, creates);
  std::vector<TaskItem> round;
  std::vector<TaskItem>& first = creates_first ? creates : closes;
  std::vector<TaskItem>& second = creates_first ? closes : creates;
  for (TaskItem& item : first) round.push_back(std::move(item));
  for (TaskItem& item : second) round.push_back(std::move(item));
  if (round.empty()) return;
  ++coverage.rounds;
  coverage.items += static_cast<int64_t>(round.size());
  std::vector<TaskItem> refused;
  Expect(thread_.AddItems(std::move(round), &refused), "AddItems refused a round while running");
}

void RestoreHarness::CheckStore(Task& task) {
  const int32_t p = task.id().partition;
  if (truncated_[p]) return;  // a store restored from a truncated log starts mid-way
  const CheckpointOffsets& pending = task.state_manager().pending_offsets();
  const int64_t position = pending.contains(Changelog(p)) ? pending.at(Changelog(p)) : 0;
  const auto contents = task.state_manager().StoreForChangelog(Changelog(p))->ReadAll();
  Expect(contents.ok() && *contents == FoldChangelog(ReadLog(Changelog(p), position)),
         fmt::format("{}: the store differs from the fold of its changelog up to {}",
                     task.incarnation().ToString(), position));
}

void RestoreHarness::CheckRestored(const Incarnation& inc, Task& task) {
  const std::string who = inc.who.ToString();
  Expect(inc.type == TaskType::kActive && task.type() == TaskType::kActive,
         who + ": a standby came back as restored");
  Expect(task.state() == TaskState::kRestoring, who + ": restored but not RESTORING");
  const TopicPartition tp = Changelog(inc.who.id.partition);
  const CheckpointOffsets& pending = task.state_manager().pending_offsets();
  const int64_t position = pending.contains(tp) ? pending.at(tp) : -1;
  const int64_t end_now = *world_.broker.EndOffset(tp);
  Expect(position >= inc.end_at_send && position <= end_now,
         fmt::format("{}: restored at {}, but the log end was {} when it was handed in ({} now)",
                     who, position, inc.end_at_send, end_now));
}

void RestoreHarness::Returned(RestoreEvent& e) {
  const std::string who = e.incarnation.ToString();
  Expect(e.kind != RestoreEvent::Kind::kWarning && e.kind != RestoreEvent::Kind::kFailed,
         "an error event without faults: " + e.error.ToString());
  auto it = incs_.find(e.incarnation.incarnation);
  Expect(it != incs_.end() && it->second.who == e.incarnation &&
             it->second.where == Incarnation::Where::kInRestore,
         who + " came back but the restore thread did not have it (twice, or never sent)");
  Incarnation& inc = it->second;
  Expect(e.task != nullptr && e.task->incarnation() == e.incarnation,
         who + ": the event does not carry its task");
  switch (e.kind) {
    case RestoreEvent::Kind::kRemoved:
      Expect(inc.close_sent || shutting_down_, who + ": removed without a CLOSE");
      // (A CREATE still queued at shutdown comes back as it went in: never registered.)
      Expect(e.task->state() == TaskState::kSuspended ||
                 (shutting_down_ && e.task->state() != TaskState::kRestoring &&
                  e.task->state() != TaskState::kRunning),
             fmt::format("{}: removed in state {}", who, TaskStateName(e.task->state())));
      CheckStore(*e.task);
      break;
    case RestoreEvent::Kind::kRestored:
      CheckRestored(inc, *e.task);
      CheckStore(*e.task);
      e.task->TransitionTo(TaskState::kRunning);
      break;
    case RestoreEvent::Kind::kCorrupted:
      Expect(e.corrupted_changelogs == std::set<TopicPartition>{Changelog(inc.who.id.partition)},
             who + ": corruption names other changelogs than the task's");
      Expect(truncated_[inc.who.id.partition], who +
                                                   ": corrupted, but its log was never "
                                                   "truncated");
      break;
    case RestoreEvent::Kind::kWarning:
    case RestoreEvent::Kind::kFailed:
      break;
  }
  inc.returned = e.kind;
  ++(e.kind == RestoreEvent::Kind::kRestored  ? coverage.restored
     : e.kind == RestoreEvent::Kind::kRemoved ? coverage.removed
                                              : coverage.corrupted);
  inc.task = std::move(e.task);
  inc.where = Incarnation::Where::kHeld;
  inc.needs_close = e.kind == RestoreEvent::Kind::kRestored && !inc.close_sent;
  const bool live =
      live_.contains(inc.who.id.partition) && live_.at(inc.who.id.partition) == inc.who.incarnation;
  if (!live || (inc.close_sent && !inc.keep) || shutting_down_) {
    CloseHeld(inc, e.kind != RestoreEvent::Kind::kCorrupted, nullptr);
  }
  inc.close_sent = inc.keep = false;
}

void RestoreHarness::CheckListener() {
  for (; listener_seen_ < listener_.calls.size(); ++listener_seen_) {
    const PairingListener::Call& call = listener_.calls[listener_seen_];
    const bool open = listening_.contains(call.tp);
    if (call.batch) {
      Expect(open, "listener: a batch outside start..end of " + call.tp.ToString());
    } else if (call.start) {
      Expect(!open, "listener: a second start of " + call.tp.ToString() +
                        " (two incarnations restoring it?)");
      listening_.insert(call.tp);
    } else {
      Expect(open, "listener: end or suspended without a start: " + call.tp.ToString());
      listening_.erase(call.tp);
    }
  }
}

void RestoreHarness::Drain() {
  for (RestoreEvent& e : thread_.DrainEvents()) Returned(e);
  CheckListener();
}

// Every active and every task a CLOSE went after has come back.
bool RestoreHarness::Settled() const {
  for (const auto& [n, inc] : incs_) {
    if (inc.where != Incarnation::Where::kInRestore) continue;
    if (inc.close_sent || inc.type == TaskType::kActive) return false;
  }
  return true;
}

void RestoreHarness::UntilQuiet() {
  const TimeNs deadline = world_.clock.NowNs() + kQuietNsMax;
  Drain();
  while (!Settled() && world_.clock.NowNs() < deadline) {
    world_.clock.SleepFor(kDrainIntervalNs);
    Drain();
  }
  std::string waiting;
  for (const auto& [n, inc] : incs_) {
    if (inc.where == Incarnation::Where::kInRestore) waiting += " " + inc.who.ToString();
  }
  Expect(Settled(),
         "not quiet within 60 s of virtual time; still in the restore thread:" + waiting);
}

void RestoreHarness::Finish() {
  Drain();
  shutting_down_ = true;
  const absl::Status s = thread_.Shutdown(30 * kSecond);
  Expect(s.ok(), "shutdown: " + s.ToString());
  Drain();
  for (auto& [n, inc] : incs_) {
    Expect(inc.where != Incarnation::Where::kInRestore,
           inc.who.ToString() + " was not returned by the shutdown");
    if (inc.where == Incarnation::Where::kHeld) {
      CloseHeld(inc, inc.returned != RestoreEvent::Kind::kCorrupted, nullptr);
    }
  }
  Expect(listening_.empty(), "listener starts without end or suspended after shutdown");
  if (properties::Oracle::Enabled()) world_.oracle.CheckFinal();
}

// ---------------------------------------------------------------------------------------------
// Commands.

using Command = rc::state::Command<Model, RestoreHarness>;
using CommandPtr = std::shared_ptr<const Command>;

struct SendRound : Command {
  std::vector<Action> actions;
  bool creates_first = false;

  SendRound() {
    std::vector<int32_t> partitions = {0, 1, 2};
    const size_t n = *rc::gen::inRange<size_t>(1, kPartitions + 1);
    for (size_t i = 0; i < n; ++i) {
      Action a;
      const size_t pick = *rc::gen::inRange<size_t>(0, partitions.size());
      a.partition = partitions[pick];
      partitions.erase(partitions.begin() + static_cast<ptrdiff_t>(pick));
      a.kind = *rc::gen::weightedElement<Action::Kind>(
          {{4, Action::kCreate}, {2, Action::kClose}, {3, Action::kRecycle}, {1, Action::kResume}});
      if (a.kind == Action::kCreate) {
        a.type = *rc::gen::element(TaskType::kActive, TaskType::kStandby);
        a.checkpoint = *rc::gen::inRange(0, 3) == 0;
        if (a.checkpoint) a.checkpoint_permille = *rc::gen::inRange<int64_t>(0, 1001);
      }
      actions.push_back(a);
    }
    creates_first = *rc::gen::arbitrary<bool>();
  }
  void run(const Model&, RestoreHarness& h) const override { h.Send(actions, creates_first); }
  void show(std::ostream& os) const override {
    os << "Send round" << (creates_first ? " (CREATEs first)" : "") << ":";
    for (const Action& a : actions) os << " [" << a.ToString() << "]";
  }
};

struct Append : Command {
  int32_t partition = 0;
  int n = 0;

  Append() : partition(*rc::gen::inRange(0, kPartitions)), n(*rc::gen::inRange(1, 40)) {}
  void apply(Model& m) const override { m.end[partition] += n; }
  void run(const Model& m, RestoreHarness& h) const override {
    for (int64_t i = m.end[partition]; i < m.end[partition] + n; ++i) {
      std::optional<std::string> value;
      if (i % 5 != 4) value = std::to_string(i);
      Expect(h.broker().Append(Changelog(partition), "k" + std::to_string(i % 7), value, i).ok(),
             "append failed");
    }
  }
  void show(std::ostream& os) const override {
    os << "Append " << n << " to changelog " << partition;
  }
};

struct Truncate : Command {
  int32_t partition = 0;
  int64_t before = 0;

  explicit Truncate(const Model& m) : partition(*rc::gen::inRange(0, kPartitions)) {
    RC_PRE(m.end[partition] > m.start[partition]);
    before = *rc::gen::inRange<int64_t>(m.start[partition] + 1, m.end[partition] + 1);
  }
  void checkPreconditions(const Model& m) const override {
    RC_PRE(before > m.start[partition] && before <= m.end[partition]);
  }
  void apply(Model& m) const override { m.start[partition] = before; }
  void run(const Model&, RestoreHarness& h) const override {
    Expect(h.broker().DeleteRecords({{Changelog(partition), before}}).ok(), "DeleteRecords");
    h.NoteTruncated(partition);
  }
  void show(std::ostream& os) const override {
    os << "Truncate changelog " << partition << " before " << before;
  }
};

struct Wait : Command {
  int64_t ms = 0;

  Wait() : ms(*rc::gen::inRange<int64_t>(0, 400)) {}
  void run(const Model&, RestoreHarness& h) const override {
    h.Sleep(ms * kMillisecond);
    h.Drain();
  }
  void show(std::ostream& os) const override { os << "Wait " << ms << " ms, drain"; }
};

struct UntilQuiet : Command {
  void run(const Model&, RestoreHarness& h) const override { h.UntilQuiet(); }
  void show(std::ostream& os) const override { os << "UntilQuiet"; }
};

template <typename C>
rc::Gen<CommandPtr> Make(const Model& m) {
  if constexpr (std::is_constructible_v<C, const Model&>) {
    return rc::gen::exec([m]() -> CommandPtr { return std::make_shared<const C>(m); });
  } else {
    return rc::gen::exec([]() -> CommandPtr { return std::make_shared<const C>(); });
  }
}

rc::Gen<CommandPtr> GenerateCommand(const Model& m) {
  return rc::gen::weightedOneOf<CommandPtr>({
      {6, Make<SendRound>(m)},
      {3, Make<Append>(m)},
      {1, Make<Truncate>(m)},
      {4, Make<Wait>(m)},
      {1, Make<UntilQuiet>(m)},
  });
}

void RunCase(int32_t max_poll_records, const std::vector<CommandPtr>& commands) {
  std::exception_ptr failure;
  const sim::TestRun run = sim::RunUnderSim(
      [&]() {
        RestoreHarness harness(max_poll_records);
        try {
          rc::state::runAll(commands, Model{}, harness);
          harness.Finish();
        } catch (const rc::detail::CaseResult&) {
          failure = std::current_exception();
        }
      },
      kSimSeed, sim::SimOptions{.steps_max = 20'000'000});
  if (failure) std::rethrow_exception(failure);
  Expect(run.outcome.ok(), "the simulated run failed: " + run.outcome.message);
  ++coverage.runs;
  coverage.commands += static_cast<int64_t>(commands.size());
  coverage.sim_steps += static_cast<int64_t>(run.steps);
  coverage.virtual_ns += run.end_ns;
}

TEST(RestoreThreadModelTest, QueueProtocolAgreesWithASequentialModel) {
  properties::CheckProperty(kCases, []() {
    const int32_t max_poll_records = *rc::gen::inRange(1, 20);
    const auto commands = *rc::state::gen::commands(Model{}, &GenerateCommand);
    RunCase(max_poll_records, commands);
  });
  const Coverage& c = coverage;
  std::printf(
      "%lld passing runs, %lld commands, %lld rounds of %lld items; events: %lld "
      "restored, %lld removed, %lld corrupted; %lld scheduling steps, %.0f s virtual\n",
      (long long)c.runs, (long long)c.commands, (long long)c.rounds, (long long)c.items,
      (long long)c.restored, (long long)c.removed, (long long)c.corrupted, (long long)c.sim_steps,
      c.virtual_ns / 1e9);
}

}  // namespace
}  // namespace restoresim
