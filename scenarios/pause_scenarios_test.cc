// Pause and resume of a topology's tasks (KIP-834) against the fake broker under the simulator:
// the restore thread's paused set (as Kafka's DefaultStateUpdaterTest pins down pauseTask /
// resumeTask), the stream thread's paused running actives, and the Runtime's API.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/runtime/restore_thread.h"
#include "core/runtime/runtime.h"
#include "core/runtime/stream_thread.h"
#include "core/state/checkpoint_file.h"
#include "core/transport/transport_wrapper.h"
#include "fakes/fake_broker_test_util.h"
#include "scenarios/restore_thread_test_util.h"
#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using ::testing::Contains;
using testing::Changelog;
using testing::Create;
using testing::Items;
using testing::Input;
using testing::RuntimeWorld;

// Counts what the reader tells the listener (called on the restore thread; read by the test on
// the same OS thread under the simulator).
struct CountingListener final : StateRestoreListener {
  void OnRestoreStart(const TopicPartition&, std::string_view, int64_t start, int64_t) override {
    starts.push_back(start);
  }
  void OnBatchRestored(const TopicPartition&, std::string_view, int64_t, int64_t n) override {
    restored += n;
    ++batches;
  }
  void OnRestoreEnd(const TopicPartition&, std::string_view, int64_t) override { ++ends; }
  void OnRestoreSuspended(const TopicPartition&, std::string_view, int64_t) override {
    ++suspended;
  }
  std::vector<int64_t> starts;
  int64_t restored = 0;
  int64_t batches = 0;
  int ends = 0;
  int suspended = 0;
};

// Drains events until `n` arrived or virtual time passes `timeout_ns`.
std::vector<RestoreEvent> AwaitEvents(RuntimeWorld& w, RestoreThread& rt, size_t n,
                                     TimeNs timeout_ns = 30 * kSecond) {
  return testing::WaitEvents(w, rt, n, timeout_ns, /*poll_ns=*/5 * kMillisecond);
}

// Closes what came back (the oracle wants every task closed at the end).
void CloseAll(std::vector<RestoreEvent>& events) {
  for (RestoreEvent& e : events) {
    if (e.task == nullptr) continue;
    if (e.task->state() != TaskState::kSuspended) e.task->TransitionTo(TaskState::kSuspended);
    RS_CHECK(e.task->state_manager().Close(/*clean=*/true).ok());
    e.task->TransitionTo(TaskState::kClosed);
  }
}

RestoreThreadConfig PausableConfig(const TopologyPause& pause) {
  RestoreThreadConfig c{.name = "restore", .max_poll_records = 10};
  c.pause = &pause;
  return c;
}

void ExpectOk(const sim::TestRun& r) { ASSERT_TRUE(r.outcome.ok()) << r.outcome.message; }

// A run that keeps its trace's marks, for the coverage marks a test asserts (tools/tidy).
sim::SimOptions FullTrace() {
  sim::SimOptions options;
  options.trace_mode = sim::TraceMode::kFull;
  return options;
}

constexpr int kLong = 400;  // records of a changelog that takes a while to restore

