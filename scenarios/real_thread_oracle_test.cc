// The invariant oracle on real threads: the runtime of real_thread_stress_test (two stream
// threads and their restore threads, the system clock, the fake broker with its appends
// reported) with an EventRecorder installed over a StandaloneJudge, so every thread's events
// are judged online in the recorder's one order. Two runs are recorded once per binary: a
// plain one, and one with a checkpoint/restore cycle of the runtime after the input is
// committed (the only freeze, and the only restorations from a checkpoint). Both pass; each
// invariant judged on real-thread streams is then broken by the smallest edit of a recorded
// stream (one test per checker, named after what the edit does) and must be named; and the
// stream survives the file format.
// Out: liveness_bounds, stopped_processing and paused_tasks are simulator-only (the
// StandaloneJudge leaves them out; docs/DESIGN.md, "The invariant oracle", the real-thread table).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "core/events/event_codec.h"
#include "core/events/event_recorder.h"
#include "core/port/system_clock.h"
#include "core/runtime/runtime.h"
#include "core/state/log_store.h"
#include "fakes/fake_broker.h"
#include "fakes/mem_file_system.h"
#include "properties/standalone_judge.h"

namespace restoresim {
namespace {

constexpr int32_t kPartitions = 4;
constexpr int kChangelogRecords = 300;
constexpr int kInputRecords = 200;

// Judges online and keeps a copy of every event (for the tests that break the stream).
class JudgeAndKeep final : public events::EventSink {
 public:
  void OnEvent(const events::Event& event) override {
    judge.OnEvent(event);
    kept.push_back(event);
  }
  properties::StandaloneJudge judge;
  std::vector<events::Event> kept;
};

// Runs the runtime on real threads until every input record is committed, then closes it.
// With `checkpoint_cycle`, Checkpoint() and Restore() it first (frozen for 50 ms).
void RunRealThreads(JudgeAndKeep& sink, bool checkpoint_cycle) {
  SystemClock& clock = *SystemClock::Default();
  fakes::FakeBroker broker(clock, nullptr, fakes::BrokerFaults{});
  fakes::MemFileSystem fs;
  // No log-start source: FakeBroker's peek takes no lock (fine under the simulator only).
  events::EventRecorder recorder(sink, events::RecorderOptions{.clock = &clock});
  broker.SetAppendObserver(
      [&recorder](const TopicPartition& tp, const ConsumerRecord& r) { recorder.OnAppend(tp, r); });
  ASSERT_TRUE(broker.CreateTopic("app-counts-changelog", kPartitions).ok());
  ASSERT_TRUE(broker.CreateTopic("input", kPartitions).ok());
  for (int32_t p = 0; p < kPartitions; ++p) {
    for (int i = 0; i < kChangelogRecords; ++i) {
      ASSERT_TRUE(broker.Append({"app-counts-changelog", p}, "k" + std::to_string(i % 7),
                                std::to_string(i), i).ok());
    }
    for (int i = 0; i < kInputRecords; ++i) {
      ASSERT_TRUE(broker.Append({"input", p}, "k" + std::to_string(i % 5), "1", i).ok());
    }
  }
  RuntimeConfig config;
  config.application_id = "app";
  config.input_topic = "input";
  config.num_stream_threads = 2;
  config.state_dir = "/state";
  config.commit_interval_ms = 20;
  config.poll_ms = 5;
  config.restore_max_poll_records = 50;
  StoreOpener opener = [&fs](const std::string& dir, const std::string& name)
      -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
    auto store = LogStore::Open(fs, dir, name);
    if (!store.ok()) return store.status();
    return std::unique_ptr<KeyValueStore>(std::move(*store));
  };
  {
    ScopedObserver observing(&recorder);  // the runtime's threads inherit it
    Runtime runtime(config, broker, clock, fs, opener);
    if (checkpoint_cycle) {
      ASSERT_TRUE(runtime.EnableCheckpointRestore({}).ok());
    }
    ASSERT_TRUE(runtime.Start().ok());
    const TimeNs deadline = clock.NowNs() + 60 * kSecond;
    bool done = false;
    while (!done && clock.NowNs() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const auto committed = broker.CommittedOffsets("app");
      done = true;
      for (int32_t p = 0; p < kPartitions; ++p) {
        auto it = committed.find({"input", p});
        done = done && it != committed.end() && it->second == kInputRecords;
      }
    }
    ASSERT_TRUE(done) << "input not fully processed and committed in time";
    if (checkpoint_cycle) {
      ASSERT_TRUE(runtime.Checkpoint().ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ASSERT_TRUE(runtime.Restore().ok());
    }
    ASSERT_TRUE(runtime.Close(30 * kSecond).ok());
  }
  recorder.OnRunFinished();
  broker.SetAppendObserver(nullptr);
}

// A recorded run: every event, and what the online judge said of it.
struct Recording {
  bool recorded = false;
  std::vector<events::Event> events;
  std::optional<Failure> failure;
  int64_t events_judged = 0;
  int64_t store_checks = 0;
};

// Each run is recorded once per binary (the tests edit copies of its stream).
const Recording& Recorded(bool checkpoint_cycle) {
  static Recording runs[2];
  static bool tried[2] = {false, false};
  Recording& run = runs[checkpoint_cycle ? 1 : 0];
  if (!tried[checkpoint_cycle ? 1 : 0]) {
    tried[checkpoint_cycle ? 1 : 0] = true;
    JudgeAndKeep sink;
    RunRealThreads(sink, checkpoint_cycle);
    run.recorded = !::testing::Test::HasFatalFailure();
    run.events = std::move(sink.kept);
    run.failure = sink.judge.failure();
    run.events_judged = sink.judge.oracle().counts().events;
    run.store_checks = sink.judge.oracle().counts().store_checks;
  }
  return run;
}

std::optional<Failure> JudgeStream(const std::vector<events::Event>& stream) {
  properties::StandaloneJudge judge;
  for (const events::Event& e : stream) judge.OnEvent(e);
  return judge.failure();
}

template <typename T>
T* As(events::Event& e) {
  return std::get_if<T>(&e.body);
}
template <typename T>
const T* As(const events::Event& e) {
  return std::get_if<T>(&e.body);
}

// The index of the first event of kind T at or after `from` that `accept` takes (the stream's
// size if none).
template <typename T, typename Accept>
size_t Find(const std::vector<events::Event>& stream, Accept accept, size_t from = 0) {
  for (size_t i = from; i < stream.size(); ++i) {
    if (const T* body = As<T>(stream[i]); body != nullptr && accept(*body, stream[i].header)) {
      return i;
    }
  }
  return stream.size();
}
constexpr auto kAny = [](const auto&, const events::EventHeader&) { return true; };

bool SameStream(const std::vector<events::Event>& a, const std::vector<events::Event>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (events::EncodeEvent(a[i]) != events::EncodeEvent(b[i])) return false;
  }
  return true;
}

// The recorded streams: tests copy one, edit the copy and judge it.
class RealThreadOracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (bool cycle : {false, true}) {
      const Recording& run = Recorded(cycle);
      ASSERT_TRUE(run.recorded) << (cycle ? "the checkpoint/restore run" : "the plain run");
      ASSERT_FALSE(run.failure.has_value()) << run.failure->Render();
    }
  }
  static std::vector<events::Event> Plain() { return Recorded(false).events; }
  static std::vector<events::Event> WithCycle() { return Recorded(true).events; }

  // The edited stream fails naming `invariant`; the stream it was edited from passes.
  static void ExpectBreaks(const std::vector<events::Event>& original,
                           const std::vector<events::Event>& broken, std::string_view invariant) {
    EXPECT_FALSE(SameStream(original, broken)) << "the edit changed nothing";
    const std::optional<Failure> clean = JudgeStream(original);
    EXPECT_FALSE(clean.has_value()) << clean->Render();
    const std::optional<Failure> failure = JudgeStream(broken);
    ASSERT_TRUE(failure.has_value()) << "the edited stream passed; expected " << invariant;
    EXPECT_EQ(failure->invariant, invariant) << failure->Render();
  }
};

