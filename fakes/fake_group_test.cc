// Consumer groups on the fake broker, scenario-driven: the default assignor, manual
// generations with user_data, two rebalances between two polls, lost members, commits and
// ownership.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/sync/thread.h"
#include "fakes/fake_broker.h"
#include "fakes/fake_broker_test_util.h"
#include "fakes/fake_group.h"
#include "sim/sim_test_util.h"
#include "sim/virtual_clock.h"

namespace restoresim::fakes {
namespace {

using sim::RunUnderSim;
using sim::TestRun;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ConsumerConfig Config(const std::string& id) {
  ConsumerConfig config;
  config.client_id = id;
  config.auto_offset_reset = OffsetReset::kEarliest;
  return config;
}

// Runs `body` with a broker holding topic "t" of four partitions, under the simulator.
void WithBroker(const std::function<void(FakeBroker&)>& body) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    FakeBroker broker(clock, nullptr, {});
    EXPECT_TRUE(broker.CreateTopic("t", 4).ok());
    body(broker);
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

void PollOnce(MainConsumer& consumer) {
  absl::StatusOr<PollResult> result = consumer.Poll(0);
  EXPECT_TRUE(result.ok()) << result.status();
}

TEST(FakeGroupTest, AStreamsGroupMemberJoinsTheStreamsCoordinatorNotTheClassicGroup) {
  WithBroker([](FakeBroker& broker) {
    ConsumerConfig config = Config("a");
    config.group_protocol = GroupProtocol::kStreams;
    config.process_id = "p";
    TextListener events;
    auto consumer = broker.NewMainConsumer("g", config);
    ASSERT_TRUE(consumer->Subscribe({"t"}, &events).ok());
    PollOnce(*consumer);
    EXPECT_THAT(broker.Members("g"), IsEmpty()) << "not a classic member";
    EXPECT_THAT(broker.StreamsMembers("g"), ElementsAre("a-streams-1"));
    EXPECT_THAT(events.events, ElementsAre("assigned[t-0,t-1,t-2,t-3]"));
  });
}

TEST(FakeGroupTest, DefaultAssignorSplitsRoundRobinAndTheFirstMemberSeesRevokedThenAssigned) {
  WithBroker([](FakeBroker& broker) {
    TextListener first_events;
    TextListener second_events;
    auto first = broker.NewMainConsumer("g", Config("a"));
    auto second = broker.NewMainConsumer("g", Config("b"));
    ASSERT_TRUE(first->Subscribe({"t"}, &first_events).ok());
    PollOnce(*first);
    ASSERT_TRUE(second->Subscribe({"t"}, &second_events).ok());
    EXPECT_THAT(broker.Members("g"), ElementsAre("a-1", "b-2")) << "deterministic member ids";
    EXPECT_EQ(broker.Generation("g"), 2);
    PollOnce(*first);
    PollOnce(*second);
    EXPECT_THAT(first_events.events,
                ElementsAre("assigned[t-0,t-1,t-2,t-3]", "revoked[t-1,t-3]", "assigned[t-0,t-2]"));
    // Cooperative: the second member's first generation leaves out what the first still held;
    // a follow-up grants it once the first member has given it up.
    EXPECT_THAT(second_events.events, ElementsAre("assigned[]", "assigned[t-1,t-3]"));
    EXPECT_THAT(second->Assignment(), ElementsAre(TopicPartition{"t", 1}, TopicPartition{"t", 3}));

    second->Close();
    EXPECT_THAT(broker.Members("g"), ElementsAre("a-1"));
    PollOnce(*first);
    EXPECT_EQ(first_events.events.back(), "assigned[t-0,t-1,t-2,t-3]");
  });
}

// Found by running the conformance suite against Kafka: the follow-up generation of a
// cooperative rebalance is one generation of the whole group (every member rejoins), so a
// member whose assignment did not change is told it again. The fake used to tell only the
// member that gained partitions, each follow-up under its own generation number.
TEST(FakeGroupTest, FollowUpGenerationIsDeliveredToEveryMemberAsInKafka) {
  WithBroker([](FakeBroker& broker) {
    TextListener first_events;
    TextListener second_events;
    auto first = broker.NewMainConsumer("g", Config("a"));
    auto second = broker.NewMainConsumer("g", Config("b"));
    ASSERT_TRUE(first->Subscribe({"t"}, &first_events).ok());
    PollOnce(*first);
    ASSERT_TRUE(second->Subscribe({"t"}, &second_events).ok());
    PollOnce(*first);   // revokes t-1 and t-3: the follow-up generation starts
    EXPECT_EQ(broker.Generation("g"), 3) << "one follow-up generation for the whole group";
    PollOnce(*second);
    PollOnce(*first);
    EXPECT_THAT(first_events.events,
                ElementsAre("assigned[t-0,t-1,t-2,t-3]", "revoked[t-1,t-3]", "assigned[t-0,t-2]",
                            "assigned[t-0,t-2]"));
    EXPECT_THAT(second_events.events, ElementsAre("assigned[]", "assigned[t-1,t-3]"));
  });
}

TEST(FakeGroupTest, TwoRebalancesBetweenTwoPollsAreBothDeliveredInOrder) {
  WithBroker([](FakeBroker& broker) {
    broker.SetManualAssignment("g", true);
    TextListener events;
    auto first = broker.NewMainConsumer("g", Config("a"));
    auto second = broker.NewMainConsumer("g", Config("b"));
    ASSERT_TRUE(first->Subscribe({"t"}, &events).ok());
    ASSERT_TRUE(second->Subscribe({"t"}, nullptr).ok());
    EXPECT_EQ(broker.Generation("g"), 0) << "manual mode: joining assigns nothing";
    ASSERT_TRUE(broker
                    .Rebalance("g", {{"a-1", Assignment{Partitions("t", {0, 1}), "gen1"}},
                                     {"b-2", Assignment{Partitions("t", {2, 3}), ""}}})
                    .ok());
    ASSERT_TRUE(broker
                    .Rebalance("g", {{"a-1", Assignment{Partitions("t", {2}), "gen2"}},
                                     {"b-2", Assignment{Partitions("t", {0, 1, 3}), ""}}})
                    .ok());
    PollOnce(*first);
    EXPECT_THAT(events.events,
                ElementsAre("assigned[t-0,t-1]/gen1", "revoked[t-0,t-1]", "assigned[t-2]/gen2"));
    EXPECT_THAT(first->Assignment(), ElementsAre(TopicPartition{"t", 2}));
    EXPECT_EQ(broker.Generation("g"), 2);
  });
}

// The scenarios' tail waits for this before it checks convergence: a member that has not yet
// polled the latest generation still acts on the previous one.
TEST(FakeGroupTest, SettledOnlyOnceEveryMemberTookAndAcknowledgedEveryGeneration) {
  WithBroker([](FakeBroker& broker) {
    broker.SetManualAssignment("g", true);
    auto a = broker.NewMainConsumer("g", Config("a"));
    auto b = broker.NewMainConsumer("g", Config("b"));
    ASSERT_TRUE(a->Subscribe({"t"}, nullptr).ok());
    ASSERT_TRUE(b->Subscribe({"t"}, nullptr).ok());
    EXPECT_TRUE(broker.PeekGroupSettled("g"));
    EXPECT_TRUE(broker.PeekGroupSettled("no-such-group"));
    ASSERT_TRUE(broker
                    .Rebalance("g", {{"a-1", Assignment{Partitions("t", {0, 1}), ""}},
                                     {"b-2", Assignment{Partitions("t", {2, 3}), ""}}})
                    .ok());
    EXPECT_FALSE(broker.PeekGroupSettled("g"));
    PollOnce(*a);
    EXPECT_FALSE(broker.PeekGroupSettled("g")) << "b has not polled it";
    PollOnce(*b);
    EXPECT_TRUE(broker.PeekGroupSettled("g"));
    // t-1 moves from a to b: b's share of it is held back until a has given it up.
    ASSERT_TRUE(broker
                    .Rebalance("g", {{"a-1", Assignment{Partitions("t", {0}), ""}},
                                     {"b-2", Assignment{Partitions("t", {1, 2, 3}), ""}}})
                    .ok());
    PollOnce(*b);
    EXPECT_THAT(b->Assignment(), ElementsAre(TopicPartition{"t", 2}, TopicPartition{"t", 3}));
    EXPECT_FALSE(broker.PeekGroupSettled("g")) << "t-1 held back, a has not polled";
    PollOnce(*a);
    EXPECT_FALSE(broker.PeekGroupSettled("g")) << "b's follow-up generation is pending";
    PollOnce(*b);
    EXPECT_EQ(b->Assignment().size(), 3u);
    // The follow-up generation is every member's (as in Kafka): a takes part in it too.
    EXPECT_FALSE(broker.PeekGroupSettled("g")) << "a has not polled the follow-up generation";
    PollOnce(*a);
    EXPECT_TRUE(broker.PeekGroupSettled("g"));
  });
}

// A generation that changes only a member's user data (its standbys) leaves its partitions as
// they were: the group is not settled until the member acknowledged it (its callbacks returned,
// so its stream thread wants the new standbys). Settled compared only the partitions taken and
// delivered, and said settled between the take and the acknowledgement
// (scenario.eos_members_lost_at_any_moment random seed 145: the tail saw the group converged
// while a member's listener had not yet created the standby the last generation gave it).
TEST(FakeGroupTest, AGenerationChangingOnlyUserDataIsUnsettledUntilAcknowledged) {
  GroupCoordinator group("g", [](const std::string&) { return 4; });
  group.set_manual(true);
  const std::string a = group.Join("a", {"t"});
  const std::string b = group.Join("b", {"t"});
  auto take_and_ack = [&](const std::string& id) {
    bool must_rejoin = false;
    (void)group.TakeEvents(id, &must_rejoin);
    (void)group.Acknowledge(id);
  };
  ASSERT_TRUE(group.Rebalance({{a, Assignment{Partitions("t", {0}), "standbys:"}},
                               {b, Assignment{Partitions("t", {1}), "standbys:"}}})
                  .ok());
  take_and_ack(a);
  take_and_ack(b);
  ASSERT_TRUE(group.Settled());
  ASSERT_TRUE(group.Rebalance({{a, Assignment{Partitions("t", {0}), "standbys:t-1"}},
                               {b, Assignment{Partitions("t", {1}), "standbys:"}}})
                  .ok());
  take_and_ack(b);
  EXPECT_FALSE(group.Settled()) << "a has not taken its generation";
  bool must_rejoin = false;
  EXPECT_EQ(group.TakeEvents(a, &must_rejoin).size(), 1u);
  EXPECT_FALSE(group.Settled()) << "a took its generation but has not acknowledged it";
  (void)group.Acknowledge(a);
  EXPECT_TRUE(group.Settled());
}

TEST(FakeGroupTest, RebalanceRejectsUnknownMembersAndOverlaps) {
  WithBroker([](FakeBroker& broker) {
    broker.SetManualAssignment("g", true);
    auto member = broker.NewMainConsumer("g", Config("a"));
    ASSERT_TRUE(member->Subscribe({"t"}, nullptr).ok());
    EXPECT_EQ(broker.Rebalance("g", {{"ghost-9", Assignment{}}}).code(),
              absl::StatusCode::kNotFound);
    EXPECT_EQ(broker.Rebalance("g", {{"a-1", Assignment{Partitions("t", {1, 1}), ""}}}).code(),
              absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(broker.Rebalance("g", {{"a-1", Assignment{Partitions("t", {9}), ""}}}).code(),
              absl::StatusCode::kNotFound);
    EXPECT_EQ(broker.LoseMember("g", "ghost-9").code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(broker.Generation("g"), 0) << "a rejected rebalance installs nothing";
  });
}

TEST(FakeGroupTest, LostMemberSeesLostThenRejoinsEmptyUntilTheNextRebalance) {
  WithBroker([](FakeBroker& broker) {
    broker.SetManualAssignment("g", true);
    TextListener events;
    auto member = broker.NewMainConsumer("g", Config("a"));
    ASSERT_TRUE(member->Subscribe({"t"}, &events).ok());
    ASSERT_TRUE(broker.Rebalance("g", {{"a-1", Assignment{Partitions("t", {0, 1}), ""}}}).ok());
    PollOnce(*member);
    ASSERT_TRUE(broker.LoseMember("g", "a-1").ok());
    EXPECT_THAT(broker.Members("g"), IsEmpty());
    absl::Status zombie = member->CommitSync({{{"t", 0}, 1}});
    EXPECT_EQ(zombie.code(), absl::StatusCode::kFailedPrecondition)
        << "a lost member cannot commit";
    EXPECT_THAT(std::string(zombie.message()), HasSubstr("not owner"));
    PollOnce(*member);
    EXPECT_THAT(events.events, ElementsAre("assigned[t-0,t-1]", "lost[t-0,t-1]"));
    EXPECT_THAT(member->Assignment(), IsEmpty());
    EXPECT_THAT(broker.Members("g"), ElementsAre("a-1")) << "rejoined at that poll";
    ASSERT_TRUE(broker.Rebalance("g", {{"a-1", Assignment{Partitions("t", {3}), ""}}}).ok());
    PollOnce(*member);
    EXPECT_EQ(events.events.back(), "assigned[t-3]");
  });
}

TEST(FakeGroupTest, WithTheDefaultAssignorALostMembersPartitionsMoveAndItRejoins) {
  WithBroker([](FakeBroker& broker) {
    TextListener lost_events;
    TextListener other_events;
    auto lost = broker.NewMainConsumer("g", Config("a"));
    auto other = broker.NewMainConsumer("g", Config("b"));
    ASSERT_TRUE(lost->Subscribe({"t"}, &lost_events).ok());
    ASSERT_TRUE(other->Subscribe({"t"}, &other_events).ok());
    PollOnce(*lost);
    PollOnce(*other);
    ASSERT_TRUE(broker.LoseMember("g", "a-1").ok());
    PollOnce(*other);
    EXPECT_EQ(other_events.events.back(), "assigned[t-0,t-1,t-2,t-3]");
    PollOnce(*lost);  // lost, rejoin, and the rejoin's generation, all in one poll
    // The rejoin's generation gives it t-1 and t-3 only once `other` has revoked them.
    EXPECT_THAT(lost_events.events,
                ElementsAre("assigned[t-0,t-1,t-2,t-3]", "revoked[t-1,t-3]", "assigned[t-0,t-2]",
                            "lost[t-0,t-2]", "assigned[]"));
    PollOnce(*other);
    EXPECT_EQ(other_events.events.back(), "assigned[t-0,t-2]");
    PollOnce(*lost);
    EXPECT_EQ(lost_events.events.back(), "assigned[t-1,t-3]");
    EXPECT_THAT(broker.Members("g"), ElementsAre("b-2", "a-1"));
  });
}

TEST(FakeGroupTest, CommitsNeedOwnershipAndRevokedPartitionsCanBeCommittedInTheCallback) {
  WithBroker([](FakeBroker& broker) {
    broker.SetManualAssignment("g", true);
    TextListener events;
    auto member = broker.NewMainConsumer("g", Config("a"));
    events.on_revoked = [&](const std::vector<TopicPartition>& revoked) {
      for (const TopicPartition& tp : revoked) {
        EXPECT_TRUE(member->CommitSync({{tp, 5}}).ok()) << "still owned inside the callback";
      }
      EXPECT_EQ(member->Poll(0).status().code(), absl::StatusCode::kFailedPrecondition)
          << "no poll from a callback";
    };
    ASSERT_TRUE(member->Subscribe({"t"}, &events).ok());
    ASSERT_TRUE(broker.Rebalance("g", {{"a-1", Assignment{Partitions("t", {0, 1}), ""}}}).ok());
    absl::Status early = member->CommitSync({{{"t", 0}, 1}});
    EXPECT_EQ(early.code(), absl::StatusCode::kFailedPrecondition)
        << "owned only once a poll delivered the assignment";
    PollOnce(*member);
    EXPECT_TRUE(member->CommitSync({{{"t", 0}, 1}}).ok());
    absl::Status foreign = member->CommitSync({{{"t", 2}, 1}});
    EXPECT_EQ(foreign.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(foreign.message()), HasSubstr("not owner: t-2"));
    EXPECT_EQ(member->CommitSync({{{"t", 0}, -1}}).code(), absl::StatusCode::kInvalidArgument);
    ASSERT_TRUE(broker.Rebalance("g", {{"a-1", Assignment{Partitions("t", {1}), ""}}}).ok());
    PollOnce(*member);
    EXPECT_EQ(broker.CommittedOffsets("g"), (std::map<TopicPartition, int64_t>{{{"t", 0}, 5}}));
    absl::StatusOr<std::map<TopicPartition, int64_t>> committed =
        member->Committed(Partitions("t", {0, 1}));
    ASSERT_TRUE(committed.ok());
    EXPECT_EQ(*committed, (std::map<TopicPartition, int64_t>{{{"t", 0}, 5}}));
  });
}

TEST(FakeGroupTest, ClosingFromARebalanceCallbackLeavesTheGroup) {
  WithBroker([](FakeBroker& broker) {
    broker.SetManualAssignment("g", true);
    TextListener events;
    auto member = broker.NewMainConsumer("g", Config("a"));
    events.on_revoked = [&](const std::vector<TopicPartition>&) { member->Close(); };
    ASSERT_TRUE(member->Subscribe({"t"}, &events).ok());
    ASSERT_TRUE(broker.Rebalance("g", {{"a-1", Assignment{Partitions("t", {0}), ""}}}).ok());
    ASSERT_TRUE(broker.Rebalance("g", {{"a-1", Assignment{Partitions("t", {1}), ""}}}).ok());
    EXPECT_EQ(member->Poll(0).status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(events.events, ElementsAre("assigned[t-0]", "revoked[t-0]"));
    EXPECT_THAT(member->Assignment(), IsEmpty());
    EXPECT_THAT(broker.Members("g"), IsEmpty());
  });
}

TEST(FakeGroupTest, NewlyAssignedPartitionsStartAtTheCommittedOffset) {
  WithBroker([](FakeBroker& broker) {
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(broker.Append({"t", 0}, "k", "v", i).ok());
    broker.SetManualAssignment("g", true);
    auto first = broker.NewMainConsumer("g", Config("a"));
    ASSERT_TRUE(first->Subscribe({"t"}, nullptr).ok());
    ASSERT_TRUE(broker.Rebalance("g", {{"a-1", Assignment{Partitions("t", {0}), ""}}}).ok());
    PollOnce(*first);
    ASSERT_TRUE(first->CommitSync({{{"t", 0}, 6}}).ok());
    auto second = broker.NewMainConsumer("g", Config("b"));
    ASSERT_TRUE(second->Subscribe({"t"}, nullptr).ok());
    ASSERT_TRUE(broker.Rebalance("g", {{"b-2", Assignment{Partitions("t", {0}), ""}}}).ok());
    PollOnce(*first);  // gives t-0 up; only then does b-2 get it
    absl::StatusOr<PollResult> result = second->Poll(0);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_EQ(result->RecordCount(), 4u);
    EXPECT_EQ(result->partitions[0].records[0].offset, 6);
  });
}

// No partition is ever owned by two active members: a move waits for the old owner to revoke
// (and commit, in its callback) before the new owner gets it — Kafka's cooperative protocol.
TEST(FakeGroupTest, AMovedPartitionWaitsUntilItsOldOwnerGaveItUp) {
  WithBroker([](FakeBroker& broker) {
    broker.SetManualAssignment("g", true);
    TextListener a_events;
    TextListener b_events;
    auto a = broker.NewMainConsumer("g", Config("a"));
    auto b = broker.NewMainConsumer("g", Config("b"));
    ASSERT_TRUE(a->Subscribe({"t"}, &a_events).ok());
    ASSERT_TRUE(b->Subscribe({"t"}, &b_events).ok());
    ASSERT_TRUE(broker.Rebalance("g", {{"a-1", Assignment{Partitions("t", {0, 1}), ""}},
                                       {"b-2", Assignment{Partitions("t", {2}), ""}}})
                    .ok());
    PollOnce(*a);
    PollOnce(*b);
    ASSERT_TRUE(broker.Rebalance("g", {{"a-1", Assignment{Partitions("t", {1}), ""}},
                                       {"b-2", Assignment{Partitions("t", {0, 2}), "x"}}})
                    .ok());
    PollOnce(*b);
    EXPECT_EQ(b_events.events.back(), "assigned[t-2]/x") << "t-0 is still a-1's";
    PollOnce(*a);
    EXPECT_EQ(a_events.events.back(), "assigned[t-1]");
    PollOnce(*b);
    EXPECT_EQ(b_events.events.back(), "assigned[t-0,t-2]/x") << "the follow-up keeps user_data";
    EXPECT_THAT(b->Assignment(), ElementsAre(TopicPartition{"t", 0}, TopicPartition{"t", 2}));
  });
}

TEST(FakeGroupTest, PollWaitingForDataWakesForARebalance) {
  TimeNs assigned_at_ns = -1;
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    FakeBroker broker(clock, nullptr, {});
    EXPECT_TRUE(broker.CreateTopic("t", 1).ok());
    broker.SetManualAssignment("g", true);
    TextListener events;
    auto member = broker.NewMainConsumer("g", Config("a"));
    ASSERT_TRUE(member->Subscribe({"t"}, &events).ok());
    Thread coordinator("coordinator", [&]() {
      clock.SleepFor(2 * kSecond);
      EXPECT_TRUE(broker.Rebalance("g", {{"a-1", Assignment{Partitions("t", {0}), ""}}}).ok());
      clock.SleepFor(kSecond);
      EXPECT_TRUE(broker.Append({"t", 0}, "k", "v", 0).ok());
    });
    absl::StatusOr<PollResult> result = member->Poll(10 * kSecond);
    assigned_at_ns = clock.NowNs();
    EXPECT_TRUE(result.ok() && result->RecordCount() == 1);
    EXPECT_THAT(events.events, ElementsAre("assigned[t-0]"));
    coordinator.Join();
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_EQ(assigned_at_ns, 3 * kSecond) << "assigned at 2 s, then its record at 3 s";
}

}  // namespace
}  // namespace restoresim::fakes
