// The runtime as a member of a streams group (restoresim.group.protocol=streams, KIP-1071, issue
// 26) on the local Kafka 4.4 cluster: the broker's group coordinator, not a client-side assignor,
// places active and standby tasks (tools/kafka/broker sets group.streams.num.standby.replicas=1),
// so what a classic group on a real broker never does happens here, checked against the
// changelogs:
//   - a second instance joins: the first revokes one task, which the broker gives the joiner,
//     and keeps it as a standby instead (a recycle, active to standby, on a real broker); the
//     joiner keeps the other task as a standby, updated from the changelog the first writes;
//   - the first instance leaves: the joiner's standby becomes its active task (a recycle,
//     standby to active), restoring only what its standby had not applied.
// At the end every store equals the fold of its changelog, and the counts equal the reference
// model (every hand-over was clean, so no input record was processed twice).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "core/port/posix_file_system.h"
#include "core/runtime/count_topology.h"
#include "core/runtime/runtime.h"
#include "core/runtime/runtime_observer.h"
#include "core/runtime/state_manager.h"
#include "core/util/run_context.h"
#include "kafka/kafka_env.h"
#include "kafka/kafka_world.h"

namespace restoresim::kafka_test {
namespace {

constexpr TimeNs kWaitNs = 90 * kSecond;
constexpr TimeNs kCloseNs = 60 * kSecond;

// What one instance's threads did with its tasks: the latest assignment and every recycle.
class TaskLog final : public RuntimeObserver {
 public:
  void OnAssignment(std::string_view, const std::set<TaskId>& active,
                    const std::set<TaskId>& standby, bool revocation) override {
    if (revocation) return;  // the assignment after the revocation follows
    std::lock_guard<std::mutex> lock(mu_);
    active_ = active;
    standby_ = standby;
  }
  // A recycle: a new incarnation of the task over the same stores, of another type.
  void OnDecision(std::string_view, const TaskIncarnation& who, TaskDecision decision,
                  TaskType type) override {
    if (decision != TaskDecision::kRecycle) return;
    std::lock_guard<std::mutex> lock(mu_);
    conversions_.push_back(fmt::format("{} recycled {}", who.id.ToString(), TaskTypeName(type)));
  }

  std::set<TaskId> active() const {
    std::lock_guard<std::mutex> lock(mu_);
    return active_;
  }
  std::set<TaskId> standby() const {
    std::lock_guard<std::mutex> lock(mu_);
    return standby_;
  }
  std::vector<std::string> conversions() const {
    std::lock_guard<std::mutex> lock(mu_);
    return conversions_;
  }
  bool Converted(const std::string& what) const {
    for (const std::string& c : conversions()) {
      if (c == what) return true;
    }
    return false;
  }

 private:
  mutable std::mutex mu_;
  std::set<TaskId> active_;
  std::set<TaskId> standby_;
  std::vector<std::string> conversions_;
};

class StreamsGroupFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<KafkaWorld>> world = KafkaWorld::Connect(kBootstrapEnv);
    ASSERT_TRUE(world.ok()) << world.status();
    world_ = std::move(*world);
  }

  RuntimeConfig StreamsConfig(const AppTopics& app, const std::string& dir,
                              const std::string& guarantee = "at_least_once") const {
    RuntimeConfig config = world_->Config(app, dir);
    config.group_protocol = "streams";
    config.processing_guarantee = guarantee;
    return config;
  }

  // Starts a runtime whose threads report to `log` (they inherit the starter's observer).
  std::unique_ptr<Runtime> Start(const RuntimeConfig& config, StateRestoreListener* listener,
                                 TaskLog* log) {
    ScopedObserver observe(log);
    auto runtime = std::make_unique<Runtime>(config, world_->transport(), world_->clock(),
                                             *PosixFileSystem::Default(), RocksDbOpener(),
                                             listener);
    absl::Status s = runtime->Start();
    EXPECT_TRUE(s.ok()) << s;
    return runtime;
  }

  void Close(Runtime& runtime, TaskLog* log) {
    EXPECT_TRUE(IsRunningOrRebalancing(runtime.state()))
        << "a stream thread failed: " << RuntimeStateName(runtime.state());
    ScopedObserver observe(log);
    absl::Status s = runtime.Close(kCloseNs);
    EXPECT_TRUE(s.ok()) << s;
  }

  void Produce(const AppTopics& app, int32_t p) {
    absl::Status s = world_->Produce(app.Input(p), InputRecords(200, 5));
    ASSERT_TRUE(s.ok()) << s;
  }