TEST_F(RealThreadOracleTest, ARealThreadRunPassesEveryInvariant) {
  for (bool cycle : {false, true}) {
    const Recording& run = Recorded(cycle);
    EXPECT_GT(run.events_judged, 1000);
    EXPECT_GT(run.store_checks, 0);
    // One order consistent with each thread's: every thread's numbers run 1, 2, 3, ...
    std::map<std::string, uint64_t> last;
    for (const events::Event& e : run.events) {
      EXPECT_EQ(e.header.seq, last[e.header.thread] + 1) << e.header.thread;
      last[e.header.thread] = e.header.seq;
    }
    EXPECT_GE(last.size(), 4u);  // two stream threads, two restore threads (and the test's)
  }
  const std::vector<events::Event> cycle = WithCycle();
  EXPECT_LT(Find<events::CheckpointNoticed>(cycle,
                                            [](const events::CheckpointNoticed& n, auto&) {
                                              return n.notice == CheckpointNotice::kFrozen;
                                            }),
            cycle.size());
}

// ---- one test per invariant judged on real threads, in the oracle's order ----

// single_owner: the stream thread hands the same task to its restore thread twice; the second
// hand-off is from a holder (the stream thread) the ledger no longer sees holding it.
TEST_F(RealThreadOracleTest, AHandOffFromAHolderTheLedgerDidNotSeeFailsSingleOwner) {
  std::vector<events::Event> s = Plain();
  const size_t i = Find<events::HandedOff>(s, [](const events::HandedOff& h, auto&) {
    return h.from == TaskHolder::kStreamThread && h.to == TaskHolder::kToRestore;
  });
  ASSERT_LT(i, s.size());
  s.insert(s.begin() + static_cast<ptrdiff_t>(i) + 1, s[i]);
  ExpectBreaks(Plain(), s, "single_owner");
}

