// The runtime on real threads while the cluster fails under it, each failure injected at a
// known point: restoration held at its first batch (GatedRestoreListener), the failure made,
// restoration let go. Then every store must equal its changelog.
//   - the single broker (RESTORESIM_KAFKA_BOOTSTRAP) stopped and restarted mid-restoration;
//   - the leader of a changelog partition killed (SIGKILL) in the 3-node cluster
//     (RESTORESIM_KAFKA_BOOTSTRAP3), where every topic has 3 replicas;
//   - the broker coordinating a streams group killed under a member of it.
// Processing counts are not compared here: a member whose session expires while the broker is
// down loses its tasks without a commit, and at least once may then process records twice.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "core/port/posix_file_system.h"
#include "core/runtime/runtime.h"
#include "core/transport/rdkafka/kafka_protocol_connection.h"
#include "kafka/kafka_env.h"
#include "kafka/kafka_world.h"

namespace restoresim::kafka_test {
namespace {

constexpr TimeNs kWaitNs = 120 * kSecond;
constexpr TimeNs kCloseNs = 60 * kSecond;
constexpr int32_t kPartitions = 2;
constexpr int kChangelogRecords = 20000;

// Restores an app's changelogs with restoration held at its first batch; `fail` runs while it
// is held, `heal` after it was let go. Checks every store against its changelog at the end.
void RestoreThroughFailure(KafkaWorld& world, const std::string& base,
                           const std::function<void(const AppTopics&)>& fail,
                           const std::function<void()>& heal) {
  absl::StatusOr<AppTopics> app = world.CreateApp(base, kPartitions);
  ASSERT_TRUE(app.ok()) << app.status();
  for (int32_t p = 0; p < kPartitions; ++p) {
    ASSERT_TRUE(
        world.Produce(app->Changelog(p), ChangelogRecords("", kChangelogRecords, 100)).ok());
    ASSERT_TRUE(world.Produce(app->Input(p), InputRecords(100, 5)).ok());
  }
  const std::string dir = world.NewStateDir(base);
  RuntimeConfig config = world.Config(*app, dir);
  config.restore_max_poll_records = 500;  // many batches: the failure lands mid-restoration
  GatedRestoreListener listener;
  listener.Hold();
  Runtime runtime(config, world.transport(), world.clock(), *PosixFileSystem::Default(),
                  RocksDbOpener(), &listener);
  ASSERT_TRUE(runtime.Start().ok());
  const bool held = listener.WaitHeld(kWaitNs);
  EXPECT_TRUE(held) << "restoration never started";
  if (held) fail(*app);
  listener.Release();
  if (held) heal();
  EXPECT_TRUE(WaitUntil(world.clock(), kWaitNs, [&]() {
    return listener.ends() >= kPartitions && world.InputFullyCommitted(*app);
  })) << "restored " << listener.records() << " records, " << listener.ends() << " ends";
  EXPECT_LT(listener.records(), 3 * kPartitions * kChangelogRecords);
  EXPECT_TRUE(IsRunningOrRebalancing(runtime.state())) << RuntimeStateName(runtime.state());
  absl::Status closed = runtime.Close(kCloseNs);
  EXPECT_TRUE(closed.ok()) << closed;
  EXPECT_EQ(world.ExpectStoresEqualChangelogs(dir, *app).size(), size_t{kPartitions});
}

TEST(KafkaFailureTest, BrokerStoppedAndRestartedMidRestoration) {
  absl::StatusOr<std::unique_ptr<KafkaWorld>> world = KafkaWorld::Connect(kBootstrapEnv);
  ASSERT_TRUE(world.ok()) << world.status();
  KafkaCluster cluster("single");
  bool stopped = false;
  RestoreThroughFailure(
      **world, "restart",
      [&](const AppTopics&) {
        absl::Status s = cluster.StopNode(1, /*kill=*/false);
        EXPECT_TRUE(s.ok()) << s;
        stopped = s.ok();
      },
      [&]() {
        (*world)->clock().SleepFor(2 * kSecond);  // the restore thread polls a dead broker
        if (stopped) {
          absl::Status s = cluster.StartNode(1);
          ASSERT_TRUE(s.ok()) << s;
        }
      });
}

TEST(KafkaFailureTest, PartitionLeaderKilledMidRestorationInAThreeNodeCluster) {
  absl::StatusOr<std::unique_ptr<KafkaWorld>> world = KafkaWorld::Connect(kBootstrap3Env);
  ASSERT_TRUE(world.ok()) << world.status();
  KafkaCluster cluster("three");
  int killed = 0;
  const std::string base = "leader";
  RestoreThroughFailure(
      **world, base,
      [&](const AppTopics& app) {
        absl::StatusOr<int32_t> leader = (*world)->Leader(app.Changelog(0));
        ASSERT_TRUE(leader.ok()) << leader.status();
        absl::Status s = cluster.StopNode(*leader, /*kill=*/true);
        ASSERT_TRUE(s.ok()) << s;
        killed = *leader;
      },
      []() {});
  if (killed != 0) {
    absl::Status s = cluster.StartNode(killed);  // leave the cluster whole for the next run
    EXPECT_TRUE(s.ok()) << s;
  }
}

// Found by the first `restoresim soak` (seed 1, 3 minutes): a restore thread's admin handle
// that learned a changelog's leader before that leader was killed and restarted kept sending
// ListOffsets to it after leadership had moved; librdkafka 2.0.2's offsets_for_times answers
// NOT_LEADER_OR_FOLLOWER without refreshing its metadata, so a task arriving then stalled
// (139 s, until the preferred leader was elected back) and its restore thread spun. An admin
// must find the new leader, as Kafka's admin client does (metadata refreshed, request retried).
TEST(KafkaFailureTest, EndOffsetsFollowALeaderThatMovedWhileTheAdminWasIdle) {
  absl::StatusOr<std::unique_ptr<KafkaWorld>> world = KafkaWorld::Connect(kBootstrap3Env);
  ASSERT_TRUE(world.ok()) << world.status();
  KafkaCluster cluster("three");
  absl::StatusOr<AppTopics> app = (*world)->CreateApp("moved", 1);
  ASSERT_TRUE(app.ok()) << app.status();
  ASSERT_TRUE((*world)->Produce(app->Changelog(0), ChangelogRecords("", 100, 10)).ok());
  std::unique_ptr<Admin> admin = (*world)->transport().NewAdmin("idle-admin");
  ASSERT_TRUE(admin->EndOffsets({app->Changelog(0)}).ok());  // learns the leader
  absl::StatusOr<int32_t> leader = (*world)->Leader(app->Changelog(0));
  ASSERT_TRUE(leader.ok()) << leader.status();
  ASSERT_TRUE(cluster.StopNode(*leader, /*kill=*/true).ok());
  const bool moved = WaitUntil((*world)->clock(), kWaitNs, [&]() {
    absl::StatusOr<int32_t> now = (*world)->Leader(app->Changelog(0));
    return now.ok() && *now != *leader;
  });
  absl::Status restarted = cluster.StartNode(*leader);
  ASSERT_TRUE(restarted.ok()) << restarted;
  ASSERT_TRUE(moved) << "leadership never left node " << *leader;
  // The idle admin now: its cached leader is node `leader`, alive and no longer the leader.
  absl::StatusOr<std::map<TopicPartition, int64_t>> ends = absl::UnknownError("not asked");
  const bool answered = WaitUntil((*world)->clock(), 20 * kSecond, [&]() {
    ends = admin->EndOffsets({app->Changelog(0)});
    return ends.ok();
  });
  EXPECT_TRUE(answered) << "still " << ends.status() << " 20 s after node " << *leader
                        << " came back";
  if (answered) {
    EXPECT_EQ(ends->at(app->Changelog(0)), 100);
  }
}

// An admin that learned a group's coordinator before that broker was killed and restarted (alive,
// no longer the coordinator) asks the group's committed offsets again. librdkafka 2.0.2's
// ListConsumerGroupOffsets then gets NOT_COORDINATOR, and its OffsetFetch handler asks the
// handle's consumer group to find the coordinator again: an admin handle has none (no
// group.id), and rdk:main dereferences the null group (SIGSEGV; confluentinc/librdkafka#5040,
// still open). Seen first as a crash, about one run in seven, of the coordinator-kill test
// below, whose wait reads committed offsets this way; the soak's audit reads them so too.
TEST(KafkaFailureTest, CommittedOffsetsFollowACoordinatorThatMovedWhileTheAdminWasIdle) {
  absl::StatusOr<std::unique_ptr<KafkaWorld>> world = KafkaWorld::Connect(kBootstrap3Env);
  ASSERT_TRUE(world.ok()) << world.status();
  KafkaCluster cluster("three");
  absl::StatusOr<AppTopics> app = (*world)->CreateApp("coordmoved", 1);
  ASSERT_TRUE(app.ok()) << app.status();
  std::unique_ptr<Admin> admin = (*world)->transport().NewAdmin("idle-admin");
  absl::StatusOr<std::map<TopicPartition, int64_t>> first =
      admin->CommittedOffsets(app->app_id, {app->Input(0)});  // learns the coordinator
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<rdkafka::KafkaProtocolConnection> any = rdkafka::KafkaProtocolConnection::Open(
      (*world)->bootstrap(), "coordinator-test", (*world)->clock());
  ASSERT_TRUE(any.ok()) << any.status();
  absl::StatusOr<kafka_protocol::Coordinator> before = any->FindCoordinatorEntry(app->app_id);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(cluster.StopNode(before->node_id, /*kill=*/true).ok());
  const bool moved = WaitUntil((*world)->clock(), kWaitNs, [&]() {
    absl::StatusOr<rdkafka::KafkaProtocolConnection> c = rdkafka::KafkaProtocolConnection::Open(
        (*world)->bootstrap(), "coordinator-test", (*world)->clock());
    if (!c.ok()) return false;
    absl::StatusOr<kafka_protocol::Coordinator> now = c->FindCoordinatorEntry(app->app_id);
    return now.ok() && now->node_id != before->node_id;
  });
  absl::Status restarted = cluster.StartNode(before->node_id);
  ASSERT_TRUE(restarted.ok()) << restarted;
  ASSERT_TRUE(moved) << "the coordinator never left node " << before->node_id;
  // The idle admin now: the coordinator it knows is node `before`, alive and no longer it.
  absl::StatusOr<std::map<TopicPartition, int64_t>> committed = absl::UnknownError("not asked");
  const bool answered = WaitUntil((*world)->clock(), 20 * kSecond, [&]() {
    committed = admin->CommittedOffsets(app->app_id, {app->Input(0)});
    return committed.ok();
  });
  EXPECT_TRUE(answered) << "still " << committed.status() << " 20 s after node "
                        << before->node_id << " came back";
  if (answered) {
    EXPECT_TRUE(committed->empty());
  }
}

// A streams-group member (restoresim.group.protocol=streams) whose group coordinator's broker is
// killed (SIGKILL) in the 3-node cluster: the group moves with __consumer_offsets' leadership,
// and the member must find the new coordinator (FindCoordinator through any broker of its
// bootstrap list that answers) and go on heartbeating and committing there.
//
// It crashed about one run in seven (SIGSEGV in librdkafka's rdk:main) and was skipped for a
// while: the crash was the test's own admin reading committed offsets through librdkafka while
// the coordinator moved (see CommittedOffsetsFollowACoordinatorThatMovedWhileTheAdminWasIdle),
// not the member's handle, which keeps its group.id.
TEST(KafkaFailureTest, AStreamsMemberFollowsItsCoordinatorWhenThatBrokerIsKilled) {
  absl::StatusOr<std::unique_ptr<KafkaWorld>> world = KafkaWorld::Connect(kBootstrap3Env);
  ASSERT_TRUE(world.ok()) << world.status();
  KafkaCluster cluster("three");
  absl::StatusOr<AppTopics> app = (*world)->CreateApp("coordinator", kPartitions);
  ASSERT_TRUE(app.ok()) << app.status();
  for (int32_t p = 0; p < kPartitions; ++p) {
    ASSERT_TRUE((*world)->Produce(app->Changelog(p), ChangelogRecords("", 2000, 50)).ok());
    ASSERT_TRUE((*world)->Produce(app->Input(p), InputRecords(100, 5)).ok());
  }
  const std::string dir = (*world)->NewStateDir("coordinator");
  RuntimeConfig config = (*world)->Config(*app, dir);
  config.group_protocol = "streams";
  GatedRestoreListener listener;
  Runtime runtime(config, (*world)->transport(), (*world)->clock(), *PosixFileSystem::Default(),
                  RocksDbOpener(), &listener);
  ASSERT_TRUE(runtime.Start().ok());
  auto committed = [&]() { return (*world)->InputFullyCommitted(*app); };
  ASSERT_TRUE(WaitUntil((*world)->clock(), kWaitNs, [&]() {
    return listener.ends() == kPartitions && committed();
  })) << "the member did not restore and process before the failure";

  absl::StatusOr<rdkafka::KafkaProtocolConnection> any = rdkafka::KafkaProtocolConnection::Open(
      (*world)->bootstrap(), "coordinator-test", (*world)->clock());
  ASSERT_TRUE(any.ok()) << any.status();
  absl::StatusOr<kafka_protocol::Coordinator> coordinator = any->FindCoordinatorEntry(app->app_id);
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  ASSERT_TRUE(cluster.StopNode(coordinator->node_id, /*kill=*/true).ok());
  absl::Status produced = absl::OkStatus();
  for (int32_t p = 0; p < kPartitions && produced.ok(); ++p) {
    produced = (*world)->Produce(app->Input(p), InputRecords(100, 5));
  }
  const bool followed = produced.ok() && WaitUntil((*world)->clock(), kWaitNs, committed);
  // The node comes back whatever happened, so that the cluster is whole for the next test.
  absl::Status restarted = cluster.StartNode(coordinator->node_id);
  ASSERT_TRUE(produced.ok()) << produced;
  ASSERT_TRUE(restarted.ok()) << restarted;
  EXPECT_TRUE(followed) << "nothing was committed after coordinator node "
                        << coordinator->node_id << " was killed";
  EXPECT_EQ(runtime.threads_failed(), 0);
  EXPECT_TRUE(IsRunningOrRebalancing(runtime.state())) << RuntimeStateName(runtime.state());
  absl::Status closed = runtime.Close(kCloseNs);
  EXPECT_TRUE(closed.ok()) << closed;
  EXPECT_EQ((*world)->ExpectStoresEqualChangelogs(dir, *app).size(), size_t{kPartitions});
}

}  // namespace
}  // namespace restoresim::kafka_test
