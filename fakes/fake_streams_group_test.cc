// The fake broker's streams-group coordinator (fake_streams_group.h) and its sticky task
// assignor (fake_streams_assignor.h), request by request, then the fake streams consumer
// (FakeStreamsGroupConsumer) on the broker: the callbacks the runtime sees, commits, faults.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/sync/thread.h"
#include "fakes/fake_broker.h"
#include "fakes/fake_broker_test_util.h"
#include "fakes/fake_clients.h"
#include "fakes/fake_streams_assignor.h"
#include "fakes/fake_streams_group.h"
#include "sim/sim_test_util.h"
#include "sim/virtual_clock.h"

namespace restoresim::fakes {
namespace {

namespace kp = kafka_protocol;
namespace err = streams_errors;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

StreamsTaskSet Tasks(std::vector<int32_t> partitions) {
  StreamsTaskSet out;
  for (int32_t p : partitions) out.insert({"0", p});
  return out;
}

std::vector<int32_t> Numbers(const std::optional<std::vector<kp::TaskIds>>& ids) {
  std::vector<int32_t> out;
  if (!ids.has_value()) return {-1};  // absent: unchanged
  for (const kp::TaskIds& t : *ids) out.insert(out.end(), t.partitions.begin(), t.partitions.end());
  return out;
}

std::vector<kp::TaskIds> Ids(std::vector<int32_t> partitions) {
  if (partitions.empty()) return {};
  return {kp::TaskIds{.subtopology_id = "0", .partitions = partitions}};
}

// A coordinator over topic "t" of four partitions, heartbeats built as the member builds them.
class Group {
 public:
  explicit Group(int32_t standbys = 0, int32_t session_ms = 45000)
      : coordinator_("g", {.heartbeat_interval_ms = 1000, .session_timeout_ms = session_ms,
                           .num_standby_replicas = standbys},
                     [this](const std::string& topic) { return counts_[topic]; },
                     [this](const std::string& topic, int32_t n) { counts_[topic] = n; }) {
    counts_["t"] = 4;
    counts_["app-changelog"] = 4;
  }
  kp::StreamsGroupHeartbeatResponse Join(const std::string& member, const std::string& process,
                                         int64_t now_ms = 0, kp::Topology topology = Count()) {
    kp::StreamsGroupHeartbeatRequest r{.group_id = "g", .member_id = member, .member_epoch = 0};
    r.rebalance_timeout_ms = 300000;
    r.process_id = process;
    r.topology = std::move(topology);
    r.active_tasks = r.standby_tasks = r.warmup_tasks = std::vector<kp::TaskIds>{};
    return coordinator_.Heartbeat(r, now_ms);
  }
  // A heartbeat at `epoch` reporting what the member owns (nullopt: lists not sent).
  kp::StreamsGroupHeartbeatResponse Beat(
      const std::string& member, int32_t epoch,
      std::optional<std::pair<std::vector<int32_t>, std::vector<int32_t>>> owned,
      int64_t now_ms = 0) {
    kp::StreamsGroupHeartbeatRequest r{.group_id = "g", .member_id = member,
                                       .member_epoch = epoch};
    if (owned.has_value()) {
      r.active_tasks = Ids(owned->first);
      r.standby_tasks = Ids(owned->second);
      r.warmup_tasks = std::vector<kp::TaskIds>{};
    }
    return coordinator_.Heartbeat(r, now_ms);
  }
  static kp::Topology Count() { return StreamsGroupDriver::CountTopology("t", {"app-changelog"}); }
  StreamsGroupCoordinator& coordinator() { return coordinator_; }
  std::map<std::string, int32_t>& counts() { return counts_; }