// failed_tasks: a close at shutdown reported as a close of a failed task that never failed.
TEST_F(RealThreadOracleTest, ATaskClosedAsFailedThatNeverFailedFailsFailedTasks) {
  std::vector<events::Event> s = Plain();
  const size_t i = Find<events::DecisionTaken>(s, [](const events::DecisionTaken& d, auto&) {
    return d.decision == TaskDecision::kCloseShutdown;
  });
  ASSERT_LT(i, s.size());
  As<events::DecisionTaken>(s[i])->decision = TaskDecision::kCloseFailed;
  ExpectBreaks(Plain(), s, "failed_tasks");
}

// registration: a changelog registered a second time right after its first registration.
TEST_F(RealThreadOracleTest, ARealThreadStreamThatRegistersTwiceFailsRegistration) {
  std::vector<events::Event> s = Plain();
  const size_t i = Find<events::Registered>(s, kAny);
  ASSERT_LT(i, s.size());
  s.insert(s.begin() + static_cast<ptrdiff_t>(i) + 1, s[i]);
  ExpectBreaks(Plain(), s, "registration");
}

// assignment: a task manager's view that leaves out a running task its stream thread holds.
TEST_F(RealThreadOracleTest, AViewMissingARunningTaskFailsAssignment) {
  std::vector<events::Event> s = Plain();
  auto running = [](const TaskView& t) { return t.where == TaskView::Where::kRunning; };
  const size_t i = Find<events::TaskManagerViewed>(s, [&](const events::TaskManagerViewed& v,
                                                          auto&) {
    return std::any_of(v.tasks.begin(), v.tasks.end(), running);
  });
  ASSERT_LT(i, s.size());
  std::vector<TaskView>& tasks = As<events::TaskManagerViewed>(s[i])->tasks;
  tasks.erase(std::find_if(tasks.begin(), tasks.end(), running));
  ExpectBreaks(Plain(), s, "assignment");
}

// checkpoint: the first checkpoint claims one record past what its stores flushed.
TEST_F(RealThreadOracleTest, ACheckpointPastTheFlushedDataFailsCheckpoint) {
  std::vector<events::Event> s = Plain();
  const size_t i = Find<events::CheckpointWritten>(s, [](const events::CheckpointWritten& c,
                                                         auto&) { return !c.offsets.empty(); });
  ASSERT_LT(i, s.size());
  ++As<events::CheckpointWritten>(s[i])->offsets.begin()->second;
  ExpectBreaks(Plain(), s, "checkpoint");
}

