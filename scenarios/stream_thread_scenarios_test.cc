// A stream thread end to end against the fake broker, under the simulator: tasks restore on the
// restore thread while restored ones already process, every store ends equal to the reference
// model of the topology fed the same input, and the input offsets are committed.
#include "core/runtime/stream_thread.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/port/file_system.h"
#include "core/runtime/count_topology.h"
#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using testing::Assign;
using testing::Changelog;
using testing::Input;
using testing::RuntimeWorld;

constexpr int32_t kPartitions = 4;

StreamThreadConfig Config(RuntimeWorld& w, std::string name) {
  StreamThreadConfig c = w.StreamConfig(std::move(name));
  c.tasks.state_dir = "/state/app";  // the state directory NewStateManager prepares
  c.restore.max_poll_records = 50;
  return c;
}

// Installs a generation for the group's only member (manual assignment).
void Generation(RuntimeWorld& w, const std::set<int32_t>& actives,
                const std::set<int32_t>& standbys = {}) {
  const std::string member = w.broker.Members("app").at(0);
  RS_CHECK(w.broker.Rebalance("app", {{member, Assign(actives, standbys)}}).ok());
}

// Runs the loop by hand until task `id` runs with exactly `expected` in its store.
bool RunUntilRunningWith(StreamThread& st, TaskId id,
                         const std::map<std::string, std::string>& expected, int loops_max) {
  for (int loop = 0; loop < loops_max; ++loop) {
    RS_CHECK(st.RunOnce().ok(), "RunOnce");
    auto contents = st.task_manager().RunningStoreContents(id);
    if (contents.ok() && *contents == expected) return true;
  }
  return false;
}

// Input for partition p: increments, with a tombstone now and then.
std::vector<ConsumerRecord> ProduceInput(RuntimeWorld& w, int32_t p, int n) {
  std::vector<ConsumerRecord> records;
  for (int i = 0; i < n; ++i) {
    std::optional<std::string> value;
    if (i % 9 != 8) value = std::to_string(1 + i % 3);
    const std::string key = "k" + std::to_string((i * 3 + p) % 5);
    const int64_t offset = *w.broker.Append(Input(p), key, value, i);
    records.push_back({offset, key, value, i});
  }
  return records;
}

TEST(StreamThreadScenarioTest, RestoredTasksProcessWhileAnotherStillRestores) {
  for (bool faults : {false, true}) {
    for (uint64_t seed = 0; seed < 6; ++seed) {
      sim::TestRun r = sim::RunUnderSim([&]() {
        RuntimeWorld w(faults, kPartitions);
        w.WriteChangelog(0, 2000);  // task 0_0 has a long restoration ahead of it
        std::map<int32_t, std::map<std::string, std::string>> restored;
        std::map<int32_t, std::vector<ConsumerRecord>> input;
        for (int32_t p = 0; p < kPartitions; ++p) {
          restored[p] = w.Fold(p);
          input[p] = ProduceInput(w, p, 40);
        }
        Atomic<uint64_t> incarnations(0);
        StreamThread st(Config(w, "stream-1"), w.broker, w.clock, nullptr, incarnations);
        ASSERT_TRUE(st.Subscribe().ok());
        bool others_ran_while_0_restored = false;
        for (int loop = 0; loop < 5000; ++loop) {
          ASSERT_TRUE(st.RunOnce().ok());
          const std::set<TaskId> running = st.task_manager().running();
          if (!running.contains(TaskId{0, 0}) && running.contains(TaskId{0, 1})) {
            others_ran_while_0_restored = true;
          }
          bool all_done = running.size() == kPartitions;
          for (int32_t p = 0; all_done && p < kPartitions; ++p) {
            auto contents = st.task_manager().RunningStoreContents({0, p});
            all_done = contents.ok() && *contents == ReferenceCounts(input[p], restored[p]);
          }
          if (all_done) break;
        }
        EXPECT_TRUE(others_ran_while_0_restored)
            << "a restored task must not wait for the others (per-task readiness)";
        for (int32_t p = 0; p < kPartitions; ++p) {
          auto contents = st.task_manager().RunningStoreContents({0, p});
          ASSERT_TRUE(contents.ok()) << contents.status();
          EXPECT_EQ(*contents, ReferenceCounts(input[p], restored[p])) << "partition " << p;
        }
        absl::Status commit = st.task_manager().Commit();
        for (int retry = 0; retry < 50 && IsRetryable(commit); ++retry) {
          w.clock.SleepFor(100 * kMillisecond);
          commit = st.task_manager().Commit();
        }
        ASSERT_TRUE(commit.ok()) << commit;
        const auto committed = w.broker.CommittedOffsets("app");
        for (int32_t p = 0; p < kPartitions; ++p) {
          EXPECT_EQ(committed.at(Input(p)), 40) << "partition " << p;
        }
        const absl::Status shutdown = st.Shutdown(30 * kSecond);
        EXPECT_TRUE(shutdown.ok() || IsInjected(shutdown)) << shutdown;
      }, seed);
      ASSERT_TRUE(r.outcome.ok()) << "faults=" << faults << " seed=" << seed << ": "
                                  << r.outcome.message;
    }
  }
}