 private:
  std::map<std::string, int32_t> counts_;
  StreamsGroupCoordinator coordinator_;
};

TEST(StreamsGroupCoordinatorTest, TheFirstMemberGetsEveryTaskActiveAtEpochOne) {
  Group g;
  kp::StreamsGroupHeartbeatResponse r = g.Join("a", "pa");
  EXPECT_EQ(r.error_code, 0);
  EXPECT_EQ(r.member_epoch, 1);
  EXPECT_EQ(r.heartbeat_interval_ms, 1000);
  EXPECT_THAT(Numbers(r.active_tasks), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Numbers(r.standby_tasks), IsEmpty());
  EXPECT_THAT(Numbers(r.warmup_tasks), IsEmpty());
  // Acknowledged: nothing changed, so no task lists.
  r = g.Beat("a", 1, {{{0, 1, 2, 3}, {}}});
  EXPECT_EQ(r.member_epoch, 1);
  EXPECT_THAT(Numbers(r.active_tasks), ElementsAre(-1));
  EXPECT_TRUE(g.coordinator().Settled());
}

// Kafka's reconciliation: the joiner is given its actives only after the first member revoked
// them; meanwhile it holds its standbys (never on the process of their active).
TEST(StreamsGroupCoordinatorTest, AJoinerGetsItsActivesOnlyAfterTheOwnerRevokedThem) {
  Group g(/*standbys=*/1);
  g.Join("a", "pa");
  g.Beat("a", 1, {{{0, 1, 2, 3}, {}}});
  kp::StreamsGroupHeartbeatResponse b = g.Join("b", "pb");
  EXPECT_EQ(b.member_epoch, 2);
  EXPECT_THAT(Numbers(b.active_tasks), IsEmpty()) << "a still owns 2 and 3";
  EXPECT_THAT(Numbers(b.standby_tasks), ElementsAre(0, 1));
  EXPECT_EQ(g.coordinator().Member("b")->state, "UNRELEASED_TASKS");
  // a is asked to revoke 2 and 3, and keeps them as standbys at once (a recycle).
  kp::StreamsGroupHeartbeatResponse a = g.Beat("a", 1, {{{0, 1, 2, 3}, {}}});
  EXPECT_EQ(a.member_epoch, 1) << "the epoch waits for the revocation";
  EXPECT_THAT(Numbers(a.active_tasks), ElementsAre(0, 1));
  EXPECT_THAT(Numbers(a.standby_tasks), ElementsAre(2, 3));
  EXPECT_EQ(g.coordinator().Member("a")->state, "UNREVOKED_TASKS");
  b = g.Beat("b", 2, {{{}, {0, 1}}});
  EXPECT_THAT(Numbers(b.active_tasks), ElementsAre(-1)) << "not released yet";
  a = g.Beat("a", 1, {{{0, 1}, {2, 3}}});  // revoked
  EXPECT_EQ(a.member_epoch, 2);
  EXPECT_EQ(g.coordinator().Member("a")->state, "STABLE");
  b = g.Beat("b", 2, {{{}, {0, 1}}});
  EXPECT_THAT(Numbers(b.active_tasks), ElementsAre(2, 3));
  EXPECT_THAT(Numbers(b.standby_tasks), ElementsAre(0, 1));
  g.Beat("b", 2, {{{2, 3}, {0, 1}}});
  EXPECT_TRUE(g.coordinator().Settled());
}

TEST(StreamsGroupCoordinatorTest, ALeavingMembersTasksGoBackAndItsStandbysArePromoted) {
  Group g(/*standbys=*/1);
  g.Join("a", "pa");
  g.Beat("a", 1, {{{0, 1, 2, 3}, {}}});
  g.Join("b", "pb");
  g.Beat("a", 1, {{{0, 1, 2, 3}, {}}});
  g.Beat("a", 1, {{{0, 1}, {2, 3}}});
  g.Beat("b", 2, {{{}, {0, 1}}});
  kp::StreamsGroupHeartbeatResponse left = g.Beat("b", -1, std::nullopt);
  EXPECT_EQ(left.error_code, 0);
  EXPECT_EQ(left.member_epoch, -1);
  EXPECT_THAT(g.coordinator().member_ids(), ElementsAre("a"));
  kp::StreamsGroupHeartbeatResponse a = g.Beat("a", 2, std::nullopt);
  EXPECT_EQ(a.member_epoch, 3);
  EXPECT_THAT(Numbers(a.active_tasks), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Numbers(a.standby_tasks), IsEmpty()) << "one process: no room for a standby";
  // Leaving twice: the member is gone.
  EXPECT_EQ(g.Beat("b", -1, std::nullopt).error_code, err::kUnknownMemberId);
}

TEST(StreamsGroupCoordinatorTest, StaleAndUnknownMembersAreFencedWithoutChangingTheGroup) {
  Group g;
  g.Join("a", "pa");
  const int32_t epoch = g.coordinator().group_epoch();
  EXPECT_EQ(g.Beat("a", 7, {{{0, 1, 2, 3}, {}}}).error_code, err::kFencedMemberEpoch);
  EXPECT_EQ(g.Beat("x", 1, std::nullopt).error_code, err::kUnknownMemberId);
  EXPECT_EQ(g.coordinator().group_epoch(), epoch);
  g.Join("b", "pb");  // epoch 2 for a once it revoked
  g.Beat("a", 1, {{{0, 1, 2, 3}, {}}});
  g.Beat("a", 1, {{{0, 1}, {}}});
  ASSERT_EQ(g.coordinator().Member("a")->epoch, 2);
  // The previous epoch is taken while what it reports is still assigned (a lost response) ...
  EXPECT_EQ(g.Beat("a", 1, {{{0, 1}, {}}}).error_code, 0);
  // ... and fenced when it reports a task it no longer has.
  EXPECT_EQ(g.Beat("a", 1, {{{0, 1, 2}, {}}}).error_code, err::kFencedMemberEpoch);
}

TEST(StreamsGroupCoordinatorTest, ADifferentTopologyAtTheSameEpochIsRefused) {
  Group g;
  g.Join("a", "pa");
  kp::Topology other = Group::Count();
  other.subtopologies[0].state_changelog_topics[0].topic_configs.pop_back();
  kp::StreamsGroupHeartbeatResponse r = g.Join("b", "pb", 0, other);
  EXPECT_EQ(r.error_code, err::kInvalidRequest);
  EXPECT_EQ(r.error_message, "Topology updates are not supported yet.");
  EXPECT_THAT(g.coordinator().member_ids(), ElementsAre("a")) << "b never joined";
  other.epoch = -1;  // older than the group's: the group's is taken
  EXPECT_EQ(g.Join("b", "pb", 0, other).error_code, 0);
}

TEST(StreamsGroupCoordinatorTest, AMemberWhoseSessionTimesOutIsRemovedAndItsTasksReassigned) {
  Group g(0, /*session_ms=*/10000);
  g.Join("a", "pa", 0);
  g.Join("b", "pb", 9000);
  EXPECT_EQ(g.Beat("b", 2, {{{}, {}}}, 10000).error_code, 0) << "a's session ends at 10000";
  kp::StreamsGroupHeartbeatResponse b = g.Beat("b", 2, {{{}, {}}}, 10001);
  EXPECT_THAT(g.coordinator().member_ids(), ElementsAre("b"));
  EXPECT_THAT(Numbers(b.active_tasks), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(g.Beat("a", 1, {{{0, 1, 2, 3}, {}}}, 10002).error_code, err::kUnknownMemberId);
}

TEST(StreamsGroupCoordinatorTest, CommitsAreCheckedAgainstTheMemberEpochAndEachTasksEpoch) {
  Group g;
  const std::vector<TopicPartition> p2 = Partitions("t", {2});
  EXPECT_EQ(g.coordinator().ValidateOffsetCommit("", -1, p2), 0) << "an empty group";
  g.Join("a", "pa");
  EXPECT_EQ(g.coordinator().ValidateOffsetCommit("a", 1, p2), 0);
  EXPECT_EQ(g.coordinator().ValidateOffsetCommit("a", 2, p2), err::kStaleMemberEpoch);
  EXPECT_EQ(g.coordinator().ValidateOffsetCommit("x", 1, p2), err::kUnknownMemberId);
  EXPECT_EQ(g.coordinator().ValidateOffsetCommit("", -1, p2), err::kUnknownMemberId);
  g.Join("b", "pb");
  g.Beat("a", 1, {{{0, 1, 2, 3}, {}}});
  g.Beat("a", 1, {{{0, 1}, {}}});
  ASSERT_EQ(g.coordinator().Member("a")->epoch, 2);
  // Epoch 1 still commits task 0 (held since epoch 1), not task 2 (no longer held).
  EXPECT_EQ(g.coordinator().ValidateOffsetCommit("a", 1, Partitions("t", {0})), 0);
  EXPECT_EQ(g.coordinator().ValidateOffsetCommit("a", 1, p2), err::kStaleMemberEpoch);
}

TEST(StreamsGroupCoordinatorTest, AMissingSourceTopicIsAStatusAndNoTasks) {
  Group g;
  g.counts().erase("t");
  kp::StreamsGroupHeartbeatResponse r = g.Join("a", "pa");
  EXPECT_EQ(r.error_code, 0);
  ASSERT_EQ(r.status->size(), 1u);
  EXPECT_EQ((*r.status)[0].status_code,
            static_cast<int8_t>(kp::StreamsGroupStatusCode::kMissingSourceTopics));
  EXPECT_THAT(Numbers(r.active_tasks), IsEmpty());
}

TEST(StreamsGroupCoordinatorTest, AMissingChangelogIsCreatedAndTheFirstJoinWaitsForIt) {
  Group g;
  g.counts().erase("app-changelog");
  kp::StreamsGroupHeartbeatResponse r = g.Join("a", "pa");
  ASSERT_EQ(r.status->size(), 1u);
  EXPECT_EQ((*r.status)[0].status_code,
            static_cast<int8_t>(kp::StreamsGroupStatusCode::kMissingInternalTopics));
  EXPECT_THAT(Numbers(r.active_tasks), IsEmpty());
  EXPECT_EQ(g.counts().at("app-changelog"), 4) << "created with the source's partitions";
  r = g.Beat("a", r.member_epoch, {{{}, {}}});
  EXPECT_THAT(*r.status, IsEmpty());
  EXPECT_THAT(Numbers(r.active_tasks), ElementsAre(0, 1, 2, 3)) << "ready: the epoch moved on";
}

TEST(StickyTaskAssignorTest, ActivesStayAndStandbysNeverShareAProcessWithTheirActive) {
  StreamsAssignorTopology topology{.partitions_by_subtopology = {{"0", 4}}, .stateful = {"0"}};
  std::map<std::string, StreamsAssignorMember> members = {
      {"a1", {.process_id = "p1", .previous_active = Tasks({0, 3})}},
      {"a2", {.process_id = "p1", .previous_active = Tasks({1})}},
      {"b", {.process_id = "p2", .previous_active = Tasks({2})}}};
  std::map<std::string, StreamsTargetTasks> out = AssignStickyTasks(members, topology, 1);
  EXPECT_EQ(out["a1"].active, Tasks({0, 3}));
  EXPECT_EQ(out["a2"].active, Tasks({1}));
  EXPECT_EQ(out["b"].active, Tasks({2}));
  // Each task's standby on the other process.
  StreamsTaskSet p1_standby = out["a1"].standby;
  p1_standby.insert(out["a2"].standby.begin(), out["a2"].standby.end());
  EXPECT_EQ(p1_standby, Tasks({2}));
  EXPECT_EQ(out["b"].standby, Tasks({0, 1, 3}));
}

// ---- the consumer on the broker ----

using sim::RunUnderSim;
using sim::TestRun;

ConsumerConfig StreamsConfig(const std::string& id) {
  ConsumerConfig c;
  c.client_id = id;
  c.auto_offset_reset = OffsetReset::kEarliest;
  c.group_protocol = GroupProtocol::kStreams;
  c.process_id = "process-" + id;
  c.changelog_topics = {"app-changelog"};
  return c;
}

// Records callbacks as TextListener does, with the standbys: "assigned[t-0]+standby[t-1]".
class StreamsListener final : public RebalanceListener {
 public:
  void OnPartitionsRevoked(const std::vector<TopicPartition>& partitions) override {
    events.push_back("revoked" + TextListener::Text(partitions));
    if (on_revoked) on_revoked(partitions);
  }
  void OnPartitionsAssigned(const Assignment& a) override {
    events.push_back("assigned" + TextListener::Text(a.partitions) + "+standby" +
                     TextListener::Text(a.standby_partitions));
  }
  void OnPartitionsLost(const std::vector<TopicPartition>& partitions) override {
    events.push_back("lost" + TextListener::Text(partitions));
  }
  std::vector<std::string> events;
  std::function<void(const std::vector<TopicPartition>&)> on_revoked;
};

void WithStreamsBroker(const std::function<void(FakeBroker&)>& body,
                       RandomSource* faults_random = nullptr, BrokerFaults faults = {}) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    BrokerOptions options;
    options.streams_group = {.heartbeat_interval_ms = 1000, .session_timeout_ms = 10000,
                             .num_standby_replicas = 1};
    FakeBroker broker(clock, faults_random, faults, options);
    EXPECT_TRUE(broker.CreateTopic("t", 2).ok());
    EXPECT_TRUE(broker.CreateTopic("app-changelog", 2).ok());
    body(broker);
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

void PollFor(MainConsumer& c, TimeNs ns) {
  absl::StatusOr<PollResult> r = c.Poll(ns);
  EXPECT_TRUE(r.ok()) << r.status();
}

TEST(FakeStreamsGroupConsumerTest, TwoMembersSplitTheTasksAndKeepEachOthersAsStandbys) {
  WithStreamsBroker([](FakeBroker& broker) {
    StreamsListener a_events, b_events;
    auto a = broker.NewMainConsumer("app", StreamsConfig("a"));
    auto b = broker.NewMainConsumer("app", StreamsConfig("b"));
    ASSERT_TRUE(a->Subscribe({"t"}, &a_events).ok());
    PollFor(*a, 0);
    EXPECT_THAT(a_events.events, ElementsAre("assigned[t-0,t-1]+standby[]"));
    // a commits t-1 before it is revoked, so b starts there.
    a_events.on_revoked = [&](const std::vector<TopicPartition>& revoked) {
      EXPECT_TRUE(a->CommitSync({{revoked.at(0), 2}}).ok());
    };
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(broker.Append({"t", 1}, "k", "v", 0).ok());
    ASSERT_TRUE(b->Subscribe({"t"}, &b_events).ok());
    PollFor(*b, 0);
    EXPECT_THAT(b_events.events, ElementsAre("assigned[]+standby[t-0]"));
    size_t b_records = 0;
    for (int i = 0; i < 3; ++i) {
      PollFor(*a, 1 * kSecond);
      absl::StatusOr<PollResult> r = b->Poll(1 * kSecond);
      ASSERT_TRUE(r.ok()) << r.status();
      b_records += r->RecordCount();
    }
    EXPECT_THAT(a_events.events, ElementsAre("assigned[t-0,t-1]+standby[]", "revoked[t-1]",
                                             "assigned[t-0]+standby[t-1]"));
    EXPECT_THAT(b_events.events,
                ElementsAre("assigned[]+standby[t-0]", "assigned[t-1]+standby[t-0]"));
    EXPECT_EQ(b_records, 1u) << "from a's commit at 2";
    EXPECT_TRUE(broker.PeekGroupSettled("app"));
    // b leaves: its task goes back to a, whose standby is promoted.
    b->Close();
    PollFor(*a, 1 * kSecond);
    EXPECT_EQ(a_events.events.back(), "assigned[t-0,t-1]+standby[]");
    EXPECT_THAT(broker.StreamsMembers("app"), ElementsAre("a-streams-1"));
  });
}

TEST(FakeStreamsGroupConsumerTest, ACommitFromAMemberTheGroupRemovedIsRefused) {
  WithStreamsBroker([](FakeBroker& broker) {
    StreamsListener a_events, b_events;
    auto a = broker.NewMainConsumer("app", StreamsConfig("a"));
    auto b = broker.NewMainConsumer("app", StreamsConfig("b"));
    ASSERT_TRUE(a->Subscribe({"t"}, &a_events).ok());
    PollFor(*a, 0);
    ASSERT_TRUE(a->CommitSync({{{"t", 0}, 1}}).ok());
    ASSERT_TRUE(b->Subscribe({"t"}, &b_events).ok());
    PollFor(*b, 12 * kSecond);  // a's session ends meanwhile
    absl::Status s = a->CommitSync({{{"t", 0}, 2}});  // a still thinks it owns t-0
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("UNKNOWN_MEMBER_ID"));
    EXPECT_EQ(broker.CommittedOffsets("app").at({"t", 0}), 1);
  });
}

// Exactly once: the member's id and epoch go with the transaction's offsets, and the streams
// group checks them as it checks a commit.
TEST(FakeStreamsGroupConsumerTest, TransactionalOffsetsAreCheckedAgainstTheStreamsMember) {
  WithStreamsBroker([](FakeBroker& broker) {
    StreamsListener events;
    auto a = broker.NewMainConsumer("app", StreamsConfig("a"));
    ASSERT_TRUE(a->Subscribe({"t"}, &events).ok());
    PollFor(*a, 0);
    auto producer = broker.NewTransactionalProducer({.client_id = "p", .transactional_id = "x"});
    ASSERT_TRUE(producer->InitTransactions(kSecond).ok());
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->SendOffsetsToTransaction({{{"t", 0}, 1}}, a->GroupMetadata()).ok());
    ASSERT_TRUE(producer->CommitTransaction(kSecond).ok());
    EXPECT_EQ(broker.CommittedOffsets("app").at({"t", 0}), 1);
    ConsumerGroupMetadata stale = a->GroupMetadata();
    stale.generation_id += 1;
    ASSERT_TRUE(producer->BeginTransaction().ok());
    absl::Status s = producer->SendOffsetsToTransaction({{{"t", 0}, 2}}, stale);
    EXPECT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("STALE_MEMBER_EPOCH"));
  });
}

