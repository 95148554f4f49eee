// Tests of the invariant oracle: each invariant is violated on purpose, by driving the runtime's
// parts the wrong way or by reporting a wrong event, and the run must fail naming it; a correct
// run of the real runtime passes with the oracle watching.
#include "properties/oracle.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/runtime/restore_thread.h"
#include "core/util/prng.h"
#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim::properties {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using restoresim::testing::Changelog;
using restoresim::testing::ChangelogOf;
using restoresim::testing::RuntimeWorld;

sim::TestRun RunSim(std::function<void()> body) { return sim::RunUnderSim(std::move(body), 7); }

// Reports the hand-off of a task to the restore thread "restore" (as if it had been sent).
void HandToTheRestoreThread(const Task& task) {
  RS_OBSERVE(OnHandOff, "restore", task.incarnation(), TaskHolder::kStreamThread,
             TaskHolder::kToRestore);
  RS_OBSERVE(OnHandOff, "restore", task.incarnation(), TaskHolder::kToRestore,
             TaskHolder::kRestoreThread);
}

TEST(OracleTest, TwoOpenIncarnationsOfOneTaskDirectory) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto a = w.NewTask(1, TaskType::kActive);
    auto b = w.NewTask(1, TaskType::kActive);  // same directory, a is still open
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:single_owner] step "));
  EXPECT_THAT(r.outcome.message,
              HasSubstr("/state/app/0_1: stores opened while another incarnation of the task "
                        "has them open"));
}

TEST(OracleTest, TaskTouchedWhileInTheRestoreThreadsQueue) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(1, TaskType::kActive);
    Task* raw = task.get();
    RS_OBSERVE(OnHandOff, "restore", raw->incarnation(), TaskHolder::kStreamThread,
               TaskHolder::kToRestore);
    raw->TransitionTo(TaskState::kRestoring);  // the stream thread gave it away
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:single_owner]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("queue to the restore thread"));
}

TEST(OracleTest, HandOffFromTheWrongHolder) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(2, TaskType::kActive);
    RS_OBSERVE(OnHandOff, "restore", task->incarnation(), TaskHolder::kToRestore,
               TaskHolder::kRestoreThread);  // never handed in
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message,
              HasSubstr("moves from the queue to the restore thread to the restore thread, but "
                        "the stream thread holds it"));
}

// registration, held => registered: at the start of each iteration of a restore thread's loop,
// every changelog of a task it holds unpaused is registered there to that incarnation.
TEST(OracleTest, AHeldTaskWhoseChangelogWasNeverRegisteredIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(1, TaskType::kActive);
    task->TransitionTo(TaskState::kRestoring);
    HandToTheRestoreThread(*task);  // applied, but its changelog not registered
    RS_OBSERVE(OnRestoreLoop, "restore");
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:registration]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("held unpaused by restore when an iteration begins, "
                                           "but its changelog app-counts-changelog-1 is not "
                                           "registered there"));
}

TEST(OracleTest, AHeldTaskWhoseChangelogWasUnregisteredIsCaughtAtTheNextIteration) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(1, TaskType::kStandby);
    task->TransitionTo(TaskState::kRestoring);
    HandToTheRestoreThread(*task);
    RS_OBSERVE(OnRegistered, "restore", Changelog(1), task->incarnation(), task->type());
    RS_OBSERVE(OnRestoreLoop, "restore");  // fine: registered
    RS_OBSERVE(OnUnregistered, "restore", Changelog(1), task->incarnation());
    RS_OBSERVE(OnRestoreLoop, "restore");  // still held, not paused, nothing registered
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:registration]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("but its changelog app-counts-changelog-1 is not "
                                           "registered there"));
}

// A task the restore thread paused keeps nothing registered (restore_thread_pause.cc): fine.
TEST(OracleTest, APausedHeldTaskWithNothingRegisteredPasses) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(1, TaskType::kStandby);
    task->TransitionTo(TaskState::kRestoring);
    HandToTheRestoreThread(*task);
    RS_OBSERVE(OnRegistered, "restore", Changelog(1), task->incarnation(), task->type());
    RS_OBSERVE(OnRestoreLoop, "restore");
    RS_OBSERVE(OnUnregistered, "restore", Changelog(1), task->incarnation());
    RS_OBSERVE(OnTaskPaused, "restore", task->incarnation(), true);
    RS_OBSERVE(OnRestoreLoop, "restore");
    RS_OBSERVE(OnHandOff, "restore", task->incarnation(), TaskHolder::kRestoreThread,
               TaskHolder::kFromRestore);
    RS_OBSERVE(OnHandOff, "restore", task->incarnation(), TaskHolder::kFromRestore,
               TaskHolder::kStreamThread);
    task->TransitionTo(TaskState::kSuspended);
    ASSERT_TRUE(task->state_manager().Close(/*clean=*/false).ok());
    task->TransitionTo(TaskState::kClosed);
  });
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
}

