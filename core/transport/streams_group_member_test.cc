// StreamsGroupMember (streams_group_member.h): the member's side of a streams group as Kafka's
// client keeps it — the heartbeats it builds, the reconciliations it asks for, fencing, leaving,
// the errors it retries and the ones that end it. Against a real Kafka 4.4 broker:
// kafka/kafka_streams_group_test.cc.
#include "core/transport/streams_group_member.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace restoresim {
namespace {

namespace kp = kafka_protocol;
using State = StreamsMemberState;

StreamsGroupMember::Options Opts(std::optional<std::string> instance = std::nullopt) {
  kp::Subtopology s{.subtopology_id = "0", .source_topics = {"input"}};
  s.state_changelog_topics.push_back(kp::TopicInfo{.name = "app-store-changelog"});
  return {.group_id = "app", .member_id = "m1", .process_id = "p1", .instance_id = instance,
          .rebalance_timeout_ms = 30'000, .topology = {.epoch = 0, .subtopologies = {s}},
          .client_tags = {}};
}

std::vector<kp::TaskIds> Tasks(std::vector<int32_t> partitions) {
  if (partitions.empty()) return {};
  return {{.subtopology_id = "0", .partitions = std::move(partitions)}};
}

StreamsTaskSet Set(std::vector<int32_t> partitions) {
  StreamsTaskSet out;
  for (int32_t p : partitions) out.insert({"0", p});
  return out;
}

kp::StreamsGroupHeartbeatResponse Given(int32_t epoch, std::vector<int32_t> active,
                                        std::vector<int32_t> standby = {}) {
  kp::StreamsGroupHeartbeatResponse r{.member_id = "m1", .member_epoch = epoch,
                                      .heartbeat_interval_ms = 1000};
  r.active_tasks = Tasks(std::move(active));
  r.standby_tasks = Tasks(std::move(standby));
  r.warmup_tasks = std::vector<kp::TaskIds>{};
  return r;
}

kp::StreamsGroupHeartbeatResponse Failed(int16_t code) {
  return {.error_code = code, .error_message = "from the test", .member_id = "m1"};
}

// Joins, is given `active` and `standby` at epoch 1, reconciles and acknowledges: STABLE.
void JoinAndSettle(StreamsGroupMember& m, std::vector<int32_t> active,
                   std::vector<int32_t> standby = {}) {
  m.Join();
  (void)m.BuildHeartbeat(0);
  ASSERT_EQ(m.OnResponse(Given(1, active, standby), 0), StreamsHeartbeatResult::kOk);
  std::optional<StreamsReconciliation> r = m.StartReconciliation();
  ASSERT_TRUE(r.has_value());
  m.FinishReconciliation(true);
  (void)m.BuildHeartbeat(0);
  ASSERT_EQ(m.OnResponse(Given(1, active, standby), 0), StreamsHeartbeatResult::kOk);
  ASSERT_EQ(m.state(), State::kStable);
}

TEST(StreamsGroupMemberTest, AJoinCarriesTheTopologyAndEmptyTaskLists) {
  StreamsGroupMember m(Opts());
  EXPECT_FALSE(m.HeartbeatDue(0)) << "not subscribed yet";
  m.Join();
  ASSERT_TRUE(m.HeartbeatDue(0));
  const kp::StreamsGroupHeartbeatRequest req = m.BuildHeartbeat(0);
  EXPECT_EQ(req.group_id, "app");
  EXPECT_EQ(req.member_id, "m1");
  EXPECT_EQ(req.member_epoch, 0);
  EXPECT_EQ(req.endpoint_information_epoch, -1);
  ASSERT_TRUE(req.topology.has_value());
  EXPECT_EQ(req.topology->subtopologies.size(), 1u);
  EXPECT_EQ(req.rebalance_timeout_ms, 30'000);
  EXPECT_EQ(req.process_id, "p1");
  ASSERT_TRUE(req.active_tasks.has_value());
  EXPECT_TRUE(req.active_tasks->empty());
  EXPECT_TRUE(req.standby_tasks.has_value() && req.warmup_tasks.has_value());
  EXPECT_FALSE(m.HeartbeatDue(5000)) << "one heartbeat in flight at a time";
}

TEST(StreamsGroupMemberTest, ATargetIsReconciledThenAcknowledgedAtOnce) {
  StreamsGroupMember m(Opts());
  m.Join();
  (void)m.BuildHeartbeat(0);
  ASSERT_EQ(m.OnResponse(Given(3, {0}, {1}), 10), StreamsHeartbeatResult::kOk);
  EXPECT_EQ(m.state(), State::kReconciling);
  EXPECT_EQ(m.epoch(), 3);
  EXPECT_TRUE(m.current().active.empty()) << "nothing owned before the callbacks ran";
  std::optional<StreamsReconciliation> r = m.StartReconciliation();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->revoke.empty());
  EXPECT_EQ(r->assign.active, Set({0}));
  EXPECT_EQ(r->assign.standby, Set({1}));
  EXPECT_FALSE(m.StartReconciliation().has_value()) << "one reconciliation at a time";
  m.FinishReconciliation(true);
  EXPECT_EQ(m.state(), State::kAcknowledging);
  EXPECT_EQ(m.NextHeartbeatAtMs(), 0) << "the acknowledgement goes at once";
  const kp::StreamsGroupHeartbeatRequest ack = m.BuildHeartbeat(20);
  EXPECT_EQ(m.state(), State::kStable);
  EXPECT_EQ(ack.member_epoch, 3);
  EXPECT_FALSE(ack.topology.has_value());
  EXPECT_EQ(ack.active_tasks, Tasks({0}));
  EXPECT_EQ(ack.standby_tasks, Tasks({1}));
  ASSERT_EQ(m.OnResponse(Given(3, {0}, {1}), 30), StreamsHeartbeatResult::kOk);
  EXPECT_FALSE(m.HeartbeatDue(1029));
  ASSERT_TRUE(m.HeartbeatDue(1030)) << "then at the broker's interval";
  const kp::StreamsGroupHeartbeatRequest steady = m.BuildHeartbeat(1030);
  EXPECT_FALSE(steady.active_tasks.has_value()) << "task lists only when they changed";
}

TEST(StreamsGroupMemberTest, ActivesNoLongerTargetedAreRevokedFirst) {
  StreamsGroupMember m(Opts());
  JoinAndSettle(m, {0, 1});
  (void)m.BuildHeartbeat(2000);
  ASSERT_EQ(m.OnResponse(Given(4, {1, 2}, {0}), 2000), StreamsHeartbeatResult::kOk);
  std::optional<StreamsReconciliation> r = m.StartReconciliation();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->revoke, Set({0})) << "0 leaves this member's actives (it stays as a standby)";
  EXPECT_EQ(r->assign.active, Set({1, 2}));
  EXPECT_EQ(r->assign.standby, Set({0}));
  m.FinishReconciliation(true);
  EXPECT_EQ(m.current().active, Set({1, 2}));
}