TEST(FakeStreamsGroupConsumerTest, AMemberThatStopsHeartbeatingIsFencedAndRejoinsAfterItsLoss) {
  WithStreamsBroker([](FakeBroker& broker) {
    StreamsListener a_events, b_events;
    auto a = broker.NewMainConsumer("app", StreamsConfig("a"));
    auto b = broker.NewMainConsumer("app", StreamsConfig("b"));
    ASSERT_TRUE(a->Subscribe({"t"}, &a_events).ok());
    PollFor(*a, 0);
    ASSERT_TRUE(b->Subscribe({"t"}, &b_events).ok());
    PollFor(*b, 12 * kSecond);  // a sends nothing for longer than its session
    EXPECT_THAT(broker.StreamsMembers("app"), ElementsAre("b-streams-2"));
    EXPECT_EQ(b_events.events.back(), "assigned[t-0,t-1]+standby[]");
    PollFor(*a, 0);  // fenced (UNKNOWN_MEMBER_ID): every partition lost, then a new join
    EXPECT_THAT(a_events.events, ElementsAre("assigned[t-0,t-1]+standby[]", "lost[t-0,t-1]",
                                             "assigned[]+standby[t-0]"))
        << "its active t-1 waits for b to revoke it";
  });
}

TEST(FakeStreamsGroupConsumerTest, AScriptedExpiryFencesTheMemberAtItsNextHeartbeat) {
  WithStreamsBroker([](FakeBroker& broker) {
    StreamsListener events;
    auto a = broker.NewMainConsumer("app", StreamsConfig("a"));
    ASSERT_TRUE(a->Subscribe({"t"}, &events).ok());
    PollFor(*a, 0);
    EXPECT_EQ(broker.ExpireStreamsMember("app", "nobody").code(), absl::StatusCode::kNotFound);
    ASSERT_TRUE(broker.ExpireStreamsMember("app", a->MemberId()).ok());
    PollFor(*a, 2 * kSecond);  // past the next heartbeat (1 s)
    EXPECT_THAT(events.events, ElementsAre("assigned[t-0,t-1]+standby[]", "lost[t-0,t-1]",
                                           "assigned[t-0,t-1]+standby[]"));
  });
}