// Store contents as an event recorded them: the first readable store with data, or null.
events::StoreSnapshot* FirstStoreWithData(events::StateInfo& state) {
  for (events::StoreSnapshot& store : state.stores) {
    if (store.readable && !store.data.empty()) return &store;
  }
  return nullptr;
}
bool HasStoreWithData(const events::StateInfo& state) {
  return std::any_of(state.stores.begin(), state.stores.end(),
                     [](const events::StoreSnapshot& s) { return s.readable && !s.data.empty(); });
}
// A value no record of the changelogs has (they are counts and record numbers).
constexpr std::string_view kNeverWritten = "-1";

// checkpoint: a checkpoint whose store holds, for one key, a value its changelog never had.
TEST_F(RealThreadOracleTest, ACheckpointOverStoresThatDifferFromTheChangelogFailsCheckpoint) {
  std::vector<events::Event> s = Plain();
  const size_t i = Find<events::CheckpointWritten>(s, [](const events::CheckpointWritten& c,
                                                         auto&) {
    return !c.offsets.empty() && c.state.stores_read && HasStoreWithData(c.state);
  });
  ASSERT_LT(i, s.size());
  FirstStoreWithData(As<events::CheckpointWritten>(s[i])->state)->data.begin()->second =
      kNeverWritten;
  ExpectBreaks(Plain(), s, "checkpoint");
}

// checkpoint_progress: the restore thread hands a restored task back without the checkpoint
// of its restored position (the write and its result dropped).
TEST_F(RealThreadOracleTest, ARestoredTaskLeavingWithoutItsCheckpointFailsCheckpointProgress) {
  std::vector<events::Event> s = Plain();
  const size_t out = Find<events::RestoreEventMoved>(s, [](const events::RestoreEventMoved& m,
                                                           auto&) {
    return !m.drained && m.event.kind == RestoreEvent::Kind::kRestored && m.event.task;
  });
  ASSERT_LT(out, s.size());
  const std::string dir = As<events::RestoreEventMoved>(s[out])->event.task->task_dir;
  size_t written = s.size();  // the last checkpoint of its directory before it leaves
  for (size_t i = 0; i < out; ++i) {
    const auto* c = As<events::CheckpointWritten>(s[i]);
    if (c != nullptr && c->state.task_dir == dir) written = i;
  }
  ASSERT_LT(written, out);
  const size_t result = Find<events::CheckpointResult>(
      s, [&](const events::CheckpointResult& r, auto&) { return r.state.task_dir == dir; },
      written);
  ASSERT_LT(result, out);
  s.erase(s.begin() + static_cast<ptrdiff_t>(result));
  s.erase(s.begin() + static_cast<ptrdiff_t>(written));
  ExpectBreaks(Plain(), s, "checkpoint_progress");
}

// thread_confinement: a task made RUNNING on the other stream thread, not the one that made it.
TEST_F(RealThreadOracleTest, ATaskMadeRunningOnAnotherStreamThreadFailsThreadConfinement) {
  std::vector<events::Event> s = Plain();
  const size_t i = Find<events::TaskTransitioned>(s, [](const events::TaskTransitioned& t,
                                                        auto&) {
    return t.to == TaskState::kRunning;
  });
  ASSERT_LT(i, s.size());
  const events::Name owner = s[i].header.thread;
  const size_t other = Find<events::StreamLoopBegan>(
      s, [&](const events::StreamLoopBegan& l, auto&) { return l.stream_thread != owner; });
  ASSERT_LT(other, s.size());
  s[i].header.thread = As<events::StreamLoopBegan>(s[other])->stream_thread;
  ExpectBreaks(Plain(), s, "thread_confinement");
}

// reader_mode: a reader reports standby updating as its first active changelogs begin.
TEST_F(RealThreadOracleTest, AReaderSwitchingToStandbysWhileActivesRestoreFailsReaderMode) {
  std::vector<events::Event> s = Plain();
  const size_t i = Find<events::ReaderModeChanged>(s, [](const events::ReaderModeChanged& m,
                                                         auto&) {
    return m.mode == ReaderMode::kActiveRestoring;
  });
  ASSERT_LT(i, s.size());
  As<events::ReaderModeChanged>(s[i])->mode = ReaderMode::kStandbyUpdating;
  ExpectBreaks(Plain(), s, "reader_mode");
}