// Drives a restore thread by hand: CREATE a task, let it restore, CLOSE it, CREATE it again.
TEST(OracleTest, RealRestoreThreadPassesAndChecksStoreContents) {
  int64_t store_checks = 0;
  auto r = RunSim([&] {
    RuntimeWorld w(/*faults=*/false);
    w.WriteChangelog(0, 30);
    RestoreThread rt(w.broker, w.clock, nullptr, {.name = "restore"});
    rt.Start();
    auto task = w.NewTask(0, TaskType::kActive);
    const TaskIncarnation who = task->incarnation();
    std::vector<TaskItem> round;
    round.push_back({.kind = TaskItem::Kind::kCreate, .incarnation = who, .task = std::move(task)});
    ASSERT_TRUE(rt.AddItems(std::move(round), nullptr));
    std::unique_ptr<Task> back;
    while (back == nullptr) {
      w.clock.SleepFor(10 * kMillisecond);
      for (RestoreEvent& e : rt.DrainEvents()) {
        if (e.kind == RestoreEvent::Kind::kRestored) back = std::move(e.task);
      }
    }
    back->TransitionTo(TaskState::kRunning);
    back->TransitionTo(TaskState::kSuspended);
    std::vector<TopicPartition> captured = back->state_manager().CaptureChangelogPartitions();
    ASSERT_TRUE(back->state_manager().Close(true).ok());
    back->state_manager().Clear();
    back->TransitionTo(TaskState::kClosed);
    std::vector<TaskItem> close;
    close.push_back({.kind = TaskItem::Kind::kClose, .incarnation = who, .changelogs = captured});
    ASSERT_TRUE(rt.AddItems(std::move(close), nullptr));
    ASSERT_TRUE(rt.Shutdown(10 * kSecond).ok());
    for (RestoreEvent& e : rt.DrainEvents()) (void)e;
    w.oracle.CheckFinal();
    store_checks = w.oracle.counts().store_checks;
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_GE(store_checks, 2);  // the checkpoint before the hand-back, and the restored store
}

TEST(OracleTest, StoreThatDiffersFromItsChangelogIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    w.WriteChangelog(0, 10);
    RestoreThread rt(w.broker, w.clock, nullptr, {.name = "restore"});
    rt.Start();
    auto task = w.NewTask(0, TaskType::kActive);
    // A write the changelog never had: restoration over it cannot give the fold.
    ASSERT_TRUE(task->state_manager().Store("counts")->Put("ghost", "1").ok());
    const TaskIncarnation who = task->incarnation();
    std::vector<TaskItem> round;
    round.push_back({.kind = TaskItem::Kind::kCreate, .incarnation = who, .task = std::move(task)});
    ASSERT_TRUE(rt.AddItems(std::move(round), nullptr));
    for (int i = 0; i < 1000; ++i) {
      w.clock.SleepFor(10 * kMillisecond);
      (void)rt.DrainEvents();
    }
  });
  ASSERT_FALSE(r.outcome.ok());
  // The first batch restored over it sees it (before it, the checkpoint forced when the
  // restored task is handed back did).
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:restored_batch]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("ghost: expected nothing, found 1"));
}

TEST(OracleTest, CheckpointAheadOfFlushedDataIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto sm = w.NewStateManager(3, TaskType::kActive);
    sm->Advance(Changelog(3), 5);
    // The state manager writes only flushed offsets; report a checkpoint of the pending ones.
    RS_OBSERVE(OnCheckpointWritten, *sm, sm->pending_offsets());
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:checkpoint]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("beyond the flushed data"));
}

TEST(OracleTest, ListenerEndWithoutStart) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    RS_OBSERVE(OnListener, "restore", Changelog(0), ListenerCall::kEnd);
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:listener_pairing]"));
}

TEST(OracleTest, CompletionBeforeTheEndOffsetIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(4, TaskType::kActive);
    HandToTheRestoreThread(*task);
    RS_OBSERVE(OnRegistered, "restore", Changelog(4), task->incarnation(), TaskType::kActive);
    RS_OBSERVE(OnCompleted, "restore", Changelog(4), task->incarnation(), /*position=*/3,
               /*end_offset=*/5);
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:restore_progress]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("completed at 3 before its end offset 5"));
}

TEST(OracleTest, BatchThatDoesNotMoveForwardIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(5, TaskType::kActive);
    HandToTheRestoreThread(*task);
    RS_OBSERVE(OnRegistered, "restore", Changelog(5), task->incarnation(), TaskType::kActive);
    RS_OBSERVE(OnRestoredBatch, "restore", Changelog(5), task->incarnation(), TaskType::kActive,
               /*next_offset=*/0, /*records=*/0);
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:restore_progress]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("a batch of 0 records ending at 0"));
}

TEST(OracleTest, CorruptionHandledThatWasNeverReportedIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(6, TaskType::kActive);
    RS_OBSERVE(OnCorruptionHandled, task->incarnation(), task.get());
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:errors]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("corruption handled that was never reported"));
}

// The restored task arrives at the stream thread with a store its changelog does not fold to
// (reported as the restore thread would, without the forced checkpoint that sees it first in a
// real run: store_contents is the check of last resort at the hand-back).
TEST(OracleTest, RestoredStoreThatDiffersFromItsChangelogIsCaughtOnArrival) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    w.WriteChangelog(2, 3);
    auto task = w.NewTask(2, TaskType::kActive);
    ASSERT_TRUE(task->state_manager().Store("counts")->Put("ghost", "1").ok());
    const TaskIncarnation who = task->incarnation();
    HandToTheRestoreThread(*task);
    RestoreEvent event{.kind = RestoreEvent::Kind::kRestored, .incarnation = who,
                       .task = std::move(task)};
    RS_OBSERVE(OnRestoreEvent, "restore", event, /*drained=*/false);
    RS_OBSERVE(OnRestoreEvent, "restore", event, /*drained=*/true);
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:store_contents]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("ghost: expected nothing, found 1"));
}

// Records restored again below an offset the task's directory already checkpointed, with no
// wipe or crash in between: thrown-away work (the budget is 0).
TEST(OracleTest, RestoringAgainBelowTheCheckpointIsWastedWork) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    w.WriteChangelog(3, 5);
    auto task = w.NewTask(3, TaskType::kActive);
    StateManager& sm = task->state_manager();
    w.RestoreInto(sm, 3, 5);
    sm.Advance(Changelog(3), 5);
    ASSERT_TRUE(sm.Flush().ok());
    ASSERT_TRUE(sm.Checkpoint().ok());
    HandToTheRestoreThread(*task);
    RS_OBSERVE(OnRegistered, "restore", Changelog(3), task->incarnation(), TaskType::kActive);
    RS_OBSERVE(OnRestoredBatch, "restore", Changelog(3), task->incarnation(), TaskType::kActive,
               /*next_offset=*/3, /*records=*/3);
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:no_wasted_work]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("restores 3 records of"));
}