// A member whose commit was refused (it was dropped from the group) asks EnforceRebalance, as the
// runtime does after a lost transaction: its next poll heartbeats at once instead of at its
// interval, so it learns of the fencing, reports its tasks lost and rejoins in that poll.
// Before: kUnimplemented, and the member went on committing in vain until its next heartbeat.
TEST(FakeStreamsGroupConsumerTest, AnEnforcedRebalanceHeartbeatsAtTheNextPoll) {
  WithStreamsBroker([](FakeBroker& broker) {
    StreamsListener events;
    auto a = broker.NewMainConsumer("app", StreamsConfig("a"));
    ASSERT_TRUE(a->Subscribe({"t"}, &events).ok());
    PollFor(*a, 0);
    ASSERT_TRUE(broker.ExpireStreamsMember("app", a->MemberId()).ok());
    EXPECT_EQ(a->CommitSync({{{"t", 0}, 1}}).code(), absl::StatusCode::kFailedPrecondition);
    PollFor(*a, 0);  // the interval (1 s) has not passed: nothing learnt yet
    EXPECT_THAT(events.events, ElementsAre("assigned[t-0,t-1]+standby[]"));
    ASSERT_TRUE(a->EnforceRebalance().ok());
    PollFor(*a, 0);
    EXPECT_THAT(events.events, ElementsAre("assigned[t-0,t-1]+standby[]", "lost[t-0,t-1]",
                                           "assigned[t-0,t-1]+standby[]"));
    EXPECT_TRUE(a->CommitSync({{{"t", 0}, 1}}).ok()) << "a member again";
  });
}