// Revive after corruption: a checkpoint below the changelog's new log start (retention moved
// it) makes restoration report the task corrupted; the stream thread closes it dirty, wipes
// it, revives a new incarnation that restores from the beginning, and the store ends equal to
// the fold of what the changelog still holds — while the other tasks carry on.
TEST(StreamThreadScenarioTest, CorruptionDuringRestorationIsRevivedFromTheLogStart) {
  for (uint64_t seed = 0; seed < 6; ++seed) {
    sim::TestRun r = sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, kPartitions);
      w.WriteChangelog(1, 300);
      {
        std::unique_ptr<StateManager> sm = w.NewStateManager(1, TaskType::kActive);
        w.RestoreInto(*sm, 1, 10);  // a checkpoint at 10 ...
        ASSERT_TRUE(sm->Close(/*clean=*/true).ok());
      }
      ASSERT_TRUE(w.broker.DeleteRecords({{Changelog(1), 100}}).ok());  // ... now out of range
      Atomic<uint64_t> incarnations(0);
      StreamThread st(Config(w, "stream-1"), w.broker, w.clock, nullptr, incarnations);
      ASSERT_TRUE(st.Subscribe().ok());
      bool converged = false;
      for (int loop = 0; loop < 3000 && !converged; ++loop) {
        ASSERT_TRUE(st.RunOnce().ok());
        auto contents = st.task_manager().RunningStoreContents({0, 1});
        converged = contents.ok() &&
                    *contents == FoldChangelog(*w.broker.ReadLog(
                                     Changelog(1), *w.broker.LogStartOffset(Changelog(1)),
                                     1'000'000)) &&
                    st.task_manager().running().size() == kPartitions;
      }
      EXPECT_TRUE(converged);
      EXPECT_EQ(st.task_manager().stats().revived, 1);
      EXPECT_EQ(st.task_manager().stats().corrupted_reports, 1);
      EXPECT_EQ(st.task_manager().stats().stale_reports, 0);
      ASSERT_TRUE(st.Shutdown(30 * kSecond).ok());
    }, seed);
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
  }
}