// running_gate: a stream thread reports RUNNING before its first restored task runs (its
// state change moved before that task's transition to RUNNING).
TEST_F(RealThreadOracleTest, AThreadRunningBeforeItsRestoredTasksRunFailsRunningGate) {
  std::vector<events::Event> s = Plain();
  const size_t task = Find<events::TaskTransitioned>(s, [](const events::TaskTransitioned& t,
                                                           auto&) {
    return t.to == TaskState::kRunning;
  });
  ASSERT_LT(task, s.size());
  const events::Name thread = s[task].header.thread;
  const size_t state = Find<events::StreamThreadStateChanged>(
      s,
      [&](const events::StreamThreadStateChanged& c, auto&) {
        return c.stream_thread == thread && c.to == StreamThreadState::kRunning;
      },
      task);
  ASSERT_LT(state, s.size());
  const events::Event running = s[state];
  s.erase(s.begin() + static_cast<ptrdiff_t>(state));
  s.insert(s.begin() + static_cast<ptrdiff_t>(task), running);
  ExpectBreaks(Plain(), s, "running_gate");
}

// listener_pairing: the first restore start is never told, so its batches and its end come
// without a start.
TEST_F(RealThreadOracleTest, ARestoreListenerWithoutItsStartFailsListenerPairing) {
  std::vector<events::Event> s = Plain();
  const size_t i = Find<events::ListenerCalled>(
      s, [](const events::ListenerCalled& l, auto&) { return l.call == ListenerCall::kStart; });
  ASSERT_LT(i, s.size());
  s.erase(s.begin() + static_cast<ptrdiff_t>(i));
  ExpectBreaks(Plain(), s, "listener_pairing");
}

// The first batch restored under a registration that started from a checkpoint (some are
// revoked before their first batch), or the stream's size.
size_t FirstBatchFromACheckpoint(const std::vector<events::Event>& s) {
  auto from_checkpoint = [](const events::Registered& r, auto&) {
    return r.start_offset.has_value() && *r.start_offset > 0;
  };
  for (size_t reg = Find<events::Registered>(s, from_checkpoint); reg < s.size();
       reg = Find<events::Registered>(s, from_checkpoint, reg + 1)) {
    const events::Registered& r = *As<events::Registered>(s[reg]);
    const size_t batch = Find<events::BatchRestored>(
        s,
        [&](const events::BatchRestored& b, auto&) {
          return b.reader == r.reader && b.changelog == r.changelog && b.owner == r.owner;
        },
        reg);
    if (batch < s.size()) return batch;
  }
  return s.size();
}

// no_wasted_work (the run with a checkpoint/restore cycle: after it the tasks are created
// again and restore from their checkpoints): the first batch from a checkpoint starts 50
// records below it, restoring records the directory had already checkpointed.
TEST_F(RealThreadOracleTest, RestoringBelowTheCheckpointAgainFailsNoWastedWork) {
  std::vector<events::Event> s = WithCycle();
  const size_t batch = FirstBatchFromACheckpoint(s);
  ASSERT_LT(batch, s.size());
  As<events::BatchRestored>(s[batch])->records += 50;
  ExpectBreaks(WithCycle(), s, "no_wasted_work");
}

// store_contents: a restored task reaches its stream thread with one key of its store holding a
// value its changelog never had.
TEST_F(RealThreadOracleTest, ARestoredStoreThatDiffersFromItsChangelogFailsStoreContents) {
  std::vector<events::Event> s = Plain();
  const size_t i = Find<events::RestoreEventMoved>(s, [](const events::RestoreEventMoved& m,
                                                         auto&) {
    return m.drained && m.event.kind == RestoreEvent::Kind::kRestored && m.event.task &&
           m.event.state && m.event.state->stores_read && HasStoreWithData(*m.event.state);
  });
  ASSERT_LT(i, s.size());
  FirstStoreWithData(*As<events::RestoreEventMoved>(s[i])->event.state)->data.begin()->second =
      kNeverWritten;
  ExpectBreaks(Plain(), s, "store_contents");
}

