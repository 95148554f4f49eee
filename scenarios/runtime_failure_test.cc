// The runtime's client states and uncaught-exception handler (runtime.h, runtime_state.h),
// under the simulator: a thread that fails takes the client to ERROR by default, is replaced
// under REPLACE_THREAD, and the state listener sees Kafka's transitions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/runtime/runtime.h"
#include "scenarios/failing_store.h"
#include "scenarios/runtime_world.h"
#include "sim/sim_test_util.h"

namespace restoresim {
namespace {

using testing::RuntimeWorld;

RuntimeConfig Config(int32_t threads) {
  RuntimeConfig c;
  c.application_id = "app";
  c.input_topic = "input";
  c.num_stream_threads = threads;
  c.state_dir = "/state";
  c.poll_ms = 20;
  c.commit_interval_ms = 100;
  c.restore_max_poll_records = 5;
  return c;
}

bool WaitFor(RuntimeWorld& w, const std::function<bool()>& done, TimeNs bound_ns = 60 * kSecond) {
  const TimeNs deadline = w.clock.NowNs() + bound_ns;
  while (!done() && w.clock.NowNs() < deadline) w.clock.SleepFor(10 * kMillisecond);
  return done();
}

struct Transitions {
  std::vector<std::pair<RuntimeState, RuntimeState>> seen;  // (old, new)
  RuntimeStateListener Listener() {
    return [this](RuntimeState next, RuntimeState old) { seen.emplace_back(old, next); };
  }
  bool Saw(RuntimeState old, RuntimeState next) const {
    return std::find(seen.begin(), seen.end(), std::make_pair(old, next)) != seen.end();
  }
};

void ExpectOk(const sim::TestRun& r, uint64_t seed) {
  ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
}

TEST(RuntimeFailureTest, ByDefaultAFailedThreadShutsTheClientDownToError) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, 2);
      w.WriteChangelog(0, 30);
      w.WriteChangelog(1, 30);
      Transitions transitions;
      Runtime runtime(Config(2), w.broker, w.clock, w.fs,
                      testing::FailingStoreOpener(w.LogStoreOpener(), testing::StoresOfTask(0)));
      ASSERT_TRUE(runtime.SetStateListener(transitions.Listener()).ok());
      ASSERT_TRUE(runtime.Start().ok());
      EXPECT_FALSE(runtime.SetStateListener(nullptr).ok()) << "only before Start, as Kafka";
      ASSERT_TRUE(WaitFor(w, [&] { return runtime.state() == RuntimeState::kError; }))
          << RuntimeStateName(runtime.state());
      EXPECT_TRUE(transitions.Saw(RuntimeState::kCreated, RuntimeState::kRebalancing));
      EXPECT_TRUE(transitions.Saw(RuntimeState::kPendingError, RuntimeState::kError));
      EXPECT_EQ(runtime.threads_failed(), 1);
      EXPECT_EQ(runtime.threads_replaced(), 0);
      for (size_t i = 0; i < runtime.thread_count(); ++i) {
        EXPECT_EQ(runtime.thread(i).state(), StreamThreadState::kDead) << i;
      }
      (void)runtime.Close(30 * kSecond);
      EXPECT_EQ(runtime.state(), RuntimeState::kError) << "ERROR stays ERROR after Close";
    }, seed), seed);
  }
}

TEST(RuntimeFailureTest, ReplaceThreadStartsAFreshThreadThatTakesTheTasksOver) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, 2);
      w.WriteChangelog(0, 30);
      w.WriteChangelog(1, 30);
      auto broken = std::make_shared<bool>(true);
      auto of_task = testing::StoresOfTask(0);
      Runtime runtime(Config(1), w.broker, w.clock, w.fs,
                      testing::FailingStoreOpener(w.LogStoreOpener(),
                                                  [broken, of_task](const std::string& dir) {
                                                    return *broken && of_task(dir);
                                                  }));
      std::vector<std::string> errors;
      ASSERT_TRUE(runtime
                      .SetUncaughtExceptionHandler([&errors](const absl::Status& error) {
                        errors.push_back(std::string(error.message()));
                        return StreamThreadExceptionResponse::kReplaceThread;
                      })
                      .ok());
      ASSERT_TRUE(runtime.Start().ok());
      ASSERT_TRUE(WaitFor(w, [&] { return runtime.threads_replaced() >= 1; }));
      *broken = false;
      ASSERT_TRUE(WaitFor(w, [&] { return runtime.state() == RuntimeState::kRunning; }))
          << RuntimeStateName(runtime.state());
      ASSERT_FALSE(errors.empty());
      EXPECT_THAT(errors[0], ::testing::HasSubstr("task 0_0"));
      EXPECT_EQ(runtime.threads_replaced(), runtime.threads_failed());
      EXPECT_EQ(runtime.thread(0).state(), StreamThreadState::kDead);
      StreamThread& last = runtime.thread(runtime.thread_count() - 1);
      EXPECT_EQ(last.name(), fmt::format("app-StreamThread-{}", runtime.thread_count()))
          << "a replacement takes a fresh index";
      EXPECT_EQ(last.task_manager().running(), (std::set<TaskId>{{0, 0}, {0, 1}}))
          << "the replacement runs every task";
      ASSERT_TRUE(runtime.Close(30 * kSecond).ok());
      EXPECT_EQ(runtime.state(), RuntimeState::kNotRunning);
    }, seed), seed);
  }
}

TEST(RuntimeFailureTest, TheClientIsRunningOnlyOnceNoAssignedActiveRestores) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    ExpectOk(sim::RunUnderSim([&]() {
      RuntimeWorld w(/*faults=*/false, 2);
      w.WriteChangelog(0, 200);
      Runtime runtime(Config(1), w.broker, w.clock, w.fs, w.LogStoreOpener());
      Transitions transitions;
      ASSERT_TRUE(runtime.SetStateListener(transitions.Listener()).ok());
      ASSERT_TRUE(runtime.Start().ok());
      EXPECT_EQ(runtime.state(), RuntimeState::kRebalancing);
      // (The listener runs under the runtime's lock: it must not call back, so the check of
      // what restores is made here, between waits.)
      bool running_while_restoring = false;
      ASSERT_TRUE(WaitFor(w, [&] {
        const bool running = runtime.state() == RuntimeState::kRunning;
        if (running && !runtime.thread(0).task_manager().in_restore().empty()) {
          running_while_restoring = true;
        }
        return running;
      }));
      EXPECT_EQ(runtime.Metrics().remaining_records, 0);
      EXPECT_FALSE(running_while_restoring);
      EXPECT_TRUE(transitions.Saw(RuntimeState::kRebalancing, RuntimeState::kRunning));
      ASSERT_TRUE(runtime.Close(30 * kSecond).ok());
      EXPECT_TRUE(transitions.Saw(RuntimeState::kRunning, RuntimeState::kPendingShutdown));
      EXPECT_TRUE(transitions.Saw(RuntimeState::kPendingShutdown, RuntimeState::kNotRunning));
    }, seed), seed);
  }
}

}  // namespace
}  // namespace restoresim