TEST(StreamsGroupMemberTest, AFailedReconciliationIsNotAcknowledgedAndIsTriedAgain) {
  StreamsGroupMember m(Opts());
  m.Join();
  (void)m.BuildHeartbeat(0);
  ASSERT_EQ(m.OnResponse(Given(1, {0}), 0), StreamsHeartbeatResult::kOk);
  ASSERT_TRUE(m.StartReconciliation().has_value());
  m.FinishReconciliation(false);
  EXPECT_EQ(m.state(), State::kReconciling);
  EXPECT_TRUE(m.current().active.empty());
  EXPECT_TRUE(m.StartReconciliation().has_value());
}

TEST(StreamsGroupMemberTest, AFencedMemberLosesItsTasksAndRejoinsWithTheSameId) {
  StreamsGroupMember m(Opts());
  JoinAndSettle(m, {0});
  (void)m.BuildHeartbeat(1000);
  EXPECT_EQ(m.OnResponse(Failed(110 /* FENCED_MEMBER_EPOCH */), 1000),
            StreamsHeartbeatResult::kFenced);
  EXPECT_EQ(m.state(), State::kFenced);
  EXPECT_TRUE(m.lost_pending());
  EXPECT_FALSE(m.HeartbeatDue(1000)) << "no heartbeat before the lost tasks are closed";
  m.LostHandled();
  EXPECT_EQ(m.state(), State::kJoining);
  EXPECT_TRUE(m.current().active.empty());
  const kp::StreamsGroupHeartbeatRequest rejoin = m.BuildHeartbeat(1000);
  EXPECT_EQ(rejoin.member_epoch, 0);
  EXPECT_EQ(rejoin.member_id, "m1");
  EXPECT_TRUE(rejoin.topology.has_value());
  EXPECT_TRUE(rejoin.active_tasks.has_value() && rejoin.active_tasks->empty());
  // UNKNOWN_MEMBER_ID fences the same way.
  ASSERT_EQ(m.OnResponse(Given(6, {0}), 1010), StreamsHeartbeatResult::kOk);
  (void)m.StartReconciliation();
  (void)m.BuildHeartbeat(3000);
  EXPECT_EQ(m.OnResponse(Failed(25 /* UNKNOWN_MEMBER_ID */), 3000),
            StreamsHeartbeatResult::kFenced);
  m.FinishReconciliation(true);  // the one running when fenced: dropped
  EXPECT_TRUE(m.current().active.empty());
  EXPECT_EQ(m.state(), State::kFenced);
}