// A checkpoint write that began before a crash and is reported after it tells nothing of what
// the crash left (found by scenario.crash_with_storage_damage pct:3 seed 4158, where the
// checkpoint then vanished and restoring from the beginning counted as wasted work).
TEST(OracleTest, ACheckpointReportedAfterACrashIsNotAHighMark) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    w.WriteChangelog(3, 5);
    auto task = w.NewTask(3, TaskType::kActive);
    StateManager& sm = task->state_manager();
    w.RestoreInto(sm, 3, 5);
    sm.Advance(Changelog(3), 5);
    ASSERT_TRUE(sm.Flush().ok());
    RS_OBSERVE(OnCheckpointWritten, sm, sm.flushed_offsets());
    w.fs.Crash();  // while the writer is descheduled between writing and reporting
    RS_OBSERVE(OnCheckpointResult, sm, /*written=*/true);
    HandToTheRestoreThread(*task);
    RS_OBSERVE(OnRegistered, "restore", Changelog(3), task->incarnation(), TaskType::kActive);
    RS_OBSERVE(OnRestoredBatch, "restore", Changelog(3), task->incarnation(), TaskType::kActive,
               /*next_offset=*/3, /*records=*/3);
    RS_OBSERVE(OnUnregistered, "restore", Changelog(3), task->incarnation());
  });
  EXPECT_THAT(r.outcome.message, ::testing::Not(HasSubstr("no_wasted_work")));
}

// checkpoint_delta: the state manager's own decisions, measured from the checkpoint it wrote.
TEST(OracleTest, RealCheckpointDecisionsPass) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    w.WriteChangelog(3, 8);
    auto task = w.NewTask(3, TaskType::kActive);
    StateManager& sm = task->state_manager();
    w.RestoreInto(sm, 3, 5);
    sm.Advance(Changelog(3), 5);
    EXPECT_TRUE(sm.CheckpointNeeded(/*enforce=*/false, /*delta_min=*/0));
    EXPECT_FALSE(sm.CheckpointNeeded(/*enforce=*/false, /*delta_min=*/5));
    ASSERT_TRUE(sm.Flush().ok());
    ASSERT_TRUE(sm.Checkpoint().ok());
    EXPECT_FALSE(sm.CheckpointNeeded(/*enforce=*/false, /*delta_min=*/0));  // nothing moved
    EXPECT_TRUE(sm.CheckpointNeeded(/*enforce=*/true, /*delta_min=*/0));
    ASSERT_TRUE(sm.Close(/*clean=*/false).ok());
  });
  EXPECT_THAT(r.outcome.message, ::testing::Not(HasSubstr("checkpoint_delta")));
}

// Measured from the wrong checkpoint (the second campaign's 9de1258fd53c): a checkpoint file
// rewritten at a commit although nothing moved since the last one.
TEST(OracleTest, AnUnforcedCheckpointWithNothingMovedIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    w.WriteChangelog(3, 5);
    auto task = w.NewTask(3, TaskType::kActive);
    StateManager& sm = task->state_manager();
    w.RestoreInto(sm, 3, 5);
    sm.Advance(Changelog(3), 5);
    ASSERT_TRUE(sm.Flush().ok());
    ASSERT_TRUE(sm.Checkpoint().ok());
    RS_OBSERVE(OnCheckpointDecision, sm, /*enforced=*/false, /*delta_min=*/0,
               /*standby_without_checkpoint=*/false, /*needed=*/true);
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:checkpoint_delta]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("an unforced checkpoint taken with its stores 0 "
                                           "records past the last checkpoint written"));
}

TEST(OracleTest, AnUnforcedCheckpointSkippedPastTheThresholdIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    w.WriteChangelog(3, 5);
    auto task = w.NewTask(3, TaskType::kActive);
    StateManager& sm = task->state_manager();
    w.RestoreInto(sm, 3, 5);
    sm.Advance(Changelog(3), 5);
    RS_OBSERVE(OnCheckpointDecision, sm, /*enforced=*/false, /*delta_min=*/2,
               /*standby_without_checkpoint=*/false, /*needed=*/false);
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:checkpoint_delta]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("skipped with its stores 5 records past the last "
                                           "checkpoint written (threshold 2)"));
}

// offset_sums: a task of "app-StreamThread-1" restored to 5 and closed clean (its checkpoint
// written); then its thread reports sums_of(what that checkpoint names) for the assignor.
void CloseCheckpointedThenReport(
    const std::function<std::map<TaskId, int64_t>(int64_t named)>& sums_of) {
  RuntimeWorld w(/*faults=*/false);
  w.WriteChangelog(3, 5);
  auto task = w.NewTask(3, TaskType::kActive);
  RS_OBSERVE(OnDecision, "app-StreamThread-1", task->incarnation(), TaskDecision::kCreate,
             TaskType::kActive);
  StateManager& sm = task->state_manager();
  w.RestoreInto(sm, 3, 5);
  ASSERT_TRUE(sm.Close(/*clean=*/true).ok());
  int64_t named = 0;
  for (const auto& [changelog, offset] : sm.last_checkpoint()) named += offset;
  ASSERT_GT(named, 0);
  sm.Clear();
  task->TransitionTo(TaskState::kClosed);
  RS_OBSERVE(OnOffsetSumsReported, "app-StreamThread-1", sums_of(named));
  w.oracle.CheckFinal();
}

TEST(OracleTest, TheCheckpointedSumOfADirectoryHeldNoMorePasses) {
  auto r = RunSim([] {
    CloseCheckpointedThenReport([](int64_t named) {
      return std::map<TaskId, int64_t>{{TaskId{0, 3}, named}};
    });
  });
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
}

// The campaign's c614c8c47514: the sums forget the tasks a thread held before.
TEST(OracleTest, ACheckpointedDirectoryLeftOutOfTheOffsetSumsIsCaught) {
  auto r = RunSim([] {
    CloseCheckpointedThenReport([](int64_t) { return std::map<TaskId, int64_t>{}; });
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:offset_sums]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("app-StreamThread-1 leaves out of its offset sums the "
                                           "task directory /state/app/0_3"));
}

// What the runtime did before NoteClosed: the sum it reported while the task restored.
TEST(OracleTest, AStaleSumForADirectoryHeldNoMoreIsCaught) {
  auto r = RunSim([] {
    CloseCheckpointedThenReport([](int64_t named) {
      return std::map<TaskId, int64_t>{{TaskId{0, 3}, named - 1}};
    });
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:offset_sums]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("for the task directory /state/app/0_3 it holds "
                                           "nothing of, whose checkpoint names"));
}