// Regression (found by scenario.two_rebalances_between_polls): a task revoked while it
// restored and assigned again before the restore thread applied the revocation comes back
// SUSPENDED and waits, resumed, for the next hand-over. If the next poll's generation changed
// its type first, Reconcile suspended it a second time: "illegal transition SUSPENDED ->
// SUSPENDED". It is recycled now, and restores as the new type.
TEST(StreamThreadScenarioTest, AResumedTaskWhoseTypeChangesBeforeItsHandOverIsRecycled) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    sim::TestRun r = sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, kPartitions);
      w.broker.SetManualAssignment("app", true);
      w.WriteChangelog(0, 2000);  // 0_0 restores for a long time
      StreamThreadConfig config = Config(w, "stream-1");
      config.restore.max_poll_records = 10;
      Atomic<uint64_t> incarnations(0);
      StreamThread st(config, w.broker, w.clock, nullptr, incarnations);
      ASSERT_TRUE(st.Subscribe().ok());
      ASSERT_TRUE(st.RunOnce().ok());
      Generation(w, {0});
      ASSERT_TRUE(st.RunOnce().ok());  // 0_0 handed to the restore thread
      ASSERT_TRUE(st.task_manager().in_restore().contains(TaskId{0, 0}));
      Generation(w, {});
      Generation(w, {0});              // revoked and assigned again before the next poll
      ASSERT_TRUE(st.RunOnce().ok());  // sends the CLOSE; the task is awaited
      w.clock.SleepFor(500 * kMillisecond);  // the restore thread applies it, hands it back
      ASSERT_TRUE(st.RunOnce().ok());  // takes it back: resumed, waiting for the hand-over
      Generation(w, {}, {0});          // ... and it is to be a standby instead
      ASSERT_TRUE(st.RunOnce().ok());
      Generation(w, {0});
      EXPECT_TRUE(RunUntilRunningWith(st, {0, 0}, w.Fold(0), 5000));
      EXPECT_GT(st.task_manager().stats().recycled, 0);
      ASSERT_TRUE(st.Shutdown(30 * kSecond).ok());
    }, seed);
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
  }
}


// Regression (found by scenario.two_rebalances_between_polls): a task restored by the restore
// thread just before the stream thread sent its CLOSE (revoked), and wanted again when the
// event was drained, used to start RUNNING — with a store restored only to the end offset of
// its registration, although another owner may have written to the changelog meanwhile. It is
// taken back and restores on to the current end now.
TEST(StreamThreadScenarioTest, ATaskRestoredAfterItsCloseWasSentRestoresOnBeforeRunning) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    sim::TestRun r = sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, kPartitions);
      w.broker.SetManualAssignment("app", true);
      w.WriteChangelog(0, 20);
      Atomic<uint64_t> incarnations(0);
      StreamThread st(Config(w, "stream-1"), w.broker, w.clock, nullptr, incarnations);
      ASSERT_TRUE(st.Subscribe().ok());
      ASSERT_TRUE(st.RunOnce().ok());
      Generation(w, {0});
      ASSERT_TRUE(st.RunOnce().ok());        // 0_0 handed to the restore thread ...
      w.clock.SleepFor(500 * kMillisecond);  // ... restored and handed back, not drained yet
      Generation(w, {});                     // revoked: the stream thread sends its CLOSE ...
      Generation(w, {0});                    // ... and wants it again, in the same poll
      w.WriteChangelog(0, 10, 20);           // meanwhile another owner wrote to the changelog
      EXPECT_TRUE(RunUntilRunningWith(st, {0, 0}, w.Fold(0), 2000))
          << "0_0 must run with the whole changelog restored";
      ASSERT_TRUE(st.Shutdown(30 * kSecond).ok());
    }, seed);
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
  }
}