TEST(RestoreThreadPauseTest, PausedTaskLeavesTheReaderAndKeepsItsStores) {
  for (uint64_t seed = 0; seed < 6; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false);
      w.WriteChangelog(0, kLong);
      TopologyPause pause;
      CountingListener listener;
      RestoreThread rt(w.broker, w.clock, &listener, PausableConfig(pause));
      rt.Start();
      ASSERT_TRUE(rt.AddItems(Items(Create(w.NewTask(0, TaskType::kActive))), nullptr));
      w.clock.SleepFor(10 * kMillisecond);
      pause.Set(true, {"restore"});
      w.clock.SleepFor(200 * kMillisecond);  // long enough for the pause to be taken up
      const int64_t restored_when_paused = listener.restored;
      EXPECT_EQ(rt.PausedActives(), 1);
      EXPECT_EQ(rt.PausedStandbys(), 0);
      EXPECT_EQ(listener.suspended, listener.starts.size() > 0 ? 1 : 0)
          << "its changelog left the reader";
      w.clock.SleepFor(2 * kSecond);
      EXPECT_EQ(listener.restored, restored_when_paused) << "nothing restored while paused";
      EXPECT_LT(listener.restored, kLong);
      ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
      std::vector<RestoreEvent> events = rt.DrainEvents();
      ASSERT_EQ(events.size(), 1u);
      EXPECT_EQ(events[0].kind, RestoreEvent::Kind::kRemoved) << "handed back at shutdown";
      EXPECT_TRUE(events[0].task->state_manager().registered()) << "its stores stayed open";
      EXPECT_EQ(rt.PausedActives(), 0);
      CloseAll(events);
    }, seed));
  }
}

TEST(RestoreThreadPauseTest, PausedTaskIsCheckpointed) {
  for (uint64_t seed = 0; seed < 6; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false);
      w.WriteChangelog(1, kLong);
      TopologyPause pause;
      CountingListener listener;
      RestoreThreadConfig config = PausableConfig(pause);
      config.checkpoint_interval_ns = 3600 * kSecond;  // no periodic checkpoint in the way
      RestoreThread rt(w.broker, w.clock, &listener, config);
      rt.Start();
      std::unique_ptr<Task> task = w.NewTask(1, TaskType::kStandby);
      const std::string path = task->state_manager().checkpoint_path();
      ASSERT_TRUE(rt.AddItems(Items(Create(std::move(task))), nullptr));
      w.clock.SleepFor(10 * kMillisecond);
      pause.Set(true, {"restore"});
      w.clock.SleepFor(200 * kMillisecond);
      ASSERT_EQ(rt.PausedStandbys(), 1);
      absl::StatusOr<CheckpointOffsets> written = ReadCheckpoint(w.fs, path);
      ASSERT_TRUE(written.ok()) << written.status();
      ASSERT_TRUE(written->contains(Changelog(1))) << "the pause wrote its position";
      EXPECT_GT(rt.StandbyRecordsUpdated(), 0);
      EXPECT_EQ(written->at(Changelog(1)), rt.StandbyRecordsUpdated())
          << "everything it updated (a standby's records are not told to the listener)";
      ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
      std::vector<RestoreEvent> events = rt.DrainEvents();
      CloseAll(events);
    }, seed));
  }
}

TEST(RestoreThreadPauseTest, ResumedTaskRestoresFromWhereItPaused) {
  for (uint64_t seed = 0; seed < 6; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false);
      w.WriteChangelog(2, kLong);
      TopologyPause pause;
      CountingListener listener;
      RestoreThread rt(w.broker, w.clock, &listener, PausableConfig(pause));
      rt.Start();
      ASSERT_TRUE(rt.AddItems(Items(Create(w.NewTask(2, TaskType::kActive))), nullptr));
      w.clock.SleepFor(15 * kMillisecond);
      pause.Set(true, {"restore"});
      w.clock.SleepFor(200 * kMillisecond);
      const int64_t restored_when_paused = listener.restored;
      ASSERT_GT(restored_when_paused, 0) << "it restored something before the pause";
      ASSERT_LT(restored_when_paused, kLong);
      pause.Set(false, {"restore"});
      std::vector<RestoreEvent> events = AwaitEvents(w, rt, 1);
      ASSERT_EQ(events.size(), 1u);
      ASSERT_EQ(events[0].kind, RestoreEvent::Kind::kRestored);
      EXPECT_EQ(*events[0].task->state_manager().StoreForChangelog(Changelog(2))->ReadAll(),
                w.Fold(2));
      EXPECT_EQ(listener.restored, kLong) << "every record restored once: none again";
      ASSERT_EQ(listener.starts.size(), 2u) << "started, suspended by the pause, started again";
      EXPECT_EQ(listener.starts[1], restored_when_paused) << "from where it paused";
      EXPECT_EQ(rt.PausedActives(), 0);
      ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
      CloseAll(events);
    }, seed));
  }
}