TEST(OracleTest, ARunningActiveNotReportedLatestIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(2, TaskType::kActive);
    RS_OBSERVE(OnDecision, "app-StreamThread-1", task->incarnation(), TaskDecision::kCreate,
               TaskType::kActive);
    task->TransitionTo(TaskState::kRestoring);
    task->TransitionTo(TaskState::kRunning);
    RS_OBSERVE(OnOffsetSumsReported, "app-StreamThread-1", std::map<TaskId, int64_t>{
                                                               {TaskId{0, 2}, 7}});
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:offset_sums]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("app-StreamThread-1 runs it but reports the offset "
                                           "sum 7"));
}

TEST(OracleTest, OpenTaskAtTheEndIsReported) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(0, TaskType::kStandby);
    w.oracle.CheckFinal();
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, HasSubstr("still open after shutdown"));
}

TEST(OracleTest, TaskDestroyedWithoutCloseIsReportedAtTheEnd) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    { auto task = w.NewTask(0, TaskType::kActive); }  // dropped, never closed
    w.oracle.CheckFinal();
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:single_owner]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("0_0#1: destroyed without being closed"));
}

TEST(OracleTest, DisabledOracleSeesNothing) {
  Oracle::SetEnabled(false);
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto a = w.NewTask(1, TaskType::kActive);
    auto b = w.NewTask(1, TaskType::kActive);
    EXPECT_EQ(w.oracle.counts().events, 0);
  });
  Oracle::SetEnabled(true);
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
}

}  // namespace
}  // namespace restoresim::properties

namespace restoresim::properties {
namespace {

// Issue 21's exactly-once invariants, each broken on purpose.

// An exactly-once state manager over partition p's task directory, stores registered.
std::unique_ptr<Task> NewEosTask(RuntimeWorld& w, int32_t p) {
  StateManagerConfig c;
  c.application_id = "app";
  c.task_dir = fmt::format("/state/app/0_{}", p);
  c.fs = &w.fs;
  c.open_store = w.LogStoreOpener();
  c.store_names = w.stores;
  c.exactly_once = true;
  auto sm = std::make_unique<StateManager>(TaskId{0, p}, TaskType::kActive, std::move(c));
  RS_CHECK(sm->RegisterStores().ok());
  return std::make_unique<Task>(TaskIncarnation{{0, p}, w.next_incarnation++}, std::move(sm),
                                restoresim::testing::Input(p));
}

// Reports every changelog of `task` registered and restored (to its empty end), so that it
// may process.
void ReportRestored(const Task& task) {
  HandToTheRestoreThread(task);
  for (const TopicPartition& tp : task.state_manager().ChangelogPartitions()) {
    RS_OBSERVE(OnRegistered, "restore", tp, task.incarnation(), TaskType::kActive);
    RS_OBSERVE(OnCompleted, "restore", tp, task.incarnation(), int64_t{0}, int64_t{0});
  }
  RS_OBSERVE(OnHandOff, "restore", task.incarnation(), TaskHolder::kRestoreThread,
             TaskHolder::kFromRestore);
  RS_OBSERVE(OnHandOff, "restore", task.incarnation(), TaskHolder::kFromRestore,
             TaskHolder::kStreamThread);
}

// No checkpoint on disk while a task processes under exactly-once: a checkpoint written (say by
// restoration) and never deleted before the task processes is caught.
TEST(EosOracleTest, ProcessingWithACheckpointOnDiskIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = NewEosTask(w, 0);
    ReportRestored(*task);
    RS_OBSERVE(OnCheckpointResult, task->state_manager(), /*written=*/true);
    RS_OBSERVE(OnProcess, *task, size_t{3});
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:eos_checkpoint]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("processes 3 records under exactly-once with a "
                                           "checkpoint in /state/app/0_0"));
}

// ... and once the checkpoint is deleted (or the directory wiped) processing is fine; a failed
// write leaves whatever was on disk before.
TEST(EosOracleTest, ProcessingAfterTheCheckpointWasDeletedIsNotCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = NewEosTask(w, 1);
    ReportRestored(*task);
    RS_OBSERVE(OnCheckpointResult, task->state_manager(), /*written=*/true);
    RS_OBSERVE(OnCheckpointDeleted, task->state_manager());
    RS_OBSERVE(OnCheckpointResult, task->state_manager(), /*written=*/false);
    RS_OBSERVE(OnProcess, *task, size_t{3});
    RS_OBSERVE(OnCheckpointResult, task->state_manager(), /*written=*/true);
    RS_OBSERVE(OnWiped, task->state_manager());
    RS_OBSERVE(OnProcess, *task, size_t{2});
  });
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
}

// No aborted record is ever applied to a store: a restore consumer that reads uncommitted
// restores the aborted transaction at the changelog's tail, and the store it fills differs from
// the committed fold (caught at the checkpoint before the hand-back, or on arrival).
TEST(EosOracleTest, AnAbortedRecordRestoredIntoAStoreIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    w.WriteChangelog(0, 10);
    std::unique_ptr<TransactionalProducer> earlier = w.broker.NewTransactionalProducer(
        {.client_id = "earlier-owner", .transactional_id = "earlier-owner"});
    ASSERT_TRUE(earlier->InitTransactions(kSecond).ok());
    ASSERT_TRUE(earlier->BeginTransaction().ok());
    ASSERT_TRUE(earlier->Send(Changelog(0), "k1", "aborted", 0).ok());
    ASSERT_TRUE(earlier->Flush(kSecond).ok());
    ASSERT_TRUE(earlier->AbortTransaction(kSecond).ok());
    RestoreThread rt(w.broker, w.clock, nullptr,
                     {.name = "restore", .isolation_level = IsolationLevel::kReadUncommitted});
    rt.Start();
    auto task = NewEosTask(w, 0);
    const TaskIncarnation who = task->incarnation();
    std::vector<TaskItem> round;
    round.push_back({.kind = TaskItem::Kind::kCreate, .incarnation = who, .task = std::move(task)});
    ASSERT_TRUE(rt.AddItems(std::move(round), nullptr));
    for (int i = 0; i < 1000; ++i) {
      w.clock.SleepFor(10 * kMillisecond);
      (void)rt.DrainEvents();
    }
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, HasSubstr("k1: expected"));
  EXPECT_THAT(r.outcome.message, HasSubstr("found aborted"));
}

