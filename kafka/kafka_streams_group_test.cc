// A streams group (KIP-1071, issue 26) on the local Kafka 4.4 broker, spoken to through the
// project's own protocol codec and connection (core/transport/rdkafka/
// kafka_protocol_connection.h) by the project's member (core/transport/streams_group_member.h):
// members join one group with a one-subtopology topology (input topic of two partitions, one
// store and its changelog), heartbeat when the member says, and run each reconciliation it asks
// for at once (the callbacks are recorded, no runtime attached: nothing is restored;
// kafka_streams_runtime_test attaches the runtime). Kafka's sticky task assignor
// (tools/kafka/broker sets group.streams.num.standby.replicas=1) gives each of two members an
// active task and the other's task as a standby; when one leaves, the other's standby becomes its
// active task. A member that joins a group where another holds both tasks gets one only after
// the other revoked it. About 10 s (heartbeats every second).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <librdkafka/rdkafka.h>

#include "absl/strings/str_join.h"
#include "core/util/check.h"
#include "core/port/system_clock.h"
#include "core/transport/streams_group_member.h"
#include "core/transport/rdkafka/kafka_protocol_connection.h"
#include "core/transport/rdkafka/rdkafka_errors.h"
#include "core/transport/rdkafka/rdkafka_transport.h"
#include "kafka/kafka_env.h"