  bool Wait(const std::function<bool()>& done) {
    return WaitUntil(world_->clock(), kWaitNs, done);
  }

  std::unique_ptr<KafkaWorld> world_;
};

// Parameter: processing.guarantee.
class KafkaStreamsRuntimeTest : public StreamsGroupFixture,
                                public ::testing::WithParamInterface<std::string> {};

TEST_P(KafkaStreamsRuntimeTest, TheBrokerPlacesAStandbyAndTheRuntimeRecyclesBothWays) {
  constexpr int32_t kPartitions = 2;
  constexpr int kChangelogRecords = 3000;
  const bool eos = GetParam() == "exactly_once_v2";
  absl::StatusOr<AppTopics> created =
      world_->CreateApp(eos ? "streams-group-eos" : "streams-group", kPartitions);
  ASSERT_TRUE(created.ok()) << created.status();
  const AppTopics app = *created;
  for (int32_t p = 0; p < kPartitions; ++p) {
    const std::vector<TestRecord> changelog = ChangelogRecords("", kChangelogRecords, 40);
    ASSERT_TRUE(world_->Produce(app.Changelog(p), changelog).ok());
    ASSERT_TRUE(world_->Produce(app.Input(p), InputRecords(200, 5)).ok());
  }
  auto committed = [&]() { return world_->InputFullyCommitted(app); };
  const std::string dir_a = world_->NewStateDir(app.app_id + "-a");
  const std::string dir_b = world_->NewStateDir(app.app_id + "-b");
  GatedRestoreListener listener_a;
  GatedRestoreListener listener_b;
  TaskLog log_a;
  TaskLog log_b;

  // a alone: both tasks active (a standby never shares an instance with its active).
  std::unique_ptr<Runtime> a = Start(StreamsConfig(app, dir_a, GetParam()), &listener_a, &log_a);
  ASSERT_TRUE(Wait([&]() { return listener_a.ends() == kPartitions && committed(); }))
      << "instance a alone did not restore and process both tasks";
  EXPECT_EQ(log_a.active(), (std::set<TaskId>{{0, 0}, {0, 1}}));

  // b joins: one task moves to b, and each instance keeps the other's as a standby.
  std::unique_ptr<Runtime> b = Start(StreamsConfig(app, dir_b, GetParam()), &listener_b, &log_b);
  ASSERT_TRUE(Wait([&]() {
    return log_a.active().size() == 1 && log_b.active().size() == 1 &&
           log_a.standby() == log_b.active() && log_b.standby() == log_a.active();
  })) << "the broker did not give each instance an active task and the other's as a standby";
  const TaskId moved = *log_b.active().begin();
  const TaskId kept = *log_a.active().begin();
  EXPECT_TRUE(Wait([&]() { return log_a.Converted(moved.ToString() + " recycled standby"); }))
      << "a's revoked task was not recycled into a standby; a recycled: "
      << absl::StrJoin(log_a.conversions(), ", ");
  for (int32_t p = 0; p < kPartitions; ++p) Produce(app, p);
  ASSERT_TRUE(Wait(committed));

  // a leaves: b's standby of `kept` is promoted, restoring only what it had not applied.
  const int64_t restored_before = listener_b.records();
  Close(*a, &log_a);
  a.reset();
  ASSERT_TRUE(Wait([&]() { return log_b.active().size() == kPartitions; }))
      << "b was not given a's task";
  EXPECT_TRUE(Wait([&]() { return log_b.Converted(kept.ToString() + " recycled active"); }))
      << "b's standby was not recycled into the active task; b recycled: "
      << absl::StrJoin(log_b.conversions(), ", ");
  for (int32_t p = 0; p < kPartitions; ++p) Produce(app, p);
  ASSERT_TRUE(Wait([&]() { return listener_b.ends() == kPartitions && committed(); }));
  EXPECT_LT(listener_b.records() - restored_before, kChangelogRecords)
      << "the promoted task restored from scratch, not from its standby's position";
  Close(*b, &log_b);

  EXPECT_EQ(world_->ExpectStoresEqualChangelogs(dir_b, app).size(), size_t{kPartitions});
  world_->ExpectStoresEqualChangelogs(dir_a, app, false);
  world_->ExpectCountsOfTheReference(
      app, kChangelogRecords,
      eos ? IsolationLevel::kReadCommitted : IsolationLevel::kReadUncommitted);
}