TEST(RestoreThreadPauseTest, RemovingAPausedTaskHandsItBack) {
  for (uint64_t seed = 0; seed < 6; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false);
      w.WriteChangelog(0, kLong);
      w.WriteChangelog(1, 20);
      TopologyPause pause;
      RestoreThread rt(w.broker, w.clock, nullptr, PausableConfig(pause));
      rt.Start();
      std::vector<TaskItem> round;
      round.push_back(Create(w.NewTask(0, TaskType::kActive)));
      round.push_back(Create(w.NewTask(1, TaskType::kStandby)));
      const TaskIncarnation standby = round[1].incarnation;
      ASSERT_TRUE(rt.AddItems(std::move(round), nullptr));
      w.clock.SleepFor(10 * kMillisecond);
      pause.Set(true, {"restore"});
      w.clock.SleepFor(200 * kMillisecond);
      ASSERT_EQ(rt.PausedActives() + rt.PausedStandbys(), 2);
      TaskItem close;
      close.kind = TaskItem::Kind::kClose;
      close.incarnation = standby;
      ASSERT_TRUE(rt.AddItems(Items(std::move(close)), nullptr));
      std::vector<RestoreEvent> events = AwaitEvents(w, rt, 1);
      ASSERT_EQ(events.size(), 1u);
      EXPECT_EQ(events[0].kind, RestoreEvent::Kind::kRemoved);
      EXPECT_EQ(events[0].incarnation, standby);
      EXPECT_EQ(events[0].task->state(), TaskState::kSuspended);
      w.clock.SleepFor(200 * kMillisecond);
      EXPECT_EQ(rt.PausedStandbys(), 0);
      EXPECT_EQ(rt.PausedActives(), 1);
      ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
      for (RestoreEvent& e : rt.DrainEvents()) events.push_back(std::move(e));
      EXPECT_EQ(events.size(), 2u) << "the paused active comes back at shutdown";
      CloseAll(events);
    }, seed));
  }
}

// A restore consumer that refuses to change its assignment (PERMISSION_DENIED, a fatal error
// of the reader's step: task-less) once `refuse` is set; everything else goes to the broker.
class RefusingConsumer final : public RestoreConsumerWrapper {
 public:
  RefusingConsumer(std::unique_ptr<RestoreConsumer> inner, const Atomic<bool>& refuse)
      : RestoreConsumerWrapper(std::move(inner)), refuse_(refuse) {}
  absl::Status Assign(const std::vector<TopicPartition>& partitions) override {
    return refuse_.Load() ? Refused() : RestoreConsumerWrapper::Assign(partitions);
  }
  absl::Status Unassign() override {
    return refuse_.Load() ? Refused() : RestoreConsumerWrapper::Unassign();
  }

 private:
  static absl::Status Refused() { return absl::PermissionDeniedError("assignment refused"); }
  const Atomic<bool>& refuse_;
};

class RefusingTransport final : public TransportWrapper {
 public:
  RefusingTransport(Transport& inner, const Atomic<bool>& refuse)
      : TransportWrapper(&inner), refuse_(refuse) {}
  std::unique_ptr<RestoreConsumer> NewRestoreConsumer(const ConsumerConfig& config) override {
    return std::make_unique<RefusingConsumer>(target()->NewRestoreConsumer(config), refuse_);
  }

 private:
  const Atomic<bool>& refuse_;
};