namespace restoresim::kafka_test {
namespace {

namespace kp = restoresim::kafka_protocol;

constexpr auto kDeadline = std::chrono::seconds(60);

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A member, its connection, and what its reconciliations did, in order.
struct Driven {
  StreamsGroupMember member;
  rdkafka::KafkaProtocolConnection connection;
  std::vector<std::string> log;  // "revoke 0_1", "assign active 0_0 standby 0_1"
};

std::string Names(const StreamsTaskSet& tasks) {
  std::string out;
  for (const StreamsTaskId& t : tasks) out += (out.empty() ? "" : ",") + t.ToString();
  return out.empty() ? "-" : out;
}

// One round: the heartbeat if due, then the reconciliation it asks for, run at once.
absl::Status Step(Driven& d) {
  const int64_t now = NowMs();
  if (d.member.HeartbeatDue(now)) {
    const kp::StreamsGroupHeartbeatRequest req = d.member.BuildHeartbeat(now);
    absl::StatusOr<kp::StreamsGroupHeartbeatResponse> resp = d.connection.Heartbeat(req);
    if (!resp.ok()) {
      d.member.OnRequestFailed(NowMs());
      return resp.status();
    }
    const StreamsHeartbeatResult result = d.member.OnResponse(*resp, NowMs());
    // A coordinator still loading __consumer_offsets on a new cluster answers a retriable
    // error (seen on 2026-12-04); the member retries after its backoff. The coordinator was
    // found through the same broker a moment ago, so it is not looked up again here.
    if (result == StreamsHeartbeatResult::kFatal || result == StreamsHeartbeatResult::kReported) {
      return rdkafka::KafkaErrorToStatus(resp->error_code, resp->error_message,
                                         "heartbeat of " + d.member.member_id());
    }
    if (result == StreamsHeartbeatResult::kFenced) d.log.push_back("lost");
  }
  if (d.member.lost_pending()) d.member.LostHandled();
  if (std::optional<StreamsReconciliation> r = d.member.StartReconciliation()) {
    if (!r->revoke.empty()) d.log.push_back("revoke " + Names(r->revoke));
    d.log.push_back("assign active " + Names(r->assign.active) + " standby " +
                    Names(r->assign.standby));
    d.member.FinishReconciliation(true);
  }
  return absl::OkStatus();
}

// Leaves the group as a closing member does: its actives revoked (the callbacks are records
// here, nothing to run), then the leave heartbeat (epoch -1).
absl::Status LeaveGroup(Driven& d) {
  d.member.Leave();
  d.member.LeaveRevoked();
  return Step(d);
}

// Steps every member until `done` holds or the deadline passes.
absl::Status StepUntil(std::vector<Driven*> members, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    for (Driven* d : members) {
      if (absl::Status s = Step(*d); !s.ok()) return s;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done() ? absl::OkStatus() : absl::DeadlineExceededError("not settled in 60 s");
}

std::set<int32_t> Partitions(const StreamsTaskSet& tasks) {
  std::set<int32_t> out;
  for (const StreamsTaskId& t : tasks) out.insert(t.partition);
  return out;
}

// Each member one active task and the other's as a standby, acknowledged (STABLE).
bool Settled(const Driven& a, const Driven& b) {
  const StreamsAssignment& x = a.member.current();
  const StreamsAssignment& y = b.member.current();
  return a.member.state() == StreamsMemberState::kStable &&
         b.member.state() == StreamsMemberState::kStable && x.active.size() == 1 &&
         y.active.size() == 1 && x.active != y.active && x.standby == y.active &&
         y.standby == x.active;
}

kp::Topology OneSubtopology(const std::string& input, const std::string& changelog) {
  kp::Subtopology s{.subtopology_id = "0", .source_topics = {input}};
  s.state_changelog_topics.push_back(kp::TopicInfo{.name = changelog});
  return kp::Topology{.epoch = 0, .subtopologies = {s}};
}

struct Group {
  std::string bootstrap;
  std::string id;
  kp::Topology topology;
};

absl::StatusOr<Group> NewGroup(const char* env) {
  absl::StatusOr<std::string> bootstrap = Bootstrap(env);
  if (!bootstrap.ok()) return bootstrap.status();
  Group g{.bootstrap = *bootstrap, .id = UniqueName("streams-group"), .topology = {}};
  rdkafka::RdKafkaOptions options;
  options.bootstrap_servers = g.bootstrap;
  rdkafka::RdKafkaTransport transport(options, *SystemClock::Default());
  if (absl::Status s = transport.NewAdmin("streams-group-admin")->CreateTopic(g.id + "-input", 2);
      !s.ok()) {
    return s;
  }
  g.topology = OneSubtopology(g.id + "-input", g.id + "-store-changelog");
  return g;
}

absl::StatusOr<std::unique_ptr<Driven>> NewMember(const Group& g, const std::string& id) {
  absl::StatusOr<rdkafka::KafkaProtocolConnection> c =
      rdkafka::KafkaProtocolConnection::OpenToCoordinator(g.bootstrap, g.id, id,
                                                          *SystemClock::Default());
  if (!c.ok()) return c.status();
  if (c->heartbeat_version() < 0) return absl::UnimplementedError("no StreamsGroupHeartbeat");
  auto d = std::make_unique<Driven>(Driven{
      .member = StreamsGroupMember({.group_id = g.id, .member_id = id,
                                    .process_id = id + "-process", .instance_id = std::nullopt,
                                    .rebalance_timeout_ms = 30'000, .topology = g.topology,
                                    .client_tags = {}}),
      .connection = *std::move(c),
      .log = {}});
  d->member.Join();
  return d;
}

// member-b leaves (its actives revoked first, then epoch -1): the broker moves its active task
// to member-a, where it was a standby.
void ExpectTheStandbyPromotedWhenBLeaves(Driven& a, Driven& b) {
  const std::set<int32_t> promoted = Partitions(a.member.current().standby);
  b.member.Leave();
  EXPECT_EQ(b.member.LeaveRevocation(), b.member.current().active);
  b.member.LeaveRevoked();
  ASSERT_TRUE(Step(b).ok());
  EXPECT_EQ(b.member.state(), StreamsMemberState::kUnsubscribed);
  const absl::Status s = StepUntil({&a}, [&] {
    return a.member.state() == StreamsMemberState::kStable &&
           a.member.current().active.size() == 2;
  });
  ASSERT_TRUE(s.ok()) << s << "; member-a's log: " << absl::StrJoin(a.log, " | ");
  EXPECT_EQ(Partitions(a.member.current().active), (std::set<int32_t>{0, 1}));
  EXPECT_TRUE(std::includes(Partitions(a.member.current().active).begin(),
                            Partitions(a.member.current().active).end(), promoted.begin(),
                            promoted.end()))
      << "the standby promoted";
  EXPECT_TRUE(a.member.current().standby.empty()) << "no other member to hold one";
}

// On the one-node cluster, and on the three-node one (each member finds its coordinator).
class KafkaStreamsGroup : public testing::TestWithParam<const char*> {};

TEST_P(KafkaStreamsGroup, TwoMembersGetActiveAndStandbyTasksThenALeaverPromotesAStandby) {
  absl::StatusOr<Group> g = NewGroup(GetParam());
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::unique_ptr<Driven>> a = NewMember(*g, "member-a");
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<std::unique_ptr<Driven>> b = NewMember(*g, "member-b");
  ASSERT_TRUE(b.ok()) << b.status();
  const absl::Status s = StepUntil({a->get(), b->get()}, [&] { return Settled(**a, **b); });
  ASSERT_TRUE(s.ok()) << s << "; a: " << absl::StrJoin((*a)->log, " | ")
                      << "; b: " << absl::StrJoin((*b)->log, " | ");
  absl::StatusOr<kp::StreamsGroupDescribeResponse> described =
      (*a)->connection.Describe({.group_ids = {g->id}});
  ASSERT_TRUE(described.ok()) << described.status();
  ASSERT_EQ(described->groups.size(), 1u);
  EXPECT_EQ(described->groups[0].error_code, 0);
  EXPECT_EQ(described->groups[0].members.size(), 2u);
  for (const kp::DescribedMember& d : described->groups[0].members) {
    const Driven& mine = d.member_id == "member-a" ? **a : **b;
    EXPECT_EQ(d.member_epoch, mine.member.epoch()) << d.member_id;
    EXPECT_EQ(d.assignment.active_tasks.size(), 1u) << d.member_id;
  }
  std::printf("settled: member-a epoch %d active %s standby %s, member-b epoch %d active %s "
              "standby %s\n", (*a)->member.epoch(), Names((*a)->member.current().active).c_str(),
              Names((*a)->member.current().standby).c_str(), (*b)->member.epoch(),
              Names((*b)->member.current().active).c_str(),
              Names((*b)->member.current().standby).c_str());
  ExpectTheStandbyPromotedWhenBLeaves(**a, **b);
  EXPECT_TRUE(LeaveGroup(**a).ok());
}

// A heartbeat with an epoch the broker never gave (a zombie's: the member was replaced while it
// paused) is fenced: the member loses its tasks, rejoins at epoch 0 with the same member id, and
// gets tasks again at a new epoch.
TEST_P(KafkaStreamsGroup, AFencedMemberLosesItsTasksAndRejoins) {
  absl::StatusOr<Group> g = NewGroup(GetParam());
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::unique_ptr<Driven>> a = NewMember(*g, "member-a");
  ASSERT_TRUE(a.ok()) << a.status();
  Driven& m = **a;
  auto both = [&] {
    return m.member.state() == StreamsMemberState::kStable && m.member.current().active.size() == 2;
  };
  absl::Status s = StepUntil({&m}, both);
  ASSERT_TRUE(s.ok()) << s << "; " << absl::StrJoin(m.log, " | ");
  const int32_t epoch = m.member.epoch();
  while (!m.member.HeartbeatDue(NowMs())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kp::StreamsGroupHeartbeatRequest stale = m.member.BuildHeartbeat(NowMs());
  stale.member_epoch = epoch + 10;
  absl::StatusOr<kp::StreamsGroupHeartbeatResponse> resp = m.connection.Heartbeat(stale);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->error_code, 110) << "FENCED_MEMBER_EPOCH";
  EXPECT_EQ(m.member.OnResponse(*resp, NowMs()), StreamsHeartbeatResult::kFenced);
  ASSERT_TRUE(m.member.lost_pending());
  m.log.push_back("lost");
  m.member.LostHandled();
  s = StepUntil({&m}, both);
  ASSERT_TRUE(s.ok()) << s << "; " << absl::StrJoin(m.log, " | ");
  EXPECT_GT(m.member.epoch(), 0);
  EXPECT_EQ(m.log.back(), "assign active 0_0,0_1 standby -") << absl::StrJoin(m.log, " | ");
  EXPECT_TRUE(LeaveGroup(m).ok());
}

// member-a alone holds both active tasks; member-b joins. The broker takes one from member-a
// (its reconciliation revokes it) and gives it to member-b only after member-a acknowledged the
// revocation: at no step do both own it as active.
TEST_P(KafkaStreamsGroup, AJoinerGetsATaskOnlyAfterItsOwnerRevokedIt) {
  absl::StatusOr<Group> g = NewGroup(GetParam());
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::unique_ptr<Driven>> a = NewMember(*g, "member-a");
  ASSERT_TRUE(a.ok()) << a.status();
  Driven& first = **a;
  absl::Status s = StepUntil({&first}, [&] {
    return first.member.state() == StreamsMemberState::kStable &&
           first.member.current().active.size() == 2;
  });
  ASSERT_TRUE(s.ok()) << s << "; " << absl::StrJoin(first.log, " | ");
  absl::StatusOr<std::unique_ptr<Driven>> b = NewMember(*g, "member-b");
  ASSERT_TRUE(b.ok()) << b.status();
  Driven& second = **b;
  bool overlapped = false;
  s = StepUntil({&first, &second}, [&] {
    for (const StreamsTaskId& t : second.member.current().active) {
      overlapped = overlapped || first.member.current().active.contains(t);
    }
    return Settled(first, second);
  });
  ASSERT_TRUE(s.ok()) << s << "; a: " << absl::StrJoin(first.log, " | ")
                      << "; b: " << absl::StrJoin(second.log, " | ");
  EXPECT_FALSE(overlapped) << "an active task owned by both members at once";
  // member-a's reconciliations: ... both actives, then one revoked before the rest assigned
  // (seen: "assign active 0_0,0_1 standby - | revoke 0_1 | assign active 0_0 standby 0_1").
  auto revoke = std::find_if(first.log.begin(), first.log.end(),
                             [](const std::string& e) { return e.starts_with("revoke "); });
  ASSERT_NE(revoke, first.log.end()) << "member-a revoked nothing: "
                                     << absl::StrJoin(first.log, " | ");
  ASSERT_NE(std::next(revoke), first.log.end());
  EXPECT_TRUE(std::next(revoke)->starts_with("assign active ")) << *std::next(revoke);
  for (Driven* d : {&first, &second}) EXPECT_TRUE(LeaveGroup(*d).ok());
}

// What librdkafka's offset commit and fetch do for a streams group (issue 26: "offset commit and
// fetch as a member with its epoch where librdkafka's commit is refused for such a group (find
// out, and say which)"). A consumer of the group's id, partitions assigned by hand (no
// subscription: the group is a streams group), commits and reads back an offset of a task that
// member-a owns.
struct RawCommit {
  rd_kafka_resp_err_t commit = RD_KAFKA_RESP_ERR_NO_ERROR;
  rd_kafka_resp_err_t commit_partition = RD_KAFKA_RESP_ERR_NO_ERROR;
  rd_kafka_resp_err_t fetch = RD_KAFKA_RESP_ERR_NO_ERROR;
  int64_t fetched = -1;
};

RawCommit CommitAndFetchWithLibrdkafka(const Group& g, int64_t offset) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [key, value] :
       {std::pair<std::string, std::string>{"bootstrap.servers", g.bootstrap},
        {"group.id", g.id}, {"enable.auto.commit", "false"}, {"client.id", "raw-committer"}}) {
    RS_CHECK(rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof(error)) ==
             RD_KAFKA_CONF_OK, "{}", error);
  }
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof(error));
  RS_CHECK(rk != nullptr, "{}", error);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, (g.id + "-input").c_str(), 0)->offset = offset;
  RawCommit r;
  RS_CHECK(rd_kafka_assign(rk, list) == RD_KAFKA_RESP_ERR_NO_ERROR, "assign");
  r.commit = rd_kafka_commit(rk, list, /*async=*/0);
  r.commit_partition = list->elems[0].err;
  list->elems[0].offset = RD_KAFKA_OFFSET_INVALID;
  r.fetch = rd_kafka_committed(rk, list, 10'000);
  if (r.fetch == RD_KAFKA_RESP_ERR_NO_ERROR) {
    r.fetch = list->elems[0].err;
    r.fetched = list->elems[0].offset;
  }
  rd_kafka_topic_partition_list_destroy(list);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return r;
}

