// The fake group's leader-assignor hook (fake_group.h): when every member offers an assignor
// of one name, the leader's (first joined) computes each generation over every member's
// subscription; otherwise, or when it fails, the group's default round-robin assignment.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fakes/fake_broker.h"
#include "fakes/fake_broker_test_util.h"
#include "sim/sim_test_util.h"
#include "sim/virtual_clock.h"

namespace restoresim::fakes {
namespace {

using sim::RunUnderSim;
using sim::TestRun;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Gives every partition to the member whose user data is "all" (or to nobody), and records
// what it was called with: a stand-in for a real assignor, to see what the group hands it.
class TakeAllAssignor final : public GroupAssignor {
 public:
  explicit TakeAllAssignor(std::string name = "take-all") : name_(std::move(name)) {}
  std::string Name() const override { return name_; }
  absl::StatusOr<std::map<std::string, Assignment>> Assign(
      const std::string& leader, const std::map<std::string, GroupMemberSubscription>& members,
      const GroupAssignorContext& cluster) override {
    ++calls;
    last_leader = leader;
    last_members = members;
    end_of_t0 = cluster.EndOffset({"t", 0});
    if (fail) return absl::InternalError("assignor broke");
    std::map<std::string, Assignment> out;
    for (const auto& [id, sub] : members) {
      if (sub.user_data != "all") continue;
      for (int32_t p = 0; p < cluster.PartitionCount("t"); ++p) {
        out[id].partitions.push_back({"t", p});
      }
      out[id].user_data = "standby=0_1";
    }
    if (assign_unknown_member) out["nobody"] = Assignment{};
    return out;
  }

  int calls = 0;
  bool fail = false;
  bool assign_unknown_member = false;
  std::string last_leader;
  std::map<std::string, GroupMemberSubscription> last_members;
  std::optional<int64_t> end_of_t0;