// Kafka's DefaultStateUpdater fails the paused tasks too on an error that names no task
// (addToExceptionsAndFailedTasksThenClearUpdatingAndPausedTasks). Here the pause unassigns the
// task's changelog; the consumer refuses, so the next step fails task-less while the task is
// paused: it comes back failed with its error, not left paused behind a task-less report.
TEST(RestoreThreadPauseTest, ATaskLessErrorFailsThePausedTasksToo) {
  for (uint64_t seed = 0; seed < 6; ++seed) {
    const sim::TestRun r = sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false);
      w.WriteChangelog(0, kLong);
      TopologyPause pause;
      Atomic<bool> refuse(false);
      RefusingTransport transport(w.broker, refuse);
      RestoreThread rt(transport, w.clock, nullptr, PausableConfig(pause));
      rt.Start();
      std::unique_ptr<Task> task = w.NewTask(0, TaskType::kActive);
      const TaskIncarnation who = task->incarnation();
      ASSERT_TRUE(rt.AddItems(Items(Create(std::move(task))), nullptr));
      w.clock.SleepFor(10 * kMillisecond);
      refuse.Store(true);
      pause.Set(true, {"restore"});
      std::vector<RestoreEvent> events = AwaitEvents(w, rt, 1);
      ASSERT_EQ(events.size(), 1u);
      EXPECT_EQ(events[0].kind, RestoreEvent::Kind::kFailed);
      EXPECT_TRUE(absl::IsPermissionDenied(events[0].error)) << events[0].error;
      EXPECT_EQ(events[0].incarnation, who) << "the paused task fails with the error";
      ASSERT_NE(events[0].task, nullptr);
      EXPECT_EQ(events[0].task->state(), TaskState::kSuspended);
      w.clock.SleepFor(200 * kMillisecond);
      EXPECT_EQ(rt.PausedActives(), 0) << "nothing stays paused";
      refuse.Store(false);
      ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
      for (RestoreEvent& e : rt.DrainEvents()) {
        // (Steps failing after it, with nothing owned, are task-less reports.)
        EXPECT_EQ(e.task, nullptr) << "the failed task came back twice";
        events.push_back(std::move(e));
      }
      CloseAll(events);
    }, seed, FullTrace());
    ExpectOk(r);
    EXPECT_THAT(fakes::MarkTexts(*r.sim), Contains("cover/restoration failed: task-less error"));
  }
}

TEST(RestoreThreadPauseTest, TaskAddedWhilePausedWaitsUnregisteredUntilResumed) {
  for (uint64_t seed = 0; seed < 6; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false);
      w.WriteChangelog(3, 50);
      TopologyPause pause;
      pause.Set(true, {"restore"});
      CountingListener listener;
      RestoreThread rt(w.broker, w.clock, &listener, PausableConfig(pause));
      rt.Start();
      ASSERT_TRUE(rt.AddItems(Items(Create(w.NewTask(3, TaskType::kActive))), nullptr));
      w.clock.SleepFor(1 * kSecond);
      EXPECT_EQ(listener.restored, 0);
      EXPECT_TRUE(listener.starts.empty()) << "never registered while paused";
      EXPECT_EQ(rt.PausedActives(), 1);
      pause.Set(false, {"restore"});
      std::vector<RestoreEvent> events = AwaitEvents(w, rt, 1);
      ASSERT_EQ(events.size(), 1u);
      EXPECT_EQ(events[0].kind, RestoreEvent::Kind::kRestored);
      EXPECT_EQ(listener.restored, 50);
      ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
      CloseAll(events);
    }, seed));
  }
}

// ---- the stream thread ----