TEST(FakeStreamsGroupConsumerTest, InjectedHeartbeatErrorsAreRetriedAndDrawnQuietlyAtZero) {
  ScriptedRandom random;
  BrokerFaults faults;
  faults.streams_heartbeat_error_per_mille = 999;
  random.Push(999);  // the join: hit ...
  random.Push(1);    // ... NOT_COORDINATOR; every later draw is 0: no fault
  WithStreamsBroker(
      [](FakeBroker& broker) {
        StreamsListener events;
        auto a = broker.NewMainConsumer("app", StreamsConfig("a"));
        ASSERT_TRUE(a->Subscribe({"t"}, &events).ok());
        PollFor(*a, 0);
        EXPECT_THAT(events.events, IsEmpty()) << "the join was answered NOT_COORDINATOR";
        PollFor(*a, 1 * kSecond);
        EXPECT_THAT(events.events, ElementsAre("assigned[t-0,t-1]+standby[]"));
        EXPECT_EQ(broker.faults_injected().streams_heartbeat_error, 1u);
      },
      &random, faults);
}

// A heartbeat delayed past the session reaches a coordinator that removed the member meanwhile
// (its own heartbeat expired it): UNKNOWN_MEMBER_ID, the tasks lost, a rejoin.
TEST(FakeStreamsGroupConsumerTest, AHeartbeatDelayedPastTheSessionFencesTheMember) {
  ScriptedRandom random;
  BrokerFaults faults;
  faults.streams_heartbeat_delay_per_mille = 999;
  faults.streams_heartbeat_delay_ns_max = 20 * kSecond;
  random.Push(0);    // the join: no delay ...
  random.Push(0);    // ... nor its acknowledgement's
  random.Push(999);  // the next: delayed ...
  random.Push(11'000'000'000);  // ... 11 s (the session is 10 s)
  WithStreamsBroker(
      [](FakeBroker& broker) {
        StreamsListener events;
        auto a = broker.NewMainConsumer("app", StreamsConfig("a"));
        ASSERT_TRUE(a->Subscribe({"t"}, &events).ok());
        PollFor(*a, 0);
        ASSERT_THAT(events.events, ElementsAre("assigned[t-0,t-1]+standby[]"));
        PollFor(*a, 2 * kSecond);
        EXPECT_EQ(broker.faults_injected().streams_heartbeat_delay, 1u);
        EXPECT_THAT(events.events, ElementsAre("assigned[t-0,t-1]+standby[]", "lost[t-0,t-1]",
                                               "assigned[t-0,t-1]+standby[]"));
      },
      &random, faults);
}

}  // namespace
}  // namespace restoresim::fakes