// Regression (found by scenario.storage_faults_on_a_live_instance, pct:3 seed 242): the restore
// thread reports a checkpoint it cannot write as an error event naming the task it is still
// restoring; the stream thread dropped the task's booking on that event and created a second
// incarnation of it. The task must stay booked and come back as the only incarnation.
TEST(StreamThreadScenarioTest, AnErrorAboutARestoringTaskLeavesItWithTheRestoreThread) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    sim::TestRun r = sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, kPartitions);
      w.broker.SetManualAssignment("app", true);
      w.WriteChangelog(0, 400);
      Atomic<uint64_t> incarnations(0);
      StreamThreadConfig config = Config(w, "stream-1");
      config.restore.max_poll_records = 2;  // a long restoration
      config.restore.checkpoint_interval_ns = 10 * kMillisecond;
      StreamThread st(config, w.broker, w.clock, nullptr, incarnations);
      ASSERT_TRUE(st.Subscribe().ok());
      ASSERT_TRUE(st.RunOnce().ok());
      Generation(w, {0});
      ASSERT_TRUE(st.RunOnce().ok());  // 0_0 handed to the restore thread
      w.fs.SetFaults({.sync_error_per_mille = 1000});  // its periodic checkpoints fail
      for (int i = 0; i < 20; ++i) {
        w.clock.SleepFor(20 * kMillisecond);
        ASSERT_TRUE(st.RunOnce().ok());
      }
      EXPECT_GT(st.task_manager().stats().restore_errors, 0) << "no checkpoint failed";
      EXPECT_EQ(st.task_manager().stats().created, 1) << "a second incarnation was made";
      w.fs.SetFaults({});
      EXPECT_TRUE(RunUntilRunningWith(st, {0, 0}, w.Fold(0), 4000));
      EXPECT_EQ(st.task_manager().stats().created, 1);
      ASSERT_TRUE(st.Shutdown(30 * kSecond).ok());
    }, seed);
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
  }
}

// Regression (found by scenario.swarm under broker faults): a task closed cleanly on
// revocation whose last commit failed once with a retryable error — here its changelog
// partition briefly without a leader, so the producer's flush fails — used to close dirty:
// its processed input stayed uncommitted (to be counted twice by the next owner) and its
// store kept writes its changelog did not have. The close now retries, backing off, until the
// commit goes through.
TEST(StreamThreadScenarioTest, ARevokedTaskWhoseCommitFailsTransientlyStillClosesClean) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    sim::TestRun r = sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, kPartitions);
      w.broker.SetManualAssignment("app", true);
      const std::vector<ConsumerRecord> input = ProduceInput(w, 0, 20);
      StreamThreadConfig config = Config(w, "stream-1");
      config.commit_interval_ns = 3600 * kSecond;  // only the revocation commits
      Atomic<uint64_t> incarnations(0);
      StreamThread st(config, w.broker, w.clock, nullptr, incarnations);
      st.Start();
      while (w.broker.Members("app").empty()) w.clock.SleepFor(5 * kMillisecond);
      const std::string member = w.broker.Members("app").at(0);
      ASSERT_TRUE(w.broker.Rebalance("app", {{member, Assign({0}, {})}}).ok());
      bool processed = false;
      for (int i = 0; i < 1000 && !processed; ++i) {
        w.clock.SleepFor(5 * kMillisecond);
        auto contents = st.task_manager().RunningStoreContents({0, 0});
        processed = contents.ok() && *contents == ReferenceCounts(input);
      }
      ASSERT_TRUE(processed);
      fakes::BrokerFaults leaderless;
      leaderless.leader_unavailable_per_mille = 1000;
      leaderless.leader_unavailable_ns_max = 200 * kMillisecond;
      w.broker.SetFaults(leaderless);
      ASSERT_TRUE(w.broker.Rebalance("app", {{member, Assign({}, {})}}).ok());  // revoked
      w.clock.SleepFor(1 * kSecond);
      w.broker.SetFaults(fakes::BrokerFaults{});  // the leader is back
      for (int i = 0; i < 1000 && st.task_manager().stats().closed_clean == 0; ++i) {
        w.clock.SleepFor(5 * kMillisecond);
      }
      EXPECT_EQ(st.task_manager().stats().closed_dirty, 0);
      EXPECT_EQ(st.task_manager().stats().closed_clean, 1);
      EXPECT_EQ(w.broker.CommittedOffsets("app").at(Input(0)), 20);
      EXPECT_EQ(w.Fold(0), ReferenceCounts(input));
      ASSERT_TRUE(st.Shutdown(30 * kSecond).ok());
    }, seed);
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
  }
}

}  // namespace
}  // namespace restoresim