TEST(StreamThreadPauseTest, PausedActiveProcessesNothingButIsCommitted) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, /*partitions=*/1);
      TopologyPause pause;
      StreamThreadConfig c = w.StreamConfig("stream-1");
      c.tasks.state_dir = "/state/app";
      c.commit_interval_ns = 500 * kMillisecond;
      c.tasks.pause = &pause;
      c.restore.pause = &pause;
      Atomic<uint64_t> incarnations(0);
      StreamThread st(c, w.broker, w.clock, nullptr, incarnations);
      ASSERT_TRUE(st.Subscribe().ok());
      const std::string member = w.broker.Members("app").at(0);
      ASSERT_TRUE(w.broker.Rebalance("app", {{member, testing::Assign({0}, {})}}).ok());
      for (int i = 0; i < 30; ++i) ASSERT_TRUE(w.broker.Append(Input(0), "k", "1", i).ok());
      for (int loop = 0; loop < 500 && st.records_processed() < 30; ++loop) {
        ASSERT_TRUE(st.RunOnce().ok());
      }
      ASSERT_EQ(st.records_processed(), 30);
      pause.Set(true, {"stream-1", "stream-1-restore"});
      for (int i = 30; i < 60; ++i) ASSERT_TRUE(w.broker.Append(Input(0), "k", "1", i).ok());
      const TimeNs until = w.clock.NowNs() + 2 * kSecond;  // past several commit intervals
      while (w.clock.NowNs() < until) ASSERT_TRUE(st.RunOnce().ok());
      EXPECT_EQ(st.records_processed(), 30) << "nothing processed while paused";
      EXPECT_EQ(st.task_manager().paused_running(), (std::set<TaskId>{{0, 0}}));
      EXPECT_EQ(w.broker.CommittedOffsets("app")[Input(0)], 30) << "committed while paused";
      pause.Set(false, {"stream-1", "stream-1-restore"});
      for (int loop = 0; loop < 500 && st.records_processed() < 60; ++loop) {
        ASSERT_TRUE(st.RunOnce().ok());
      }
      EXPECT_EQ(st.records_processed(), 60) << "processing goes on where it stopped";
      EXPECT_TRUE(st.task_manager().paused_running().empty());
      auto counts = st.task_manager().RunningStoreContents({0, 0});
      ASSERT_TRUE(counts.ok());
      EXPECT_EQ(counts->at("k"), "60");
      ASSERT_TRUE(st.Shutdown(10 * kSecond).ok());
    }, seed));
  }
}

// ---- input partitions (Kafka's updateInputPartitions): fixed here ----

// An assignment naming a partition of a topic the topology does not read would change some
// task's input partitions: the task manager reports it as an error and makes no task of it.
TEST(StreamThreadInputPartitionsTest, APartitionOfAnotherTopicIsAnErrorNotATask) {
  const sim::TestRun r = sim::RunUnderSim([&]() {
    RuntimeWorld w(/*faults=*/false, /*partitions=*/2);
    ASSERT_TRUE(w.broker.CreateTopic("other", 2).ok());
    StreamThreadConfig c = w.StreamConfig("stream-1");
    c.tasks.state_dir = "/state/app";
    Atomic<uint64_t> incarnations(0);
    StreamThread st(c, w.broker, w.clock, nullptr, incarnations);
    ASSERT_TRUE(st.Subscribe().ok());
    Assignment a = testing::Assign({0}, {});
    a.partitions.push_back({"other", 1});
    const std::string member = w.broker.Members("app").at(0);
    ASSERT_TRUE(w.broker.Rebalance("app", {{member, a}}).ok());
    for (int loop = 0; loop < 50; ++loop) ASSERT_TRUE(st.RunOnce().ok());
    EXPECT_EQ(st.task_manager().wanted_active(), (std::set<TaskId>{{0, 0}}));
    bool reported = false;
    for (const absl::Status& e : st.task_manager().errors()) {
      reported |= absl::IsInvalidArgument(e) &&
                  std::string(e.message()).find("a task's input partitions cannot change") !=
                      std::string::npos;
    }
    EXPECT_TRUE(reported);
    EXPECT_EQ(st.task_manager().running(), (std::set<TaskId>{{0, 0}}));
    ASSERT_TRUE(st.Shutdown(10 * kSecond).ok());
  }, /*seed=*/1, FullTrace());
  ExpectOk(r);
  EXPECT_THAT(fakes::MarkTexts(*r.sim),
              Contains("cover/assignment names a partition of another topic"));
}