// A batch of `writes` ending at `next_offset`, written to `task`'s store of changelog 0 and
// reported as the reader does (its Advance, which only the restore thread may make, left out).
void RestoreBatchInto(Task& task, std::vector<KeyValueWrite> writes, int64_t next_offset) {
  const int64_t count = static_cast<int64_t>(writes.size());
  RS_CHECK(task.state_manager().StoreForChangelog(Changelog(0))->RestoreBatch(std::move(writes))
               .ok());
  RS_OBSERVE(OnRestoredBatch, "restore", Changelog(0), task.incarnation(), task.type(),
             next_offset, count);
}

// A changelog whose key k1 has a committed record (offset 0), an aborted one (1, its abort
// marker 2) and a committed one again (3); a task restoring it, registered from the log start.
struct AbortedInTheMiddle {
  explicit AbortedInTheMiddle(RuntimeWorld& w) {
    RS_CHECK(w.broker.Append(Changelog(0), "k1", "1", 0).ok());
    std::unique_ptr<TransactionalProducer> earlier = w.broker.NewTransactionalProducer(
        {.client_id = "earlier-owner", .transactional_id = "earlier-owner"});
    RS_CHECK(earlier->InitTransactions(kSecond).ok());
    RS_CHECK(earlier->BeginTransaction().ok());
    RS_CHECK(earlier->Send(Changelog(0), "k1", "aborted", 0).ok());
    RS_CHECK(earlier->Flush(kSecond).ok());
    RS_CHECK(earlier->AbortTransaction(kSecond).ok());
    earlier->Close();
    RS_CHECK(w.broker.Append(Changelog(0), "k1", "3", 0).ok());
    task = NewEosTask(w, 0);
    HandToTheRestoreThread(*task);
    RS_OBSERVE(OnRegistered, "restore", Changelog(0), task->incarnation(), TaskType::kActive);
  }
  void Restore(std::vector<KeyValueWrite> writes, int64_t next_offset) {
    RestoreBatchInto(*task, std::move(writes), next_offset);
  }
  std::unique_ptr<Task> task;
};

// eos_restored_batch: a batch that applies an aborted record (a restore consumer reading
// uncommitted) is caught at that batch, though the next committed record of its key overwrites
// it before the restoration completes or checkpoints, where store_contents and checkpoint look.
TEST(EosOracleTest, AnAbortedRecordAppliedByOneBatchIsCaughtAtThatBatch) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    AbortedInTheMiddle story(w);
    story.Restore({{"k1", "1"}, {"k1", "aborted"}}, 2);
    story.Restore({{"k1", "3"}}, 4);  // the store is right again: no later check would see it
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:eos_restored_batch]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("0_0#1"));
  EXPECT_THAT(r.outcome.message, HasSubstr("k1: expected 1, found aborted"));
  EXPECT_THAT(r.outcome.message, HasSubstr("(1 aborted left out)"));
}

// ... and a batch that stops short of a committed record, or misses one, is caught too; the
// committed records alone, in batches across the aborted one and its marker, are not.
TEST(EosOracleTest, RestoredBatchesOfTheCommittedRecordsPass) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    AbortedInTheMiddle story(w);
    story.Restore({{"k1", "1"}}, 1);
    story.Restore({{"k1", "3"}}, 4);
  });
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
  auto missed = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    AbortedInTheMiddle story(w);
    story.Restore({{"k0", "1"}}, 1);  // the wrong key: k1's committed record is missing
  });
  ASSERT_FALSE(missed.outcome.ok());
  EXPECT_THAT(missed.outcome.message, StartsWith("[invariant:eos_restored_batch]"));
  EXPECT_THAT(missed.outcome.message, HasSubstr("k1: expected 1, found nothing"));
}

// An at-least-once task restoring a changelog whose key k1 was written three times (offsets
// 0-2: "1", "2", "3") and k2 once (3: "4"), registered from the log start.
struct ThreeWritesOfOneKey {
  explicit ThreeWritesOfOneKey(RuntimeWorld& w) {
    for (int i = 0; i < 3; ++i) {
      RS_CHECK(w.broker.Append(Changelog(0), "k1", std::to_string(i + 1), 0).ok());
    }
    RS_CHECK(w.broker.Append(Changelog(0), "k2", "4", 0).ok());
    task = w.NewTask(0, TaskType::kActive);
    task->TransitionTo(TaskState::kRestoring);
    HandToTheRestoreThread(*task);
    RS_OBSERVE(OnRegistered, "restore", Changelog(0), task->incarnation(), TaskType::kActive);
  }
  void Restore(std::vector<KeyValueWrite> writes, int64_t next_offset) {
    RestoreBatchInto(*task, std::move(writes), next_offset);
  }
  std::unique_ptr<Task> task;
};

// restored_batch: under at-least-once a store may run ahead of a batch's position per key (it
// opened with data flushed past its checkpoint: k1 at "3" while the batch reached offset 2), and
// that passes; a store behind it (k1 still "1" after a batch up to offset 2, whose fold says
// "2") or missing a key the position covers (k2 after offset 4) is caught at that batch.
TEST(OracleTest, AnAtLeastOnceStoreAheadOfItsBatchPasses) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    ThreeWritesOfOneKey story(w);
    story.Restore({{"k1", "3"}}, 2);  // what a store flushed before a crash may hold
    story.Restore({{"k1", "3"}}, 3);
    story.Restore({{"k2", "4"}}, 4);
  });
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
}

