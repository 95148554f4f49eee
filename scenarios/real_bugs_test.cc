// Regression tests for real bugs found by reading the runtime (issue 23, "four real bugs"), each
// written to fail on the code before its fix (the decision log in docs/DESIGN.md ties each fix
// to the test that showed it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/runtime/restore_thread.h"
#include "core/runtime/runtime.h"
#include "fakes/fake_broker.h"
#include "scenarios/restore_thread_test_util.h"
#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using testing::Create;
using testing::Items;
using testing::RuntimeWorld;

void ExpectOk(const sim::TestRun& r) { ASSERT_TRUE(r.outcome.ok()) << r.outcome.message; }

// Closes what came back (the oracle wants every task closed at the end).
void CloseAll(std::vector<RestoreEvent>& events) {
  for (RestoreEvent& e : events) {
    if (e.task == nullptr) continue;
    if (e.task->state() != TaskState::kSuspended) e.task->TransitionTo(TaskState::kSuspended);
    RS_CHECK(e.task->state_manager().Close(/*clean=*/true).ok());
    e.task->TransitionTo(TaskState::kClosed);
  }
}

// Bug 1: a changelog whose end offset cannot be read (its leader gone) stalled its whole
// restore thread when it arrived after another task was already restoring: the reader assigned
// the unprepared changelog to the restore consumer, every poll then failed for want of its
// position, the restore thread backed off as for a warning and dropped the step's stalled set,
// so the new task never started (or expired) its task.timeout.ms and the other task stopped
// restoring. Kafka adds a changelog to the restore consumer only once it is initialised.
TEST(RealBugsTest, AChangelogWithoutAnEndOffsetStallsOnlyItsOwnTask) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, /*partitions=*/2);
      w.WriteChangelog(0, 400);
      w.WriteChangelog(1, 10);
      RestoreThreadConfig c{.name = "restore", .task_timeout_ns = 2 * kSecond,
                            .max_poll_records = 10};
      RestoreThread rt(w.broker, w.clock, /*listener=*/nullptr, c);
      rt.Start();
      ASSERT_TRUE(rt.AddItems(Items(Create(w.NewTask(0, TaskType::kActive))), nullptr));
      w.clock.SleepFor(10 * kMillisecond);  // 0_0 restores
      w.broker.TakeLeaderAway(testing::Changelog(1), fakes::FakeBroker::kLeaderNeverBack);
      ASSERT_TRUE(rt.AddItems(Items(Create(w.NewTask(1, TaskType::kActive))), nullptr));
      std::vector<RestoreEvent> events;  // the tasks handed back (warnings counted apart)
      int warnings = 0;
      const TimeNs deadline = w.clock.NowNs() + 20 * kSecond;
      while (events.size() < 2 && w.clock.NowNs() < deadline) {
        for (RestoreEvent& e : rt.DrainEvents()) {
          if (e.task == nullptr) {
            ++warnings;
          } else {
            events.push_back(std::move(e));
          }
        }
        w.clock.SleepFor(10 * kMillisecond);
      }
      std::map<int32_t, RestoreEvent::Kind> kinds;
      for (const RestoreEvent& e : events) kinds[e.incarnation.id.partition] = e.kind;
      EXPECT_EQ(warnings, 0) << "failed steps: the restore consumer's polls failed";
      EXPECT_EQ(kinds.count(0), 1u) << "0_0 never finished restoring: the thread stalled";
      if (kinds.contains(0)) EXPECT_EQ(kinds.at(0), RestoreEvent::Kind::kRestored);
      EXPECT_EQ(kinds.count(1), 1u) << "0_1 never failed: its task.timeout.ms never ran";
      if (kinds.contains(1)) EXPECT_EQ(kinds.at(1), RestoreEvent::Kind::kFailed);
      for (const RestoreEvent& e : events) {
        if (e.kind == RestoreEvent::Kind::kFailed) {
          EXPECT_TRUE(absl::IsDeadlineExceeded(e.error)) << e.error;
        }
      }
      ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
      for (RestoreEvent& e : rt.DrainEvents()) events.push_back(std::move(e));
      CloseAll(events);
    }, seed));
  }
}