// More stream threads than tasks: the broker gives one thread nothing (its standby cannot share
// the instance with its active), and that thread must still be told (OnPartitionsAssigned with
// nothing, as for every generation) and run, so that the instance reaches RUNNING. The member
// reconciles only a target that differs from what it holds, so a join given nothing would call
// nothing (read in review, 2026-12-06). On Kafka 4.4 this test passes with or without
// RdKafkaStreamsGroupConsumer::MaybeAssignNothing (tried): a new member's first response says
// ASSIGNMENT_DELAYED, and the group turning ready is itself a reconciliation. The path it
// covers is a rejoin after a fencing given nothing, which no test here reaches yet.
TEST_F(StreamsGroupFixture, AThreadGivenNothingStillRuns) {
  absl::StatusOr<AppTopics> created = world_->CreateApp("streams-idle", 1);
  ASSERT_TRUE(created.ok()) << created.status();
  const AppTopics app = *created;
  ASSERT_TRUE(world_->Produce(app.Changelog(0), ChangelogRecords("", 100, 10)).ok());
  Produce(app, 0);
  RuntimeConfig config = StreamsConfig(app, world_->NewStateDir(app.app_id));
  config.num_stream_threads = 2;
  GatedRestoreListener listener;
  TaskLog log;
  std::unique_ptr<Runtime> runtime = Start(config, &listener, &log);
  EXPECT_TRUE(Wait([&]() {
    return runtime->state() == RuntimeState::kRunning && world_->InputFullyCommitted(app);
  })) << "state " << RuntimeStateName(runtime->state());
  Close(*runtime, &log);
}

// Under exactly once the offsets go with each transaction (TxnOffsetCommit with the member's
// id and epoch, as Kafka's consumer gives them under the streams protocol).
INSTANTIATE_TEST_SUITE_P(Guarantees, KafkaStreamsRuntimeTest,
                         ::testing::Values("at_least_once", "exactly_once_v2"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "at_least_once" ? std::string("AtLeastOnce")
                                                                : std::string("ExactlyOnce");
                         });

}  // namespace
}  // namespace restoresim::kafka_test

namespace restoresim::kafka_test {
namespace {

// One Kafka Streams instance (tools/kafka/peer member: the same count topology, store and
// changelog) in the application's streams group, until Stop; its state changes are lines in
// `log_path` ("state REBALANCING RUNNING").
class JavaInstance {
 public:
  JavaInstance(const AppTopics& app, const std::string& bootstrap, const std::string& state_dir,
               const std::string& log_path)
      : log_path_(log_path) {
    const std::string tool = std::getenv("RESTORESIM_KAFKA_BROKER_TOOL");
    const std::string dir = tool.substr(0, tool.rfind('/'));
    const std::string command = fmt::format(
        "'{}/peer' --build '{}' member --bootstrap-servers '{}' --application-id '{}' "
        "--input-topic '{}' --partitions {} --state-dir '{}' --group-protocol streams "
        ">'{}' 2>'{}.err'",
        dir, std::getenv("RESTORESIM_KAFKA_BUILD_DIR"), bootstrap, app.app_id, app.input,
        app.partitions, state_dir, log_path, log_path);
    stdin_ = popen(command.c_str(), "w");
  }
  ~JavaInstance() { Stop(); }

  bool started() const { return stdin_ != nullptr; }
  std::string Log() const {
    std::ifstream in(log_path_);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // Ends its input: it closes (committing, leaving the group); the exit status.
  int Stop() {
    if (stdin_ == nullptr) return exit_;
    exit_ = pclose(stdin_);
    stdin_ = nullptr;
    return exit_;
  }

 private:
  const std::string log_path_;
  FILE* stdin_ = nullptr;
  int exit_ = -1;
};

// restoresim's runtime and Kafka Streams as instances of one application in one streams group
// on Kafka 4.4 (issue 26): tasks move between them as instances come and go, each restores
// stores from changelogs the other wrote, and a standby one kept is promoted on the other.
//   1. Kafka Streams (j1) alone processes the input;
//   2. restoresim (c) joins: a task moves to it (restored from j1's changelog) and it keeps
//      j1's other task as a standby;
//   3. j1 leaves: c's standby of j1's task becomes its active task (a recycle);
//   4. Kafka Streams (j2) joins: a task moves from c to j2, which restores it from the
//      changelog c wrote; c keeps it as a standby (a recycle, active to standby);
//   5. c leaves, j2 processes the rest alone.
// With RESTORESIM_MIXED_ROUNDS=N steps 2 to 5 repeat N times, each with a new restoresim and a
// new Kafka Streams instance (the longer run).
// At the end the counts (every changelog folded) equal the reference model: each input record
// processed once, whichever implementation processed it; c's stores equal their changelogs.
class KafkaMixedApplicationTest : public StreamsGroupFixture {
 protected:
  static constexpr int32_t kPartitions = 2;

