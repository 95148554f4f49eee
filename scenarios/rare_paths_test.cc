// Paths of the runtime that no catalogue story reaches within the coverage budget, each driven
// here directly and judged by what it must do — and by its coverage mark, which tools/tidy
// requires some test to assert (issue 20: "every coverage mark asserted by a test").
#include <gtest/gtest.h>

#include <string>

#include "core/runtime/hold_point.h"
#include "core/runtime/restore_thread.h"
#include "core/runtime/runtime.h"
#include "fakes/fake_broker.h"
#include "scenarios/failing_store.h"
#include "scenarios/restore_thread_test_util.h"
#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using testing::Create;
using testing::Items;
using testing::RuntimeWorld;

// Whether the run's trace holds a mark whose text contains `mark` ("kind/text").
bool TraceHasMark(const sim::TestRun& r, const std::string& mark) {
  const sim::Trace& trace = r.sim->trace();
  for (const sim::TraceEvent& e : trace.events()) {
    if (e.kind != sim::TraceKind::kMark) continue;
    if (std::string(trace.MarkText(e.object)).find(mark) != std::string::npos) return true;
  }
  return false;
}

// A restore thread held at a checkpoint (CRaC) re-reads its changelogs' end offsets when it is
// let go, since the broker moved on while the instance was frozen. When that re-read fails
// (the changelog's leader is away at the restore), it is retried at the next steps, and the
// restoration still reaches the records written during the freeze: it never hands the task
// back restored to the end offset it read before the freeze.
TEST(RarePathsTest, AFailedEndOffsetReReadAfterARestoreIsRetried) {
  constexpr int kBeforeFreeze = 400;
  constexpr int kDuringFreeze = 200;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    int64_t restored_to = -1;
    const sim::TestRun r = sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, /*partitions=*/1);
      w.WriteChangelog(0, kBeforeFreeze);
      HoldPoint hold("restore");
      RestoreThreadConfig c{.name = "restore", .max_poll_records = 10, .hold = &hold};
      RestoreThread rt(w.broker, w.clock, /*listener=*/nullptr, c);
      rt.Start();
      ASSERT_TRUE(rt.AddItems(Items(Create(w.NewTask(0, TaskType::kActive))), nullptr));
      w.clock.SleepFor(10 * kMillisecond);  // restoring: its end offset (400) is read
      hold.Request();
      ASSERT_TRUE(hold.AwaitHeld().ok());
      // Frozen: the changelog grows, and at the restore its leader is away for a while.
      w.WriteChangelog(0, kDuringFreeze, /*start=*/kBeforeFreeze);
      w.broker.TakeLeaderAway(testing::Changelog(0), w.clock.NowNs() + 500 * kMillisecond);
      hold.Release();
      std::vector<RestoreEvent> events = testing::WaitEvents(w, rt, 1, 30 * kSecond);
      ASSERT_EQ(events.size(), 1u);
      ASSERT_EQ(events[0].kind, RestoreEvent::Kind::kRestored);
      Task& task = *events[0].task;
      restored_to = task.state_manager().pending_offsets().at(testing::Changelog(0));
      ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
      task.TransitionTo(TaskState::kSuspended);
      ASSERT_TRUE(task.state_manager().Close(/*clean=*/true).ok());
      task.TransitionTo(TaskState::kClosed);
    }, seed, sim::SimOptions{.trace_mode = sim::TraceMode::kFull});
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
    EXPECT_TRUE(TraceHasMark(r, "cover/end offsets re-read failed after a restore"))
        << "seed " << seed << ": the re-read did not fail";
    EXPECT_EQ(restored_to, kBeforeFreeze + kDuringFreeze)
        << "seed " << seed << ": restored to the end offset read before the freeze";
  }
}

// SHUTDOWN_CLIENT shuts the other threads down from the dying one with a 30 s deadline, and the
// client goes to ERROR even when one of them did not stop by then (Kafka's closeToError waits
// for every thread before ERROR: docs/DESIGN.md, "Kafka fidelity"). Here thread B is inside a
// revocation whose commit retries while its changelog's leader is away for 45 s when thread A's
// task fails. The client must still reach ERROR, a close from ERROR must then wait for B (the
// state directory is released only once every thread stopped), and ERROR stays ERROR.
TEST(RarePathsTest, AThreadThatDoesNotStopBeforeErrorIsWaitedForByClose) {
  for (uint64_t seed = 0; seed < 3; ++seed) {
    TimeNs error_at = -1;
    TimeNs closed_at = -1;
    TimeNs leader_back = -1;
    const sim::TestRun r = sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, /*partitions=*/2);
      w.WriteChangelog(0, 20);
      w.broker.SetManualAssignment("app", true);
      bool fail_now = false;  // read by the store on its restore thread (not a scheduling point)
      RuntimeConfig config{.application_id = "app", .input_topic = "input",
                           .num_stream_threads = 2, .state_dir = "/state",
                           .commit_interval_ms = 100, .poll_ms = 20};
      Runtime runtime(config, w.broker, w.clock, w.fs,
                      testing::FailingStoreOpener(w.LogStoreOpener(),
                                                  [&fail_now](const std::string& dir) {
                                                    return fail_now &&
                                                           testing::StoresOfTask(0)(dir);
                                                  }));
      ASSERT_TRUE(runtime.Start().ok());
      while (w.broker.Members("app").size() < 2) w.clock.SleepFor(10 * kMillisecond);
      const std::vector<std::string> members = w.broker.Members("app");
      ASSERT_TRUE(w.broker.Rebalance("app", {{members[1], testing::Assign({1}, {})}}).ok());
      while (runtime.state() != RuntimeState::kRunning) w.clock.SleepFor(10 * kMillisecond);
      leader_back = w.clock.NowNs() + 45 * kSecond;
      w.broker.TakeLeaderAway(testing::Changelog(1), leader_back);
      for (int i = 0; i < 5; ++i) ASSERT_TRUE(w.broker.Append(testing::Input(1), "k", "1", i).ok());
      w.clock.SleepFor(500 * kMillisecond);  // processed; its changelog writes cannot flush
      fail_now = true;
      // B's task is revoked (its commit retries until the leader is back); A's fails restoring.
      ASSERT_TRUE(w.broker.Rebalance("app", {{members[0], testing::Assign({0}, {})}}).ok());
      while (runtime.state() != RuntimeState::kError && w.clock.NowNs() < leader_back) {
        w.clock.SleepFor(10 * kMillisecond);
      }
      error_at = w.clock.NowNs();
      ASSERT_EQ(runtime.state(), RuntimeState::kError);
      const absl::Status closed = runtime.Close(60 * kSecond);
      closed_at = w.clock.NowNs();
      EXPECT_TRUE(closed.ok()) << closed;
      EXPECT_EQ(runtime.state(), RuntimeState::kError) << "ERROR stays ERROR";
      for (size_t i = 0; i < runtime.thread_count(); ++i) {
        EXPECT_EQ(runtime.thread(i).state(), StreamThreadState::kDead) << runtime.thread(i).name();
      }
    }, seed, sim::SimOptions{.steps_max = 5'000'000, .trace_mode = sim::TraceMode::kFull});
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
    EXPECT_TRUE(TraceHasMark(r, "cover/a thread did not stop before ERROR")) << "seed " << seed;
    EXPECT_LT(error_at, leader_back) << "seed " << seed << ": ERROR waited for the leader";
    EXPECT_GE(closed_at, leader_back) << "seed " << seed << ": the close did not wait for B";
  }
}

}  // namespace
}  // namespace restoresim