TEST(StreamsGroupMemberTest, LeavingRevokesTheActivesThenSendsEpochMinusOne) {
  StreamsGroupMember m(Opts());
  JoinAndSettle(m, {0, 1}, {2});
  m.Leave();
  EXPECT_EQ(m.state(), State::kPrepareLeaving);
  EXPECT_EQ(m.LeaveRevocation(), Set({0, 1}));
  m.LeaveRevoked();
  EXPECT_EQ(m.state(), State::kLeaving);
  ASSERT_EQ(m.NextHeartbeatAtMs(), 0);
  const kp::StreamsGroupHeartbeatRequest leave = m.BuildHeartbeat(5);
  EXPECT_EQ(leave.member_epoch, -1);
  EXPECT_EQ(m.state(), State::kUnsubscribed);
  EXPECT_FALSE(m.HeartbeatDue(100'000));
  EXPECT_EQ(m.OnResponse(Failed(25), 6), StreamsHeartbeatResult::kOk) << "the leave is done";
  EXPECT_EQ(m.state(), State::kUnsubscribed);
  StreamsGroupMember s(Opts("instance-1"));
  JoinAndSettle(s, {0});
  s.Leave();
  s.LeaveRevoked();
  EXPECT_EQ(s.BuildHeartbeat(0).member_epoch, -2) << "a static member will come back";
}

TEST(StreamsGroupMemberTest, CoordinatorErrorsAreRetriedAndEveryFieldSentAgain) {
  StreamsGroupMember m(Opts());
  JoinAndSettle(m, {0});
  (void)m.BuildHeartbeat(1000);
  EXPECT_EQ(m.OnResponse(Failed(16 /* NOT_COORDINATOR */), 1000),
            StreamsHeartbeatResult::kFindCoordinator);
  EXPECT_TRUE(m.HeartbeatDue(1000)) << "at once, once found again";
  EXPECT_EQ(m.BuildHeartbeat(1000).active_tasks, Tasks({0})) << "everything sent again";
  EXPECT_EQ(m.OnResponse(Failed(14 /* COORDINATOR_LOAD_IN_PROGRESS */), 1000),
            StreamsHeartbeatResult::kRetry);
  EXPECT_FALSE(m.HeartbeatDue(1099));
  EXPECT_TRUE(m.HeartbeatDue(1100)) << "after 100 ms";
  (void)m.BuildHeartbeat(1100);
  (void)m.OnResponse(Failed(14), 1100);
  EXPECT_FALSE(m.HeartbeatDue(1299));
  EXPECT_TRUE(m.HeartbeatDue(1300)) << "then 200 ms";
  (void)m.BuildHeartbeat(1300);
  m.OnRequestFailed(1300);
  EXPECT_TRUE(m.HeartbeatDue(1700)) << "a lost request backs off too (400 ms)";
  EXPECT_EQ(m.state(), State::kStable);
}

TEST(StreamsGroupMemberTest, OtherErrorsAreFatal) {
  for (int16_t code : {42 /* INVALID_REQUEST */, 130 /* STREAMS_INVALID_TOPOLOGY */,
                       132 /* STREAMS_TOPOLOGY_FENCED */, 35 /* UNSUPPORTED_VERSION */}) {
    StreamsGroupMember m(Opts());
    m.Join();
    (void)m.BuildHeartbeat(0);
    EXPECT_EQ(m.OnResponse(Failed(code), 0), StreamsHeartbeatResult::kFatal) << code;
    EXPECT_EQ(m.state(), State::kFatal) << code;
    EXPECT_FALSE(m.HeartbeatDue(1'000'000)) << code;
  }
  StreamsGroupMember m(Opts());
  m.Join();
  (void)m.BuildHeartbeat(0);
  EXPECT_EQ(m.OnResponse(Failed(29 /* TOPIC_AUTHORIZATION_FAILED */), 0),
            StreamsHeartbeatResult::kReported);
  EXPECT_EQ(m.state(), State::kJoining) << "reported; the member goes on";
}

TEST(StreamsGroupMemberTest, TaskListsAllSetOrAllNullElseFatal) {
  StreamsGroupMember m(Opts());
  m.Join();
  (void)m.BuildHeartbeat(0);
  kp::StreamsGroupHeartbeatResponse half = Given(1, {0});
  half.warmup_tasks.reset();
  EXPECT_EQ(m.OnResponse(half, 0), StreamsHeartbeatResult::kFatal);
  EXPECT_EQ(m.state(), State::kFatal);
}

TEST(StreamsGroupMemberTest, StatusesSayWhetherTheGroupIsReadyAndWhetherToShutDown) {
  StreamsGroupMember m(Opts());
  m.Join();
  (void)m.BuildHeartbeat(0);
  kp::StreamsGroupHeartbeatResponse r = Given(1, {});
  r.status = std::vector<kp::StreamsGroupStatus>{
      {.status_code = 1 /* MISSING_SOURCE_TOPICS */, .status_detail = "input"}};
  ASSERT_EQ(m.OnResponse(r, 0), StreamsHeartbeatResult::kOk);
  EXPECT_EQ(m.state(), State::kReconciling) << "not ready is a change to reconcile";
  std::optional<StreamsReconciliation> rec = m.StartReconciliation();
  ASSERT_TRUE(rec.has_value());
  EXPECT_FALSE(rec->assign.group_ready);
  m.FinishReconciliation(true);
  (void)m.BuildHeartbeat(0);
  kp::StreamsGroupHeartbeatResponse ready{.member_id = "m1", .member_epoch = 1,
                                          .heartbeat_interval_ms = 1000};
  ASSERT_EQ(m.OnResponse(ready, 0), StreamsHeartbeatResult::kOk);
  EXPECT_EQ(m.state(), State::kReconciling) << "ready again, with the same tasks";
  EXPECT_FALSE(m.shutdown_requested_by_group());
  m.StartReconciliation();
  m.FinishReconciliation(true);
  (void)m.BuildHeartbeat(0);
  kp::StreamsGroupHeartbeatResponse shut = ready;
  shut.status = std::vector<kp::StreamsGroupStatus>{{.status_code = 4, .status_detail = "bye"}};
  ASSERT_EQ(m.OnResponse(shut, 0), StreamsHeartbeatResult::kOk);
  EXPECT_TRUE(m.shutdown_requested_by_group());
}

}  // namespace
}  // namespace restoresim