TEST(OracleTest, AnAtLeastOnceStoreBehindItsBatchIsCaught) {
  auto behind = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    ThreeWritesOfOneKey story(w);
    story.Restore({{"k1", "1"}}, 2);  // the batch's second record not applied
    story.Restore({{"k1", "3"}}, 3);  // right again: no later check would see it
  });
  ASSERT_FALSE(behind.outcome.ok());
  EXPECT_THAT(behind.outcome.message, StartsWith("[invariant:restored_batch]"));
  EXPECT_THAT(behind.outcome.message, HasSubstr("behind its position or holds"));
  EXPECT_THAT(behind.outcome.message, HasSubstr("k1: expected 2, found 1"));
  auto missing = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    ThreeWritesOfOneKey story(w);
    story.Restore({{"k1", "1"}, {"k1", "2"}, {"k1", "3"}}, 4);  // k2's record dropped
  });
  ASSERT_FALSE(missing.outcome.ok());
  EXPECT_THAT(missing.outcome.message, StartsWith("[invariant:restored_batch]"));
  EXPECT_THAT(missing.outcome.message, HasSubstr("k2: expected 4, found nothing"));
}

// commit_checkpoint: a running active that processed the changelog's six records (its own
// writes, acknowledged) and checkpoints them all passes; one whose checkpoint names only the
// first three (the producer's acknowledgement recorded on another task: mutant 128393a7d0e4 of
// the first mutation campaign) holds writes beyond it, and is caught at that checkpoint.
void RunningTaskCheckpointsItsWrites(int64_t checkpointed) {
  RuntimeWorld w(/*faults=*/false);
  auto task = w.NewTask(0, TaskType::kActive);
  ReportRestored(*task);
  task->TransitionTo(TaskState::kRestoring);
  task->TransitionTo(TaskState::kRunning);
  w.WriteChangelog(0, 6);  // what it processed, as its producer wrote it
  StateManager& sm = task->state_manager();
  for (const std::string& name : sm.StoreNames()) {
    const TopicPartition tp = ChangelogOf(name, 0);
    for (const auto& [key, value] : FoldChangelog(*w.broker.ReadLog(tp, 0, 6))) {
      RS_CHECK(sm.StoreForChangelog(tp)->Put(key, value).ok());
    }
    sm.Advance(tp, checkpointed);
  }
  RS_CHECK(sm.Flush().ok());
  RS_CHECK(sm.Checkpoint().ok());
}

TEST(CommitCheckpointOracleTest, ACheckpointOfEveryAcknowledgedWritePasses) {
  auto r = RunSim([] { RunningTaskCheckpointsItsWrites(6); });
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
}

TEST(CommitCheckpointOracleTest, ACheckpointBehindTheRunningTasksWritesIsCaught) {
  auto r = RunSim([] { RunningTaskCheckpointsItsWrites(3); });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:commit_checkpoint]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("names app-counts-changelog-0 at 3"));
  EXPECT_THAT(r.outcome.message, HasSubstr("which the changelog has only at offset 3"));
}

// Exactly once: what an abort marker took back is no part of the fold a store must equal, so a
// store holding an aborted record's value differs from its changelog's history (the
// `store_contents` and `checkpoint` invariants then fail), and one without it does not.
TEST(ChangelogHistoryTest, AbortedRecordsAreNoPartOfTheFold) {
  ChangelogHistory history;
  history.Append(ConsumerRecord{.offset = 0, .key = "k0", .value = "1"});
  history.Append(ConsumerRecord{.offset = 1, .key = "k1", .value = "2"});
  history.Append(ConsumerRecord{.offset = 2, .key = "k0", .value = "aborted"});
  history.Append(ConsumerRecord{.offset = 3, .key = "k2", .value = "aborted too"});
  history.Abort(2, 4);  // the abort marker is offset 4
  EXPECT_EQ(history.aborted(), 2);
  const std::map<std::string, std::string> committed = {{"k0", "1"}, {"k1", "2"}};
  EXPECT_EQ(DiffFromHistory(history, 5, 0, committed, /*or_later=*/false), "");
  const std::map<std::string, std::string> applied_aborted = {{"k0", "aborted"}, {"k1", "2"}};
  EXPECT_THAT(DiffFromHistory(history, 5, 0, applied_aborted, /*or_later=*/true),
              HasSubstr("k0: expected 1, found aborted"));
  const std::map<std::string, std::string> applied_key = {
      {"k0", "1"}, {"k1", "2"}, {"k2", "aborted too"}};
  EXPECT_THAT(DiffFromHistory(history, 5, 0, applied_key, /*or_later=*/true),
              HasSubstr("k2: expected nothing, found aborted too"));
}

// DiffFromHistory as it was before it walked the history and the store together (a find and
// a contains per key), kept as the reference the walk must agree with, text and all.
std::string DiffFromHistoryByLookups(const ChangelogHistory& history, int64_t upto,
                                     int64_t compacted_below,
                                     const std::map<std::string, std::string>& actual,
                                     bool or_later) {
  std::string diff;
  int shown = 0;
  auto note = [&](const std::string& text) {
    if (shown++ < 5) diff += " " + text + ";";
  };
  auto show = [](const std::optional<std::string>& v) { return v ? *v : std::string("nothing"); };
  using Entry = ChangelogHistory::Entry;
  for (const auto& [key, entries] : history.keys()) {
    auto after = std::lower_bound(entries.begin(), entries.end(), upto,
                                  [](const Entry& e, int64_t o) { return e.offset < o; });
    if (after == entries.begin() && !or_later) {
      if (actual.contains(key)) {
        note(fmt::format("{}: expected nothing, found {}", key, actual.at(key)));
      }
      continue;
    }
    const bool seen = after != entries.begin();
    const std::optional<std::string> expected = seen ? std::prev(after)->value : std::nullopt;
    auto it = actual.find(key);
    const std::optional<std::string> found =
        it == actual.end() ? std::nullopt : std::optional<std::string>(it->second);
    if (found == expected) continue;
    if (!found.has_value() && seen && std::prev(after)->offset < compacted_below) continue;
    if (or_later &&
        std::any_of(after, entries.end(), [&](const Entry& e) { return e.value == found; })) {
      continue;
    }
    note(fmt::format("{}: expected {}, found {}", key, show(expected), show(found)));
  }
  for (const auto& [key, value] : actual) {
    if (!history.keys().contains(key)) {
      note(fmt::format("{}: expected nothing, found {}", key, value));
    }
  }
  return diff;
}

