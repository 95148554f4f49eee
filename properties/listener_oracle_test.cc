// The oracle's listener_pairing invariant for the standby update listener (KIP-988) and the
// restore listener's type rule: each is violated on purpose by reporting wrong listener calls
// for a standby registered with a restore thread "restore", and the run must fail naming it;
// the silence Kafka keeps at shutdown passes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "properties/oracle.h"
#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim::properties {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using restoresim::testing::Changelog;
using restoresim::testing::RuntimeWorld;

sim::TestRun RunSim(std::function<void()> body) { return sim::RunUnderSim(std::move(body), 7); }

// A standby of partition 2 held and registered by the restore thread "restore".
TaskIncarnation RegisterStandby(const Task& task) {
  RS_OBSERVE(OnHandOff, "restore", task.incarnation(), TaskHolder::kStreamThread,
             TaskHolder::kToRestore);
  RS_OBSERVE(OnHandOff, "restore", task.incarnation(), TaskHolder::kToRestore,
             TaskHolder::kRestoreThread);
  RS_OBSERVE(OnRegistered, "restore", Changelog(2), task.incarnation(), TaskType::kStandby);
  return task.incarnation();
}

void ExpectViolation(const sim::TestRun& r, std::string_view detail) {
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:listener_pairing]"));
  EXPECT_THAT(r.outcome.message, HasSubstr(detail));
}

TEST(ListenerOracleTest, StandbySuspendedTwiceIsCaught) {
  ExpectViolation(RunSim([] {
                    RuntimeWorld w(/*faults=*/false);
                    auto task = w.NewTask(2, TaskType::kStandby);
                    RegisterStandby(*task);
                    RS_OBSERVE(OnListener, "restore", Changelog(2), ListenerCall::kStandbyStart);
                    RS_OBSERVE(OnListener, "restore", Changelog(2),
                               ListenerCall::kStandbySuspended);
                    RS_OBSERVE(OnListener, "restore", Changelog(2),
                               ListenerCall::kStandbySuspended);
                  }),
                  "suspended without a start");
}

TEST(ListenerOracleTest, StandbyStartedTwiceIsCaught) {
  ExpectViolation(RunSim([] {
                    RuntimeWorld w(/*faults=*/false);
                    auto task = w.NewTask(2, TaskType::kStandby);
                    RegisterStandby(*task);
                    RS_OBSERVE(OnListener, "restore", Changelog(2), ListenerCall::kStandbyStart);
                    RS_OBSERVE(OnListener, "restore", Changelog(2), ListenerCall::kStandbyStart);
                  }),
                  "started twice");
}

TEST(ListenerOracleTest, StandbyBatchBeforeItsStartIsCaught) {
  ExpectViolation(RunSim([] {
                    RuntimeWorld w(/*faults=*/false);
                    auto task = w.NewTask(2, TaskType::kStandby);
                    RegisterStandby(*task);
                    RS_OBSERVE(OnListener, "restore", Changelog(2), ListenerCall::kStandbyBatch);
                  }),
                  "batch loaded without a start");
}

TEST(ListenerOracleTest, StandbyUnregisteredWithoutSuspendedIsCaught) {
  ExpectViolation(RunSim([] {
                    RuntimeWorld w(/*faults=*/false);
                    auto task = w.NewTask(2, TaskType::kStandby);
                    const TaskIncarnation who = RegisterStandby(*task);
                    RS_OBSERVE(OnListener, "restore", Changelog(2), ListenerCall::kStandbyStart);
                    RS_OBSERVE(OnUnregistered, "restore", Changelog(2), who);
                  }),
                  "stopped without update suspended");
}

TEST(ListenerOracleTest, StandbyStartedAndNeverSuspendedIsCaughtAtTheEnd) {
  ExpectViolation(RunSim([] {
                    RuntimeWorld w(/*faults=*/false);
                    auto task = w.NewTask(2, TaskType::kStandby);
                    const TaskIncarnation who = RegisterStandby(*task);
                    RS_OBSERVE(OnListener, "restore", Changelog(2), ListenerCall::kStandbyStart);
                    // Its reader goes away without unregistering it; the task is handed back.
                    RS_OBSERVE(OnReaderDestroyed, "restore");
                    RS_OBSERVE(OnHandOff, "restore", who, TaskHolder::kRestoreThread,
                               TaskHolder::kFromRestore);
                    RS_OBSERVE(OnHandOff, "restore", who, TaskHolder::kFromRestore,
                               TaskHolder::kStreamThread);
                    RS_CHECK(task->state_manager().Close(/*clean=*/true).ok());
                    task->TransitionTo(TaskState::kClosed);
                    w.oracle.CheckFinal();  // as a scenario does at its end
                  }),
                  "started and never suspended");
}

TEST(ListenerOracleTest, RestoreListenerToldAboutAStandbyIsCaught) {
  ExpectViolation(RunSim([] {
                    RuntimeWorld w(/*faults=*/false);
                    auto task = w.NewTask(2, TaskType::kStandby);
                    RegisterStandby(*task);
                    RS_OBSERVE(OnListener, "restore", Changelog(2), ListenerCall::kStart);
                  }),
                  "the restore listener was told about standby changelog");
}

TEST(ListenerOracleTest, StandbyLeftSilentlyAsItsRestoreThreadStopsPasses) {
  const sim::TestRun r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(2, TaskType::kStandby);
    const TaskIncarnation who = RegisterStandby(*task);
    RS_OBSERVE(OnListener, "restore", Changelog(2), ListenerCall::kStandbyStart);
    RS_OBSERVE(OnListener, "restore", Changelog(2), ListenerCall::kStandbyBatch);
    RS_OBSERVE(OnRestoreShutdownRequested, "restore");
    RS_OBSERVE(OnUnregistered, "restore", Changelog(2), who);
    RS_OBSERVE(OnHandOff, "restore", who, TaskHolder::kRestoreThread, TaskHolder::kFromRestore);
    RS_OBSERVE(OnHandOff, "restore", who, TaskHolder::kFromRestore, TaskHolder::kStreamThread);
  });
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
}

}  // namespace
}  // namespace restoresim::properties