// Bug 2: a resume sent the restore thread no wake-up. A restore thread whose every task is
// paused has nothing to fetch and waits for work on its item queue; it saw the resume only when
// that wait ran out (idle_wait_ns), not when it happened. Kafka's KafkaStreams.resume() signals
// each state updater (DefaultStateUpdater.signalResume). Before the fix the restoration below
// began idle_wait_ns (10 s) after the resume.
TEST(RealBugsTest, AResumeWakesARestoreThreadWhoseTasksAreAllPaused) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false);
      w.WriteChangelog(1, 30);
      TopologyPause pause;
      RestoreThreadConfig c{.name = "restore", .idle_wait_ns = 10 * kSecond,
                            .max_poll_records = 10};
      c.pause = &pause;
      RestoreThread rt(w.broker, w.clock, /*listener=*/nullptr, c);
      pause.Set(true, {"restore"});
      rt.Start();
      ASSERT_TRUE(rt.AddItems(Items(Create(w.NewTask(1, TaskType::kActive))), nullptr));
      w.clock.SleepFor(15 * kSecond);  // long enough for it to wait idle
      ASSERT_EQ(rt.PausedActives(), 1);
      const TimeNs resumed_at = w.clock.NowNs();
      pause.Set(false, {"restore"});
      rt.SignalResume();
      std::vector<RestoreEvent> events =
          testing::WaitEvents(w, rt, 1, /*timeout_ns=*/30 * kSecond, /*poll_ns=*/kMillisecond);
      ASSERT_EQ(events.size(), 1u);
      EXPECT_EQ(events[0].kind, RestoreEvent::Kind::kRestored);
      EXPECT_LT(w.clock.NowNs() - resumed_at, 1 * kSecond)
          << "restored " << (w.clock.NowNs() - resumed_at) / kMillisecond
          << " ms after the resume: the resume did not wake the restore thread";
      ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
      CloseAll(events);
    }, seed));
  }
}

// Bug 2 through the Runtime's API: Runtime::Resume wakes its restore threads.
TEST(RealBugsTest, RuntimeResumeRestoresWithoutWaitingOutTheIdleWait) {
  for (uint64_t seed = 0; seed < 6; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, /*partitions=*/1);
      w.WriteChangelog(0, 40);
      RuntimeConfig config{.application_id = "app", .input_topic = "input",
                           .num_stream_threads = 1, .state_dir = "/state",
                           .commit_interval_ms = 100, .poll_ms = 20,
                           .restore_max_poll_records = 10};
      Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
      runtime.Pause();
      ASSERT_TRUE(runtime.Start().ok());
      w.clock.SleepFor(3 * kSecond);
      ASSERT_EQ(runtime.Metrics().records_restored, 0);
      const TimeNs resumed_at = w.clock.NowNs();
      runtime.Resume();
      while (runtime.Metrics().records_restored == 0 &&
             w.clock.NowNs() - resumed_at < 10 * kSecond) {
        w.clock.SleepFor(kMillisecond);
      }
      const TimeNs delay_ns = w.clock.NowNs() - resumed_at;
      EXPECT_GT(runtime.Metrics().records_restored, 0);
      // The restore thread's idle wait is 100 ms: a restoration starting more than a few
      // milliseconds after the resume waited part of it out.
      EXPECT_LT(delay_ns, 10 * kMillisecond)
          << "restoration began " << delay_ns / kMillisecond << " ms after the resume";
      ASSERT_TRUE(runtime.Close(30 * kSecond).ok());
    }, seed));
  }
}