// The one-walk DiffFromHistory says what the lookups said, for every store a seeded draw
// makes: histories with tombstones and aborts, stores that match, lag, run ahead, lose keys,
// hold values no record had and keys no record named, under both modes and compaction marks.
TEST(ChangelogHistoryTest, OneWalkDiffAgreesWithLookupsOnDrawnStores) {
  constexpr int kCasesMax = 3000;
  Prng prng(20261206);
  int differing = 0;
  for (int c = 0; c < kCasesMax; ++c) {
    ChangelogHistory history;
    const int64_t records = prng.Range(0, 30);
    const int64_t keys = prng.Range(1, 8);
    auto key = [&] { return "k" + std::to_string(prng.Uniform(static_cast<uint64_t>(keys))); };
    for (int64_t o = 0; o < records; ++o) {
      std::optional<std::string> value;
      if (!prng.OneIn(5)) value = std::to_string(prng.Uniform(6));
      history.Append(o, key(), value);
    }
    if (records > 2 && prng.OneIn(4)) {
      const int64_t first = prng.Range(0, records - 1);
      history.Abort(first, prng.Range(first, records));
    }
    const int64_t upto = prng.Range(0, records + 1);
    std::map<std::string, std::string> store;  // the fold below `upto`, then spoiled
    for (const auto& [k, entries] : history.keys()) {
      for (const ChangelogHistory::Entry& e : entries) {
        if (e.offset >= upto) break;
        if (e.value.has_value()) {
          store[k] = *e.value;
        } else {
          store.erase(k);
        }
      }
    }
    const int64_t spoils = prng.Range(0, 3);
    for (int64_t i = 0; i < spoils; ++i) {
      if (prng.OneIn(3) && !store.empty()) {
        store.erase(std::next(store.begin(), prng.Uniform(store.size())));
      } else {
        store[prng.OneIn(4) ? "x" + std::to_string(prng.Uniform(3)) : key()] =
            std::to_string(prng.Uniform(8));
      }
    }
    const int64_t below = prng.OneIn(3) ? prng.Range(0, upto) : 0;
    for (bool or_later : {false, true}) {
      const std::string want = DiffFromHistoryByLookups(history, upto, below, store, or_later);
      ASSERT_EQ(DiffFromHistory(history, upto, below, store, or_later), want)
          << "case " << c << " or_later " << or_later;
      differing += want.empty() ? 0 : 1;
    }
  }
  // The draw exercises both answers (a sweep of matching stores would prove nothing).
  EXPECT_GT(differing, kCasesMax / 4);
  EXPECT_LT(differing, 2 * kCasesMax - kCasesMax / 4);
}

// standby_progress (mutant be4feeb8dd7c: a step of one record did not publish the standby
// progress; mutant 4726f57904f1: the reader counted active records as standby progress).
TEST(OracleTest, StandbyProgressPublishedBehindTheStandbyRecordsRestoredIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    w.WriteChangelog(2, 5);
    w.WriteChangelog(3, 5);
    auto active = w.NewTask(3, TaskType::kActive);
    auto standby = w.NewTask(2, TaskType::kStandby);
    HandToTheRestoreThread(*active);
    HandToTheRestoreThread(*standby);
    RS_OBSERVE(OnRegistered, "restore", Changelog(3), active->incarnation(), TaskType::kActive);
    RS_OBSERVE(OnRegistered, "restore", Changelog(2), standby->incarnation(),
               TaskType::kStandby);
    w.ApplyBatch(active->state_manager(), Changelog(active->id().partition), 0, 5);
    RS_OBSERVE(OnRestoredBatch, "restore", Changelog(3), active->incarnation(),
               TaskType::kActive, /*next_offset=*/5, /*records=*/5);
    RS_OBSERVE(OnStandbyProgressPublished, "restore", 0);  // fine: active records only
    RS_OBSERVE(OnCompleted, "restore", Changelog(3), active->incarnation(), /*position=*/5,
               /*end_offset=*/5);
    w.ApplyBatch(standby->state_manager(), Changelog(standby->id().partition), 0, 1);
    RS_OBSERVE(OnRestoredBatch, "restore", Changelog(2), standby->incarnation(),
               TaskType::kStandby, /*next_offset=*/1, /*records=*/1);
    RS_OBSERVE(OnStandbyProgressPublished, "restore", 0);
    ADD_FAILURE() << "not caught";
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:standby_progress]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("publishes 0 records written to standby stores after "
                                           "a step, but its reader restored 1 records"));
}

TEST(OracleTest, ActiveRecordsPublishedAsStandbyProgressAreCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    w.WriteChangelog(3, 5);
    auto active = w.NewTask(3, TaskType::kActive);
    HandToTheRestoreThread(*active);
    RS_OBSERVE(OnRegistered, "restore", Changelog(3), active->incarnation(), TaskType::kActive);
    w.ApplyBatch(active->state_manager(), Changelog(active->id().partition), 0, 2);
    RS_OBSERVE(OnRestoredBatch, "restore", Changelog(3), active->incarnation(),
               TaskType::kActive, /*next_offset=*/2, /*records=*/2);
    RS_OBSERVE(OnStandbyProgressPublished, "restore", 2);
    ADD_FAILURE() << "not caught";
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:standby_progress]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("publishes 2 records"));
}

// dead_incarnation: an incarnation whose CLOSE was sent is dead to its stream thread until the
// restore thread applied that CLOSE and handed it back removed.
// Hands `task` to the restore thread "restore" and has its stream thread send its CLOSE.
void HandOverAndSendClose(const Task& task) {
  HandToTheRestoreThread(task);
  RS_OBSERVE(OnDecision, "app-StreamThread-1", task.incarnation(), TaskDecision::kSendClose,
             TaskType::kActive);
}

TEST(OracleTest, AResumeOfAnIncarnationWhoseCloseIsInFlightIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(2, TaskType::kActive);
    HandOverAndSendClose(*task);
    RS_OBSERVE(OnDecision, "app-StreamThread-1", task->incarnation(), TaskDecision::kResume,
               TaskType::kActive);
    ADD_FAILURE() << "not caught";
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:dead_incarnation]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("app-StreamThread-1 decides to resume it while its "
                                           "CLOSE is still in flight to the restore thread"));
}

