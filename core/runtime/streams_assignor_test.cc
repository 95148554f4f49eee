// Tests of the high-availability task assignment, named after the behaviours Kafka's
// HighAvailabilityTaskAssignorTest and TaskMovementTest pin down.
#include "core/runtime/streams_assignor.h"

#include <gtest/gtest.h>

#include "core/runtime/assignment_info.h"

namespace restoresim {
namespace {

const TaskId k0{0, 0};
const TaskId k1{0, 1};
const TaskId k2{0, 2};
const TaskId k3{0, 3};
// An end-offset sum no new client is within acceptable.recovery.lag (10 000) of.
constexpr int64_t kFar = 100000;

std::map<TaskId, int64_t> Ends(int32_t tasks, int64_t end) {
  std::map<TaskId, int64_t> out;
  for (int32_t p = 0; p < tasks; ++p) out[TaskId{0, p}] = end;
  return out;
}

AssignorClient Running(std::set<TaskId> tasks) {
  AssignorClient c;
  for (TaskId t : tasks) c.offset_sums[t] = kLatestOffset;
  return c;
}

TaskAssignment Assign(const std::map<std::string, AssignorClient>& clients,
                      const std::map<TaskId, int64_t>& ends, TaskAssignorConfig config) {
  absl::StatusOr<TaskAssignment> a = AssignTasks(clients, ends, config);
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : TaskAssignment{};
}

// Every task has exactly one active, and no client holds a task twice.
void ExpectWellFormed(const TaskAssignment& a, int32_t tasks) {
  for (int32_t p = 0; p < tasks; ++p) {
    int actives = 0;
    for (const auto& [id, c] : a.clients) {
      actives += c.actives.contains(TaskId{0, p}) ? 1 : 0;
      EXPECT_FALSE(c.actives.contains(TaskId{0, p}) && c.standbys.contains(TaskId{0, p})) << id;
    }
    EXPECT_EQ(actives, 1) << "task 0_" << p;
  }
}

TEST(StreamsAssignorTest, ActivesStayOnCaughtUpPreviousOwner) {
  // a runs everything; b is new and far behind: the round-robin destination b is not caught
  // up, so its tasks stay on a.
  const auto a = Assign({{"a", Running({k0, k1, k2, k3})}, {"b", {}}}, Ends(4, kFar), {});
  ExpectWellFormed(a, 4);
  EXPECT_EQ(a.clients.at("a").actives, (std::set<TaskId>{k0, k1, k2, k3}));
  EXPECT_TRUE(a.clients.at("b").actives.empty());
  EXPECT_EQ(a.active_movements, 2);
  EXPECT_TRUE(a.probing_rebalance_needed());
}

TEST(StreamsAssignorTest, BalancedWhenEveryClientIsCaughtUp) {
  AssignorClient b;
  for (TaskId t : {k0, k1, k2, k3}) b.offset_sums[t] = kFar - 5;  // lag 5 <= 10000
  const auto a = Assign({{"a", Running({k0, k1, k2, k3})}, {"b", b}}, Ends(4, kFar), {});
  ExpectWellFormed(a, 4);
  EXPECT_EQ(a.clients.at("a").actives.size(), 2u);
  EXPECT_EQ(a.clients.at("b").actives.size(), 2u);
  EXPECT_FALSE(a.probing_rebalance_needed());
}

TEST(StreamsAssignorTest, WarmupIsPlacedWhenBalancedClientIsNotCaughtUp) {
  // No standbys: nothing to swap with, so the destination gets a warm-up.
  const auto a = Assign({{"a", Running({k0, k1})}, {"b", {}}}, Ends(2, kFar),
                        {.num_standby_replicas = 0});
  ExpectWellFormed(a, 2);
  EXPECT_EQ(a.clients.at("a").actives, (std::set<TaskId>{k0, k1}));
  EXPECT_EQ(a.clients.at("b").warmups, (std::set<TaskId>{k1}));
  EXPECT_EQ(a.clients.at("b").standbys, (std::set<TaskId>{k1}));  // sent as a standby
}

TEST(StreamsAssignorTest, MovementSwapsWithCaughtUpStandby) {
  // One standby each: the caught-up previous owner holds the standby of b's balanced task,
  // so they swap and b keeps a (plain) standby, no warm-up.
  const auto a = Assign({{"a", Running({k0, k1})}, {"b", {}}}, Ends(2, kFar),
                        {.num_standby_replicas = 1});
  ExpectWellFormed(a, 2);
  EXPECT_EQ(a.clients.at("a").actives, (std::set<TaskId>{k0, k1}));
  EXPECT_EQ(a.clients.at("b").standbys, (std::set<TaskId>{k0, k1}));
  EXPECT_TRUE(a.clients.at("b").warmups.empty());
  EXPECT_TRUE(a.probing_rebalance_needed());
}

TEST(StreamsAssignorTest, NoMoreThanMaxWarmupReplicas) {
  const auto a = Assign({{"a", Running({k0, k1, k2, k3})}, {"b", {}}, {"c", {}}, {"d", {}}},
                        Ends(4, kFar), {.num_standby_replicas = 0, .max_warmup_replicas = 2});
  ExpectWellFormed(a, 4);
  size_t warmups = 0;
  for (const auto& [id, c] : a.clients) warmups += c.warmups.size();
  EXPECT_EQ(warmups, 2u);
  EXPECT_EQ(a.active_movements, 3);  // b, c and d each had one balanced task
  EXPECT_EQ(a.clients.at("a").actives.size(), 4u);
}

TEST(StreamsAssignorTest, StandbysNeverOnTheActivesClient) {
  const auto a = Assign({{"a", Running({k0, k1})}, {"b", Running({k2, k3})}, {"c", {}}},
                        Ends(4, 0), {.num_standby_replicas = 2});
  ExpectWellFormed(a, 4);
  for (TaskId t : {k0, k1, k2, k3}) {
    int standbys = 0;
    for (const auto& [id, c] : a.clients) standbys += c.standbys.contains(t) ? 1 : 0;
    EXPECT_EQ(standbys, 2) << t.ToString();  // as many as there are other clients
  }
}

TEST(StreamsAssignorTest, FewerStandbysThanAskedWhenTooFewClients) {
  const auto a = Assign({{"a", {}}, {"b", {}}}, Ends(2, 0), {.num_standby_replicas = 3});
  ExpectWellFormed(a, 2);
  EXPECT_EQ(a.clients.at("a").standbys.size() + a.clients.at("b").standbys.size(), 2u);
}

TEST(StreamsAssignorTest, ProbingRebalanceMovesCaughtUpWarmup) {
  // First rebalance: b is behind and gets a warm-up of 0_1.
  const auto first = Assign({{"a", Running({k0, k1})}, {"b", {}}}, Ends(2, kFar),
                            {.num_standby_replicas = 0});
  ASSERT_EQ(first.clients.at("b").warmups, (std::set<TaskId>{k1}));
  // The probing rebalance after b caught up on its warm-up: b takes 0_1 over.
  AssignorClient b;
  b.offset_sums[k1] = kFar;
  const auto probe = Assign({{"a", Running({k0, k1})}, {"b", b}}, Ends(2, kFar),
                            {.num_standby_replicas = 0});
  ExpectWellFormed(probe, 2);
  EXPECT_EQ(probe.clients.at("b").actives, (std::set<TaskId>{k1}));
  EXPECT_FALSE(probe.probing_rebalance_needed());
}

TEST(StreamsAssignorTest, MostCaughtUpClientWhenNoneIsCaughtUp) {
  // Nobody is within acceptable.recovery.lag; b is closer than a for 0_0 (a's balanced task).
  AssignorClient a;
  a.offset_sums[k0] = 0;
  AssignorClient b;
  b.offset_sums[k0] = 900;
  const auto out = Assign({{"a", a}, {"b", b}}, Ends(1, 1000),
                          {.num_standby_replicas = 0, .acceptable_recovery_lag = 10});
  EXPECT_EQ(out.clients.at("b").actives, (std::set<TaskId>{k0}));
  EXPECT_EQ(out.clients.at("a").warmups, (std::set<TaskId>{k0}));
}

TEST(StreamsAssignorTest, OffsetSumPastTheEndCountsAsNoState) {
  AssignorClient c;
  c.offset_sums[k0] = 2000;
  EXPECT_EQ(TaskLag(c, k0, 1000), 1000);
  EXPECT_EQ(TaskLag(Running({k0}), k0, 1000), kLatestOffset);
  EXPECT_EQ(TaskLag(AssignorClient{}, k0, 1000), 1000);
}

TEST(StreamsAssignorTest, BalancesByThreadCapacity) {
  AssignorClient big;
  big.capacity = 3;
  const auto a = Assign({{"a", big}, {"b", {}}}, Ends(4, 0), {});
  ExpectWellFormed(a, 4);
  EXPECT_EQ(a.clients.at("a").actives.size(), 3u);
  EXPECT_EQ(a.clients.at("b").actives.size(), 1u);
}

TEST(StreamsAssignorTest, BadInputIsAnError) {
  EXPECT_FALSE(AssignTasks({}, Ends(1, 0), {}).ok());
  AssignorClient zero;
  zero.capacity = 0;
  EXPECT_FALSE(AssignTasks({{"a", zero}}, Ends(1, 0), {}).ok());
  EXPECT_FALSE(AssignTasks({{"a", {}}}, Ends(1, 0), {.num_standby_replicas = -1}).ok());
}

}  // namespace
}  // namespace restoresim