// Bug 4: the restore thread's published task offset sums left out its paused tasks, so while
// they were paused the member reported, for them, the sums they had when handed over (stale:
// what they restored since was invisible to the Streams assignor).
TEST(RealBugsTest, PublishedOffsetSumsIncludePausedTasks) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false);
      w.WriteChangelog(2, 400);
      TopologyPause pause;
      RestoreThreadConfig c{.name = "restore", .max_poll_records = 10};
      c.pause = &pause;
      c.publish_offset_sums = true;
      RestoreThread rt(w.broker, w.clock, /*listener=*/nullptr, c);
      rt.Start();
      std::unique_ptr<Task> task = w.NewTask(2, TaskType::kActive);
      const TaskIncarnation who = task->incarnation();
      ASSERT_TRUE(rt.AddItems(Items(Create(std::move(task))), nullptr));
      w.clock.SleepFor(15 * kMillisecond);
      pause.Set(true, {"restore"});
      w.clock.SleepFor(500 * kMillisecond);  // paused, and several iterations since
      ASSERT_EQ(rt.PausedActives(), 1);
      const auto sums = rt.OwnedOffsetSums();
      ASSERT_TRUE(sums->contains(who)) << "the paused task's sum is not published";
      EXPECT_GT(sums->at(who), 0) << "what it restored before the pause counts";
      EXPECT_LT(sums->at(who), 400);
      ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
      std::vector<RestoreEvent> events = rt.DrainEvents();
      CloseAll(events);
    }, seed));
  }
}

// Bug 3: Runtime::Close moved the client to NOT_RUNNING although a stream thread had not stopped
// by the deadline, so a later close returned at once while the thread still ran. Kafka's
// close(timeout) returns false and the client stays PENDING_SHUTDOWN until its threads stop;
// a later close waits for them. Here the stream thread is inside a revocation whose commit
// retries while the changelog's leader is away (for 20 s), longer than the first close's 1 s.
TEST(RealBugsTest, ACloseThatTimesOutLeavesTheClientPendingShutdownUntilItsThreadsStop) {
  for (uint64_t seed = 0; seed < 3; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, /*partitions=*/1);
      RuntimeConfig config{.application_id = "app", .input_topic = "input",
                           .num_stream_threads = 1, .state_dir = "/state",
                           .commit_interval_ms = 100, .poll_ms = 20};
      Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
      ASSERT_TRUE(runtime.Start().ok());
      while (runtime.state() != RuntimeState::kRunning) w.clock.SleepFor(10 * kMillisecond);
      const TimeNs away_until = w.clock.NowNs() + 20 * kSecond;
      w.broker.TakeLeaderAway(testing::Changelog(0), away_until);
      for (int i = 0; i < 5; ++i) ASSERT_TRUE(w.broker.Append(testing::Input(0), "k", "1", i).ok());
      w.clock.SleepFor(500 * kMillisecond);  // processed; its changelog writes cannot flush
      // Revoked: the thread commits inside its poll, retrying until the leader is back.
      const std::string member = w.broker.Members("app").at(0);
      ASSERT_TRUE(w.broker.Rebalance("app", {{member, testing::Assign({}, {})}}).ok());
      w.clock.SleepFor(200 * kMillisecond);
      const absl::Status first = runtime.Close(1 * kSecond);
      EXPECT_TRUE(absl::IsDeadlineExceeded(first)) << first;
      EXPECT_THAT(std::string(first.message()), ::testing::HasSubstr("stays PENDING_SHUTDOWN"));
      EXPECT_LT(w.clock.NowNs(), away_until) << "the first close returned before the leader";
      EXPECT_EQ(runtime.state(), RuntimeState::kPendingShutdown)
          << "a close that timed out leaves the client PENDING_SHUTDOWN";
      const absl::Status second = runtime.Close(60 * kSecond);
      EXPECT_TRUE(second.ok()) << second;
      EXPECT_GE(w.clock.NowNs(), away_until) << "the second close waited for the thread";
      EXPECT_EQ(runtime.state(), RuntimeState::kNotRunning);
    }, seed));
  }
}

}  // namespace
}  // namespace restoresim
