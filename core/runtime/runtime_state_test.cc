#include "core/runtime/runtime_state.h"

#include <gtest/gtest.h>

namespace restoresim {
namespace {

using R = RuntimeState;
using T = StreamThreadState;

TEST(RuntimeStateTest, ClientTransitionsAreKafkasTable) {
  // KafkaStreams.State: CREATED(1, 3), REBALANCING(2, 3, 5), RUNNING(1, 2, 3, 5),
  // PENDING_SHUTDOWN(4), NOT_RUNNING, PENDING_ERROR(6), ERROR.
  const std::vector<std::vector<R>> allowed = {
      {R::kRebalancing, R::kPendingShutdown},
      {R::kRunning, R::kPendingShutdown, R::kPendingError},
      {R::kRebalancing, R::kRunning, R::kPendingShutdown, R::kPendingError},
      {R::kNotRunning},
      {},
      {R::kError},
      {},
  };
  for (int from = 0; from < 7; ++from) {
    for (int to = 0; to < 7; ++to) {
      const bool want = std::find(allowed[from].begin(), allowed[from].end(),
                                  static_cast<R>(to)) != allowed[from].end();
      EXPECT_EQ(IsValidRuntimeTransition(static_cast<R>(from), static_cast<R>(to)), want)
          << RuntimeStateName(static_cast<R>(from)) << " -> "
          << RuntimeStateName(static_cast<R>(to));
    }
  }
}

TEST(RuntimeStateTest, StreamThreadTransitionsAreKafkasWithRevokedFolded) {
  EXPECT_TRUE(IsValidStreamThreadTransition(T::kCreated, T::kStarting));
  EXPECT_FALSE(IsValidStreamThreadTransition(T::kCreated, T::kRunning));
  EXPECT_FALSE(IsValidStreamThreadTransition(T::kStarting, T::kRunning))
      << "a thread runs only after an assignment";
  EXPECT_TRUE(IsValidStreamThreadTransition(T::kPartitionsAssigned, T::kRunning));
  EXPECT_TRUE(IsValidStreamThreadTransition(T::kRunning, T::kPartitionsAssigned));
  EXPECT_FALSE(IsValidStreamThreadTransition(T::kRunning, T::kDead)) << "PENDING_SHUTDOWN first";
  EXPECT_TRUE(IsValidStreamThreadTransition(T::kPendingShutdown, T::kDead));
  for (int to = 0; to < 6; ++to) {
    EXPECT_FALSE(IsValidStreamThreadTransition(T::kDead, static_cast<T>(to)));
  }
}

TEST(RuntimeStateTest, ClientIsRunningOnlyWhenEveryLiveThreadRuns) {
  EXPECT_EQ(DerivedRuntimeState(R::kRebalancing, {T::kRunning, T::kPartitionsAssigned}),
            R::kRebalancing)
      << "a thread whose actives still restore keeps the client REBALANCING";
  EXPECT_EQ(DerivedRuntimeState(R::kRunning, {T::kRunning, T::kPartitionsAssigned}),
            R::kRebalancing);
  EXPECT_EQ(DerivedRuntimeState(R::kRebalancing, {T::kRunning, T::kRunning}), R::kRunning);
  EXPECT_EQ(DerivedRuntimeState(R::kRebalancing, {T::kRunning, T::kDead}), R::kRunning);
  EXPECT_EQ(DerivedRuntimeState(R::kRebalancing, {T::kRunning, T::kPendingShutdown}),
            R::kRunning)
      << "Kafka's maybeSetRunning passes over a thread shutting down while another runs";
  EXPECT_EQ(DerivedRuntimeState(R::kRunning, {T::kRunning, T::kStarting}), R::kRunning)
      << "a starting replacement does not make it REBALANCING";
  EXPECT_EQ(DerivedRuntimeState(R::kRebalancing, {T::kRunning, T::kStarting}), R::kRebalancing)
      << "nor RUNNING";
  EXPECT_EQ(DerivedRuntimeState(R::kPendingShutdown, {T::kRunning}), R::kPendingShutdown)
      << "only a running client follows its threads";
  EXPECT_EQ(DerivedRuntimeState(R::kPendingError, {T::kPartitionsAssigned}), R::kPendingError);
}

}  // namespace
}  // namespace restoresim