// errors: an event the restore thread emitted never reaches its stream thread.
TEST_F(RealThreadOracleTest, AnEventLostBetweenTheThreadsFailsErrors) {
  std::vector<events::Event> s = Plain();
  const size_t i = Find<events::RestoreEventMoved>(
      s, [](const events::RestoreEventMoved& m, auto&) { return m.drained; });
  ASSERT_LT(i, s.size());
  s.erase(s.begin() + static_cast<ptrdiff_t>(i));
  ExpectBreaks(Plain(), s, "errors");
}

// restore_progress: a changelog completes one record before the end offset it reports.
TEST_F(RealThreadOracleTest, ACompletionBeforeTheEndOffsetFailsRestoreProgress) {
  std::vector<events::Event> s = Plain();
  const size_t i = Find<events::Completed>(s, kAny);
  ASSERT_LT(i, s.size());
  events::Completed& completed = *As<events::Completed>(s[i]);
  completed.end_offset = completed.position + 1;
  ExpectBreaks(Plain(), s, "restore_progress");
}

// standby_progress: a restore thread publishes one standby record more than its reader restored.
TEST_F(RealThreadOracleTest, StandbyProgressAheadOfTheReaderFailsStandbyProgress) {
  std::vector<events::Event> s = Plain();
  const size_t i = Find<events::StandbyProgressPublished>(s, kAny);
  ASSERT_LT(i, s.size());
  As<events::StandbyProgressPublished>(s[i])->records += 1;
  ExpectBreaks(Plain(), s, "standby_progress");
}

// checkpoint_restore (the run with a cycle): a stream thread runs a loop while its instance
// is frozen (a copy of its first loop after the freeze, placed right after the freeze).
TEST_F(RealThreadOracleTest, AStreamLoopWhileFrozenFailsCheckpointRestore) {
  std::vector<events::Event> s = WithCycle();
  const size_t frozen = Find<events::CheckpointNoticed>(
      s, [](const events::CheckpointNoticed& n, auto&) {
        return n.notice == CheckpointNotice::kFrozen;
      });
  ASSERT_LT(frozen, s.size());
  const size_t loop = Find<events::StreamLoopBegan>(s, kAny, frozen);
  ASSERT_LT(loop, s.size());
  s.insert(s.begin() + static_cast<ptrdiff_t>(frozen) + 1, s[loop]);
  ExpectBreaks(WithCycle(), s, "checkpoint_restore");
}

// eos_checkpoint (judged on real threads too; the run is at-least-once): the first records
// processed are marked exactly-once while the checkpoint its restoration wrote is on disk (an
// exactly-once run that forgot to delete it before processing).
TEST_F(RealThreadOracleTest, ProcessingUnderExactlyOnceOverACheckpointFailsEosCheckpoint) {
  std::vector<events::Event> s = Plain();
  const size_t i = Find<events::Processed>(
      s, [](const events::Processed& p, auto&) { return p.records > 0; });
  ASSERT_LT(i, s.size());
  As<events::Processed>(s[i])->task.exactly_once = true;
  ExpectBreaks(Plain(), s, "eos_checkpoint");
}

// Through the file format and back: the same events, judged the same.
TEST_F(RealThreadOracleTest, ARealThreadStreamSurvivesTheFileFormat) {
  const Recording& run = Recorded(false);
  std::stringstream file;
  events::EventStreamWriter writer(file);
  for (const events::Event& e : run.events) writer.OnEvent(e);
  events::EventFileReader reader(file);
  ASSERT_TRUE(reader.Open().ok());
  properties::StandaloneJudge judge;
  size_t read = 0;
  for (;;) {
    absl::StatusOr<std::optional<events::Event>> e = reader.Next();
    ASSERT_TRUE(e.ok()) << e.status();
    if (!e->has_value()) break;
    ASSERT_LT(read, run.events.size());
    EXPECT_EQ(events::EncodeEvent(**e), events::EncodeEvent(run.events[read]));
    ++read;
    judge.OnEvent(**e);
  }
  EXPECT_EQ(read, run.events.size());
  EXPECT_FALSE(judge.failure().has_value());
  EXPECT_EQ(judge.oracle().counts().events, run.events_judged);
}

}  // namespace
}  // namespace restoresim