  bool Committed() { return world_->InputFullyCommitted(app_); }
  void MoreInput() {
    for (int32_t p = 0; p < kPartitions; ++p) Produce(app_, p);
  }
  std::unique_ptr<JavaInstance> NewJava(const std::string& name) {
    const std::string dir = world_->NewStateDir(app_.app_id + "-" + name);
    auto java = std::make_unique<JavaInstance>(app_, world_->bootstrap(), dir, dir + ".log");
    EXPECT_TRUE(java->started()) << name;
    return java;
  }

  // Steps 2 to 5 with restoresim instance `round`: it joins beside `java`, which then leaves;
  // a new Kafka Streams instance joins, and restoresim leaves. `java` is the new one after.
  void Round(int round, std::unique_ptr<JavaInstance>& java) {
    const std::string dir = world_->NewStateDir(fmt::format("{}-c{}", app_.app_id, round));
    GatedRestoreListener listener;
    TaskLog log;
    std::unique_ptr<Runtime> c = Start(StreamsConfig(app_, dir), &listener, &log);
    ASSERT_TRUE(Wait([&]() { return log.active().size() == 1 && log.standby().size() == 1; }))
        << "restoresim was not given one task and a standby; Kafka Streams' log:\n"
        << java->Log();
    const TaskId from_java = *log.standby().begin();
    MoreInput();
    ASSERT_TRUE(Wait([&]() { return Committed(); }));

    EXPECT_EQ(java->Stop(), 0) << java->Log();
    ASSERT_TRUE(Wait([&]() { return log.active().size() == kPartitions; }))
        << "restoresim was not given Kafka Streams' task when it left";
    EXPECT_TRUE(Wait([&]() { return log.Converted(from_java.ToString() + " recycled active"); }))
        << "the standby of Kafka Streams' task was not promoted; recycled: "
        << absl::StrJoin(log.conversions(), ", ");
    MoreInput();
    ASSERT_TRUE(Wait([&]() { return Committed(); }));

    java = NewJava(fmt::format("j{}", round + 2));
    ASSERT_TRUE(Wait([&]() { return log.active().size() == 1; }))
        << "no task moved to the new Kafka Streams instance; its log:\n" << java->Log();
    const TaskId to_java = *log.standby().begin();
    EXPECT_TRUE(Wait([&]() { return log.Converted(to_java.ToString() + " recycled standby"); }));
    MoreInput();
    ASSERT_TRUE(Wait([&]() { return Committed(); }));

    Close(*c, &log);
    c.reset();
    MoreInput();
    ASSERT_TRUE(Wait([&]() { return Committed(); }))
        << "Kafka Streams alone did not process the rest:\n" << java->Log();
    world_->ExpectStoresEqualChangelogs(dir, app_, /*at_end=*/false);
  }

  AppTopics app_;
};

// Rounds: 1, or RESTORESIM_MIXED_ROUNDS (the longer run, docs/USING.md).
int MixedRounds() {
  const char* rounds = std::getenv("RESTORESIM_MIXED_ROUNDS");
  return rounds == nullptr ? 1 : std::max(1, std::atoi(rounds));
}

TEST_F(KafkaMixedApplicationTest, RestoresimAndKafkaStreamsShareOneApplication) {
  constexpr int kChangelogRecords = 1000;
  absl::StatusOr<AppTopics> created = world_->CreateApp("mixed", kPartitions);
  ASSERT_TRUE(created.ok()) << created.status();
  app_ = *created;
  // Counts only (no tombstone): Kafka Streams' processor skips null values.
  for (int32_t p = 0; p < kPartitions; ++p) {
    std::vector<TestRecord> changelog;
    for (int i = 0; i < kChangelogRecords; ++i) {
      changelog.push_back({"k" + std::to_string(i % 5), std::to_string(i % 3 + 1)});
    }
    ASSERT_TRUE(world_->Produce(app_.Changelog(p), changelog).ok());
    Produce(app_, p);
  }
  std::unique_ptr<JavaInstance> java = NewJava("j1");
  ASSERT_TRUE(Wait([&]() { return Committed(); }))
      << "Kafka Streams alone did not process the input; its log:\n" << java->Log();
  for (int round = 0; round < MixedRounds(); ++round) {
    Round(round, java);
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(java->Stop(), 0) << java->Log();
  world_->ExpectCountsOfTheReference(app_, kChangelogRecords);
}

}  // namespace
}  // namespace restoresim::kafka_test