TEST_P(KafkaStreamsGroup, WhatLibrdkafkasCommitDoesForAStreamsGroup) {
  absl::StatusOr<Group> g = NewGroup(GetParam());
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::unique_ptr<Driven>> a = NewMember(*g, "member-a");
  ASSERT_TRUE(a.ok()) << a.status();
  Driven& m = **a;
  absl::Status s = StepUntil({&m}, [&] {
    return m.member.state() == StreamsMemberState::kStable && m.member.current().active.size() == 2;
  });
  ASSERT_TRUE(s.ok()) << s;
  // Seen on Kafka 4.4.0: while the group has a member, librdkafka's commit (generation -1, no
  // member id: what a consumer without a subscription sends) is refused, UNKNOWN_MEMBER_ID; its
  // fetch is answered (nothing committed). Once the group is empty, the same commit is taken.
  // So a runtime that is a member commits as one, with its member id and epoch (OffsetCommit
  // v9 over the member's own connection: ACommitAsAMemberTakesItsEpochOnly); librdkafka can
  // still read the offsets.
  const RawCommit with_member = CommitAndFetchWithLibrdkafka(*g, 5);
  EXPECT_EQ(with_member.commit, RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID)
      << rd_kafka_err2name(with_member.commit);
  EXPECT_EQ(with_member.fetch, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2name(with_member.fetch);
  EXPECT_EQ(with_member.fetched, RD_KAFKA_OFFSET_INVALID);
  ASSERT_TRUE(LeaveGroup(m).ok());
  const RawCommit empty = CommitAndFetchWithLibrdkafka(*g, 7);
  EXPECT_EQ(empty.commit, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2name(empty.commit);
  EXPECT_EQ(empty.commit_partition, RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(empty.fetch, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2name(empty.fetch);
  EXPECT_EQ(empty.fetched, 7);
}

// OffsetCommit v9 as a member (what RdKafkaStreamsGroupConsumer::CommitSync sends): taken at the
// member's epoch; a newer epoch is STALE_MEMBER_EPOCH (113), an unknown member UNKNOWN_MEMBER_ID
// (25), each per partition, and both kFailedPrecondition in the one error table.
TEST_P(KafkaStreamsGroup, ACommitAsAMemberTakesItsEpochOnly) {
  absl::StatusOr<Group> g = NewGroup(GetParam());
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::unique_ptr<Driven>> a = NewMember(*g, "member-a");
  ASSERT_TRUE(a.ok()) << a.status();
  Driven& m = **a;
  ASSERT_TRUE(StepUntil({&m}, [&] {
    return m.member.state() == StreamsMemberState::kStable && m.member.current().active.size() == 2;
  }).ok());
  auto commit = [&](const std::string& member, int32_t epoch) -> int16_t {
    kp::OffsetCommitRequest r{.group_id = g->id, .generation_id_or_member_epoch = epoch,
                              .member_id = member};
    r.topics = {{g->id + "-input", {{0, 3}, {1, 4}}}};
    absl::StatusOr<kp::OffsetCommitResponse> resp = m.connection.OffsetCommit(r);
    EXPECT_TRUE(resp.ok()) << resp.status();
    if (!resp.ok() || resp->topics.size() != 1 || resp->topics[0].partitions.size() != 2) {
      return -1;
    }
    EXPECT_EQ(resp->topics[0].partitions[0].error_code, resp->topics[0].partitions[1].error_code);
    return resp->topics[0].partitions[0].error_code;
  };
  EXPECT_EQ(commit("member-a", m.member.epoch()), 0);
  EXPECT_EQ(commit("member-a", m.member.epoch() + 1), 113) << "a newer epoch than the member's";
  EXPECT_EQ(commit("member-x", m.member.epoch()), 25) << "a member the group does not know";
  EXPECT_EQ(rdkafka::KafkaErrorToStatus(113, std::nullopt, "commit").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(rdkafka::KafkaErrorToStatus(25, std::nullopt, "commit").code(),
            absl::StatusCode::kFailedPrecondition);
  const RawCommit fetched = CommitAndFetchWithLibrdkafka(*g, 0);  // refused: a member exists
  EXPECT_EQ(fetched.fetch, RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(fetched.fetched, 3) << "the member's commit of partition 0";
  ASSERT_TRUE(LeaveGroup(m).ok());
}

// A member connects through the first broker of its bootstrap list that answers (Kafka's clients
// try each): the runtime's member reconnects this way after losing its coordinator, and the
// first broker listed may be the one that died.
TEST_P(KafkaStreamsGroup, TheBootstrapListIsTriedInTurn) {
  absl::StatusOr<std::string> bootstrap = Bootstrap(GetParam());
  ASSERT_TRUE(bootstrap.ok()) << bootstrap.status();
  absl::StatusOr<rdkafka::KafkaProtocolConnection> c =
      rdkafka::KafkaProtocolConnection::OpenToCoordinator(
          " 127.0.0.1:1 , ," + *bootstrap, UniqueName("bootstrap"), "bootstrap-test",
          *SystemClock::Default());
  EXPECT_TRUE(c.ok()) << c.status();
  absl::StatusOr<rdkafka::KafkaProtocolConnection> none =
      rdkafka::KafkaProtocolConnection::Open("127.0.0.1:1,127.0.0.1:2", "bootstrap-test",
                                             *SystemClock::Default());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(std::string(none.status().message()).find("127.0.0.1:2"), std::string::npos)
      << none.status();
}

INSTANTIATE_TEST_SUITE_P(Clusters, KafkaStreamsGroup,
                         testing::Values(kBootstrapEnv, kBootstrap3Env));

}  // namespace
}  // namespace restoresim::kafka_test