// ---- the runtime's API ----

TEST(RuntimePauseTest, PauseNamesItsTopologyAndRefusesOthers) {
  ExpectOk(sim::RunUnderSim([&]() {
    RuntimeWorld w(/*faults=*/false);
    RuntimeConfig config{.application_id = "app", .input_topic = "input"};
    config.topology_name = "counts-topology";
    Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
    EXPECT_FALSE(runtime.IsPaused());
    EXPECT_TRUE(absl::IsNotFound(runtime.PauseTopology("other")));
    EXPECT_TRUE(absl::IsNotFound(runtime.ResumeTopology("")));
    EXPECT_TRUE(absl::IsNotFound(runtime.IsTopologyPaused("other").status()));
    ASSERT_TRUE(runtime.PauseTopology("counts-topology").ok());
    EXPECT_TRUE(*runtime.IsTopologyPaused("counts-topology"));
    EXPECT_TRUE(runtime.IsPaused());
    runtime.Resume();
    EXPECT_FALSE(runtime.IsPaused());
    runtime.Pause();
    EXPECT_TRUE(*runtime.IsTopologyPaused("counts-topology"));
  }));
}

// KafkaStreams.pause() on a running client: its tasks restore and process nothing, yet commit;
// resume() and it goes on where it stopped, counting every record once.
TEST(RuntimePauseTest, APausedRuntimeRestoresAndProcessesNothingUntilResumed) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    sim::TestRun r = sim::RunUnderSim([&]() {
      constexpr int32_t kPartitions = 2;
      RuntimeWorld w(/*faults=*/false, kPartitions);
      for (int32_t p = 0; p < kPartitions; ++p) w.WriteChangelog(p, 300);
      RuntimeConfig config{.application_id = "app", .input_topic = "input",
                           .num_stream_threads = 2, .state_dir = "/state",
                           .commit_interval_ms = 100, .poll_ms = 20,
                           .restore_max_poll_records = 10};
      Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
      runtime.Pause();  // before Start: the threads start paused
      ASSERT_TRUE(runtime.Start().ok());
      for (int32_t p = 0; p < kPartitions; ++p) {
        for (int i = 0; i < 20; ++i) ASSERT_TRUE(w.broker.Append(Input(p), "k", "1", i).ok());
      }
      w.clock.SleepFor(3 * kSecond);
      RuntimeMetrics m = runtime.Metrics();
      EXPECT_EQ(m.records_restored, 0) << "nothing restored while paused";
      EXPECT_EQ(m.records_processed, 0);
      EXPECT_EQ(runtime.state(), RuntimeState::kRebalancing)
          << "paused restoring actives hold RUNNING back (docs/DESIGN.md: a departure)";
      int64_t paused_actives = 0;
      for (size_t i = 0; i < runtime.thread_count(); ++i) {
        paused_actives += runtime.thread(i).restore_thread().PausedActives();
      }
      EXPECT_EQ(paused_actives, kPartitions);
      runtime.Resume();
      const TimeNs deadline = w.clock.NowNs() + 60 * kSecond;
      while (w.clock.NowNs() < deadline && runtime.Metrics().records_processed < 2 * 20) {
        w.clock.SleepFor(50 * kMillisecond);
      }
      m = runtime.Metrics();
      EXPECT_EQ(m.records_restored, 2 * 300) << "every record restored once";
      EXPECT_EQ(m.records_processed, 2 * 20);
      ASSERT_TRUE(runtime.Close(30 * kSecond).ok());
    }, seed, sim::SimOptions{.steps_max = 5'000'000});
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
  }
}

TEST(RuntimePauseTest, AnInvalidTopologyNameIsAConfigError) {
  RuntimeConfig config{.application_id = "app", .input_topic = "input"};
  config.topology_name = "no spaces";
  absl::Status s = config.Validate();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("topology name"));
}

}  // namespace
}  // namespace restoresim