 private:
  std::string name_;
};

ConsumerConfig Config(const std::string& id, GroupAssignor* assignor) {
  return ConsumerConfig{.client_id = id, .auto_offset_reset = OffsetReset::kEarliest,
                        .assignor = assignor};
}

void WithBroker(const std::function<void(FakeBroker&)>& body) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    FakeBroker broker(clock, nullptr, {});
    EXPECT_TRUE(broker.CreateTopic("t", 2).ok());
    EXPECT_TRUE(broker.Append({"t", 0}, "k", "v", 0).ok());
    body(broker);
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

void PollOnce(MainConsumer& consumer) { EXPECT_TRUE(consumer.Poll(0).ok()); }

TEST(FakeGroupAssignorTest, LeadersAssignorComputesGenerationsWhenEveryMemberOffersIt) {
  WithBroker([](FakeBroker& broker) {
    TakeAllAssignor leader_assignor;
    TakeAllAssignor other_assignor;
    TextListener a_events, b_events;
    auto a = broker.NewMainConsumer("g", Config("a", &leader_assignor));
    auto b = broker.NewMainConsumer("g", Config("b", &other_assignor));
    ASSERT_TRUE(a->SetSubscriptionUserData("none").ok());
    ASSERT_TRUE(a->Subscribe({"t"}, &a_events).ok());
    ASSERT_TRUE(b->SetSubscriptionUserData("all").ok());  // set before it subscribes
    ASSERT_TRUE(b->Subscribe({"t"}, &b_events).ok());
    EXPECT_EQ(other_assignor.calls, 0) << "only the leader's assignor runs";
    EXPECT_EQ(leader_assignor.last_leader, "a-1");
    ASSERT_EQ(leader_assignor.last_members.size(), 2u);
    EXPECT_EQ(leader_assignor.last_members.at("b-2").user_data, "all");
    EXPECT_THAT(leader_assignor.last_members.at("b-2").topics, ElementsAre("t"));
    EXPECT_EQ(leader_assignor.end_of_t0, 1) << "the cluster view reads end offsets";
    PollOnce(*a);
    PollOnce(*b);
    EXPECT_THAT(b_events.events, ElementsAre("assigned[t-0,t-1]/standby=0_1"));
    EXPECT_TRUE(a_events.events.back() == "assigned[]") << a_events.events.back();
  });
}

TEST(FakeGroupAssignorTest, WithoutEveryMemberOfferingItTheGroupStaysRoundRobin) {
  WithBroker([](FakeBroker& broker) {
    TakeAllAssignor assignor;
    TakeAllAssignor other("another-protocol");
    TextListener a_events, b_events, c_events;
    auto a = broker.NewMainConsumer("g", Config("a", &assignor));
    auto b = broker.NewMainConsumer("g", Config("b", nullptr));
    ASSERT_TRUE(a->SetSubscriptionUserData("all").ok());
    ASSERT_TRUE(a->Subscribe({"t"}, &a_events).ok());
    EXPECT_EQ(assignor.calls, 1) << "alone, the leader offers it";
    ASSERT_TRUE(b->Subscribe({"t"}, &b_events).ok());
    EXPECT_EQ(assignor.calls, 1) << "b offers none: round-robin";
    PollOnce(*a);
    PollOnce(*b);
    PollOnce(*a);
    EXPECT_THAT(a->Assignment(), ElementsAre(TopicPartition{"t", 0}));
    b->Close();
    auto c = broker.NewMainConsumer("g", Config("c", &other));
    ASSERT_TRUE(c->Subscribe({"t"}, &c_events).ok());
    EXPECT_EQ(assignor.calls, 2) << "after b left a ran alone; c's assignor has another name";
  });
}

TEST(FakeGroupAssignorTest, EnforceRebalanceRunsTheAssignorOnTheLatestUserData) {
  WithBroker([](FakeBroker& broker) {
    TakeAllAssignor assignor;
    TextListener a_events, b_events;
    auto a = broker.NewMainConsumer("g", Config("a", &assignor));
    auto b = broker.NewMainConsumer("g", Config("b", &assignor));
    ASSERT_TRUE(a->SetSubscriptionUserData("all").ok());
    ASSERT_TRUE(a->Subscribe({"t"}, &a_events).ok());
    ASSERT_TRUE(b->Subscribe({"t"}, &b_events).ok());
    PollOnce(*a);
    PollOnce(*b);
    EXPECT_EQ(a->Assignment().size(), 2u);
    const int32_t generation = broker.Generation("g");
    ASSERT_TRUE(a->SetSubscriptionUserData("none").ok());
    ASSERT_TRUE(b->SetSubscriptionUserData("all").ok());
    EXPECT_EQ(broker.Generation("g"), generation) << "user data alone starts nothing";
    ASSERT_TRUE(b->EnforceRebalance().ok());
    EXPECT_GT(broker.Generation("g"), generation);
    for (int i = 0; i < 3; ++i) {
      PollOnce(*a);
      PollOnce(*b);
    }
    EXPECT_TRUE(a->Assignment().empty());
    EXPECT_EQ(b->Assignment().size(), 2u) << "moved cooperatively, once a gave them up";
  });
}

TEST(FakeGroupAssignorTest, AFailedOrInvalidAssignmentFallsBackToRoundRobin) {
  WithBroker([](FakeBroker& broker) {
    TakeAllAssignor assignor;
    assignor.fail = true;
    TextListener a_events;
    auto a = broker.NewMainConsumer("g", Config("a", &assignor));
    ASSERT_TRUE(a->SetSubscriptionUserData("all").ok());
    ASSERT_TRUE(a->Subscribe({"t"}, &a_events).ok());
    PollOnce(*a);
    EXPECT_EQ(a->Assignment().size(), 2u) << "round-robin over the one member";
    assignor.fail = false;
    assignor.assign_unknown_member = true;
    ASSERT_TRUE(a->SetSubscriptionUserData("none").ok());
    ASSERT_TRUE(a->EnforceRebalance().ok());
    PollOnce(*a);
    EXPECT_EQ(a->Assignment().size(), 2u) << "an assignment naming a stranger is refused";
    EXPECT_EQ(assignor.calls, 2);
  });
}

TEST(FakeGroupAssignorTest, GroupCoordinatorReportsWhyItFellBack) {
  GroupCoordinator group("g", [](const std::string&) { return 2; });
  TakeAllAssignor assignor;
  assignor.fail = true;
  group.Join("a", {"t"}, &assignor, "all");
  EXPECT_TRUE(group.UsesLeaderAssignor());
  EXPECT_THAT(group.last_assignor_error().message(), HasSubstr("assignor broke"));
  assignor.fail = false;
  ASSERT_TRUE(group.EnforceRebalance("a-1").ok());
  EXPECT_TRUE(group.last_assignor_error().ok());
  EXPECT_FALSE(group.EnforceRebalance("nobody").ok());
  EXPECT_FALSE(group.SetUserData("nobody", "x").ok());
}

TEST(FakeGroupAssignorTest, ManualModeIgnoresAssignors) {
  GroupCoordinator group("g", [](const std::string&) { return 2; });
  group.set_manual(true);
  TakeAllAssignor assignor;
  group.Join("a", {"t"}, &assignor, "all");
  ASSERT_TRUE(group.EnforceRebalance("a-1").ok());
  EXPECT_EQ(assignor.calls, 0);
  EXPECT_EQ(group.generation(), 0);
}

}  // namespace
}  // namespace restoresim::fakes