// Hands `task` back from the restore thread "restore" with an event of `kind`, observed as the
// restore thread emits it and as the stream thread drains it.
void HandBack(std::unique_ptr<Task>& task, RestoreEvent::Kind kind) {
  const TaskIncarnation who = task->incarnation();
  RS_OBSERVE(OnHandOff, "restore", who, TaskHolder::kRestoreThread, TaskHolder::kFromRestore);
  RestoreEvent event{.kind = kind, .incarnation = who, .task = std::move(task)};
  RS_OBSERVE(OnRestoreEvent, "restore", event, /*drained=*/false);
  RS_OBSERVE(OnHandOff, "restore", who, TaskHolder::kFromRestore, TaskHolder::kStreamThread);
  RS_OBSERVE(OnRestoreEvent, "restore", event, /*drained=*/true);
  task = std::move(event.task);
}

TEST(OracleTest, ARestoredHandBackAfterTheCloseWasAppliedIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(2, TaskType::kActive);
    HandOverAndSendClose(*task);
    RS_OBSERVE(OnCloseApplied, "restore", task->incarnation());
    HandBack(task, RestoreEvent::Kind::kRestored);  // as if it had been restored after all
    ADD_FAILURE() << "not caught";
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:dead_incarnation]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("restore hands it back restored after it applied its "
                                           "CLOSE"));
}

// The CLOSE applied and the task back removed, the stream thread may resume that incarnation
// (it was wanted again meanwhile); closed, it is decided about no more.
TEST(OracleTest, AResumeAfterTheCloseCameBackPassesButADecisionAfterTheCloseDoesNot) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(2, TaskType::kActive);
    const TaskIncarnation who = task->incarnation();
    HandOverAndSendClose(*task);
    RS_OBSERVE(OnCloseApplied, "restore", who);
    HandBack(task, RestoreEvent::Kind::kRemoved);
    RS_OBSERVE(OnDecision, "app-StreamThread-1", who, TaskDecision::kResume, TaskType::kActive);
    RS_OBSERVE(OnDecision, "app-StreamThread-1", who, TaskDecision::kClose, TaskType::kActive);
    task->TransitionTo(TaskState::kClosed);
    RS_OBSERVE(OnDecision, "app-StreamThread-1", who, TaskDecision::kRecycle, TaskType::kActive);
    ADD_FAILURE() << "not caught";
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:dead_incarnation]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("app-StreamThread-1 decides to recycle it after it "
                                           "was closed"));
}

// state_chain: a transition reported from a state the thread already left (two threads that
// read the same state and both moved it on).
TEST(OracleTest, AStreamThreadTransitionFromAStaleStateIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);  // (its oracle watches)
    RS_OBSERVE(OnStreamThreadState, "app-StreamThread-1", StreamThreadState::kCreated,
               StreamThreadState::kStarting);
    RS_OBSERVE(OnStreamThreadState, "app-StreamThread-1", StreamThreadState::kStarting,
               StreamThreadState::kPartitionsAssigned);
    RS_OBSERVE(OnStreamThreadState, "app-StreamThread-1", StreamThreadState::kStarting,
               StreamThreadState::kPendingShutdown);
    ADD_FAILURE() << "not caught";
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:state_chain]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("reports STARTING -> PENDING_SHUTDOWN (last reported "
                                           "PARTITIONS_ASSIGNED)"));
}

TEST(OracleTest, ATaskTransitionFromAStateItWasNotInIsCaught) {
  auto r = RunSim([] {
    RuntimeWorld w(/*faults=*/false);
    auto task = w.NewTask(2, TaskType::kActive);
    RS_OBSERVE(OnTaskTransition, *task, TaskState::kRestoring, TaskState::kRunning);
    ADD_FAILURE() << "not caught";
  });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:state_chain]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("reports RESTORING -> RUNNING, but its last reported "
                                           "state is CREATED"));
}

}  // namespace
}  // namespace restoresim::properties

namespace restoresim::properties {
namespace {

// no_wasted_work at a rebalance: a running active closed on a revocation's partial view is
// judged by the assignment that completes the rebalance — not wanted there, it passes; wanted
// there (here as a standby: it should have been recycled in place), it is thrown-away work.
void RunningActiveClosedAtARevocation(bool wanted_after) {
  RuntimeWorld w(/*faults=*/false);
  auto task = w.NewTask(2, TaskType::kActive);
  const TaskIncarnation who = task->incarnation();
  task->TransitionTo(TaskState::kRestoring);
  task->TransitionTo(TaskState::kRunning);
  const std::set<TaskId> none;
  RS_OBSERVE(OnAssignment, "app-StreamThread-1", std::set<TaskId>{who.id}, none, false);
  RS_OBSERVE(OnAssignment, "app-StreamThread-1", none, none, /*revocation=*/true);
  RS_OBSERVE(OnDecision, "app-StreamThread-1", who, TaskDecision::kClose, TaskType::kActive);
  task->TransitionTo(TaskState::kSuspended);
  task->TransitionTo(TaskState::kClosed);
  const std::set<TaskId> standby = wanted_after ? std::set<TaskId>{who.id} : none;
  RS_OBSERVE(OnAssignment, "app-StreamThread-1", none, standby, /*revocation=*/false);
}

TEST(OracleTest, ARunningActiveClosedAtARevocationAndNotWantedAfterItPasses) {
  auto r = RunSim([] { RunningActiveClosedAtARevocation(/*wanted_after=*/false); });
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
}

TEST(OracleTest, ARunningActiveClosedAtARevocationThatItsRebalanceWantsAgainIsWastedWork) {
  auto r = RunSim([] { RunningActiveClosedAtARevocation(/*wanted_after=*/true); });
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_THAT(r.outcome.message, StartsWith("[invariant:no_wasted_work]"));
  EXPECT_THAT(r.outcome.message, HasSubstr("app-StreamThread-1 closes it while the assignment "
                                           "completing its rebalance wants it as standby"));
}

}  // namespace
}  // namespace restoresim::properties
