// The runtime under processing.guarantee=exactly_once_v2 on real threads against the local
// single-node cluster (RESTORESIM_KAFKA_BOOTSTRAP): librdkafka's transactional producer (one
// per stream thread, transactional.id "<application.id>-<process id>-<thread index>") and
// read_committed main and restore consumers. The real-cluster forms of the simulated EOS stories:
//   - a changelog holding committed and aborted transactions, its end an abort marker
//     (scenario.eos_changelog_tail_aborted);
//   - an instance killed with its transaction open, restarted over the same state directory
//     (scenario.eos_crash_with_open_transaction);
//   - two live instances of one application, which never fence each other.
// Every check reads the changelogs read_committed: a store must equal the fold of the
// committed records only, and the counts must equal every input record processed once.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/port/posix_file_system.h"
#include "core/runtime/count_topology.h"
#include "core/runtime/runtime.h"
#include "kafka/kafka_env.h"
#include "kafka/kafka_world.h"

namespace restoresim::kafka_test {
namespace {

constexpr TimeNs kWaitNs = 90 * kSecond;
constexpr TimeNs kCloseNs = 60 * kSecond;
constexpr IsolationLevel kCommitted = IsolationLevel::kReadCommitted;
constexpr IsolationLevel kUncommitted = IsolationLevel::kReadUncommitted;

class KafkaEosTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<KafkaWorld>> world = KafkaWorld::Connect(kBootstrapEnv);
    ASSERT_TRUE(world.ok()) << world.status();
    world_ = std::move(*world);
  }

  AppTopics NewApp(const std::string& base, int32_t partitions) {
    absl::StatusOr<AppTopics> app = world_->CreateApp(base, partitions);
    EXPECT_TRUE(app.ok()) << app.status();
    return app.ok() ? *app : AppTopics{};
  }

  RuntimeConfig EosConfig(const AppTopics& app, const std::string& dir) {
    RuntimeConfig config = world_->Config(app, dir);
    config.processing_guarantee = "exactly_once_v2";
    return config;
  }

  std::unique_ptr<Runtime> Start(const RuntimeConfig& config, StateRestoreListener* listener) {
    auto runtime = std::make_unique<Runtime>(config, world_->transport(), world_->clock(),
                                             *PosixFileSystem::Default(), RocksDbOpener(),
                                             listener);
    absl::Status s = runtime->Start();
    EXPECT_TRUE(s.ok()) << s;
    return runtime;
  }

  void Close(Runtime& runtime) {
    EXPECT_TRUE(IsRunningOrRebalancing(runtime.state()))
        << "a stream thread failed: " << RuntimeStateName(runtime.state());
    absl::Status s = runtime.Close(kCloseNs);
    EXPECT_TRUE(s.ok()) << s;
  }

  // A crash as the simulated one makes it, less the disk: every thread stopped without a clean
  // close (no commit; under exactly once its tasks are closed dirty, their state wiped) and
  // no transaction ended, then Close only moves the runtime to NOT_RUNNING.
  void Crash(Runtime& runtime) {
    for (size_t i = 0; i < runtime.thread_count(); ++i) {
      (void)runtime.thread(i).Shutdown(kCloseNs, /*clean=*/false);
    }
    (void)runtime.Close(kCloseNs);
  }

  std::vector<ConsumerRecord> Read(const TopicPartition& tp, IsolationLevel isolation) {
    absl::StatusOr<std::vector<ConsumerRecord>> log = world_->ReadAll(tp, isolation);
    EXPECT_TRUE(log.ok()) << tp.ToString() << ": " << log.status();
    return log.ok() ? *log : std::vector<ConsumerRecord>{};
  }

  // Whether `tp` holds records of a transaction that has not ended (its last stable offset is
  // below its end).
  bool OpenTransaction(const TopicPartition& tp) {
    absl::StatusOr<int64_t> stable = world_->StableOffset(tp);
    absl::StatusOr<int64_t> end = world_->EndOffset(tp);
    return stable.ok() && end.ok() && *stable < *end;
  }

  // The counts each partition's committed changelog must fold to: its first `initial`
  // committed records folded, then every input record processed exactly once.
  void ExpectExactCounts(const AppTopics& app, size_t initial) {
    for (int32_t p = 0; p < app.partitions; ++p) {
      const std::vector<ConsumerRecord> changelog = Read(app.Changelog(p), kCommitted);
      const std::vector<ConsumerRecord> input = Read(app.Input(p), kCommitted);
      ASSERT_GE(changelog.size(), initial);
      const std::vector<ConsumerRecord> before(
          changelog.begin(), changelog.begin() + static_cast<ptrdiff_t>(initial));
      EXPECT_EQ(FoldChangelog(changelog), ReferenceCounts(input, FoldChangelog(before)))
          << "partition " << p;
    }
  }

  std::unique_ptr<KafkaWorld> world_;
};

// Records of `n` keys "k<i>" (the keys the input counts) with values no count takes.
std::vector<TestRecord> AbortedRecords(const std::string& tag, int n) {
  std::vector<TestRecord> out;
  for (int i = 0; i < n; ++i) {
    out.push_back({"k" + std::to_string(i % 7), tag + "-" + std::to_string(i)});
    out.push_back({tag + "-ghost-" + std::to_string(i % 5), "1"});
  }
  return out;
}

// scenario.eos_changelog_tail_aborted against Kafka: committed, aborted, committed, aborted.
TEST_F(KafkaEosTest, RestoresOnlyCommittedRecordsAndCompletesAtAnAbortMarker) {
  constexpr int32_t kPartitions = 2;
  constexpr size_t kCommittedRecords = 500;
  const AppTopics app = NewApp("eos-aborted", kPartitions);
  for (int32_t p = 0; p < kPartitions; ++p) {
    ASSERT_TRUE(world_->ProduceTransactions(
        app.Changelog(p), {{ChangelogRecords("", 300, 7), true},
                           {AbortedRecords("aborted", 100), false},
                           {ChangelogRecords("more-", 200, 10), true},
                           {AbortedRecords("tail", 50), false}}).ok());
    ASSERT_TRUE(world_->Produce(app.Input(p), InputRecords(200, 7)).ok());
  }
  // The premises: the aborted records change the fold (a store that took them differs), and
  // the log ends with a marker, past its last record.
  for (int32_t p = 0; p < kPartitions; ++p) {
    const std::vector<ConsumerRecord> all = Read(app.Changelog(p), kUncommitted);
    const std::vector<ConsumerRecord> committed = Read(app.Changelog(p), kCommitted);
    ASSERT_EQ(committed.size(), kCommittedRecords);
    ASSERT_NE(FoldChangelog(all), FoldChangelog(committed));
    absl::StatusOr<int64_t> end = world_->EndOffset(app.Changelog(p));
    ASSERT_TRUE(end.ok() && !all.empty());
    ASSERT_LT(all.back().offset, *end - 1) << "the changelog's last offset is a marker";
  }
  const std::string dir = world_->NewStateDir("eos-aborted");
  GatedRestoreListener listener;
  std::unique_ptr<Runtime> runtime = Start(EosConfig(app, dir), &listener);
  EXPECT_TRUE(WaitUntil(world_->clock(), kWaitNs, [&]() {
    return listener.ends() == kPartitions && world_->InputFullyCommitted(app);
  })) << "restored " << listener.records() << ", ends " << listener.ends();
  Close(*runtime);
  EXPECT_EQ(listener.records(), int64_t{kPartitions} * int64_t{kCommittedRecords})
      << "every committed record restored once, no aborted one";
  EXPECT_EQ(world_->ExpectStoresEqualChangelogs(dir, app).size(), size_t{kPartitions});
  for (int32_t p = 0; p < kPartitions; ++p) {
    absl::StatusOr<std::map<std::string, std::string>> store = world_->ReadStore(dir, app, p);
    ASSERT_TRUE(store.ok()) << store.status();
    for (const auto& [key, value] : *store) {
      EXPECT_EQ(key.find("ghost"), std::string::npos) << "an aborted key was restored: " << key;
    }
  }
  ExpectExactCounts(app, kCommittedRecords);
}

// scenario.eos_crash_with_open_transaction against Kafka.
TEST_F(KafkaEosTest, RestartAfterACrashMidTransactionAbortsItAndNeverRestoresIt) {
  constexpr int32_t kPartitions = 2;
  constexpr size_t kChangelogRecords = 1000;
  const AppTopics app = NewApp("eos-crash", kPartitions);
  for (int32_t p = 0; p < kPartitions; ++p) {
    ASSERT_TRUE(world_->Produce(app.Changelog(p), ChangelogRecords("", 1000, 40)).ok());
    ASSERT_TRUE(world_->Produce(app.Input(p), InputRecords(300, 7)).ok());
  }
  const std::string dir = world_->NewStateDir("eos-crash");
  RuntimeConfig config = EosConfig(app, dir);
  // No commit by the interval: the transaction stays open until the crash (the broker would
  // abort it after Kafka Streams' transaction.timeout.ms, 10 s; the crash comes well before).
  config.commit_interval_ms = 600'000;
  GatedRestoreListener first;
  std::unique_ptr<Runtime> runtime = Start(config, &first);
  auto open = [&]() {
    for (int32_t p = 0; p < kPartitions; ++p) {
      if (!OpenTransaction(app.Changelog(p))) return false;
    }
    return true;
  };
  ASSERT_TRUE(WaitUntil(world_->clock(), kWaitNs, [&]() {
    return runtime->Metrics().records_processed == 300 * kPartitions && open();
  })) << "processed " << runtime->Metrics().records_processed;
  Crash(*runtime);
  runtime.reset();
  ASSERT_TRUE(open()) << "the crash ended the transaction: nothing for the restart to abort";
  EXPECT_FALSE(world_->InputFullyCommitted(app));

  // The restart's producer initialises the same transactional id: the open transaction is
  // aborted and its records, already in the changelogs, are never restored.
  config.commit_interval_ms = 200;
  GatedRestoreListener second;
  runtime = Start(config, &second);
  EXPECT_TRUE(WaitUntil(world_->clock(), kWaitNs, [&]() {
    return second.ends() == kPartitions && world_->InputFullyCommitted(app);
  })) << "restored " << second.records() << ", ends " << second.ends();
  Close(*runtime);
  // The crash's dirty close wiped the stores (exactly once): the restart restored from
  // scratch, the committed records only.
  EXPECT_EQ(second.records(), int64_t{kPartitions} * int64_t{kChangelogRecords});
  for (int32_t p = 0; p < kPartitions; ++p) {
    EXPECT_FALSE(OpenTransaction(app.Changelog(p)));
    EXPECT_GT(Read(app.Changelog(p), kUncommitted).size(),
              Read(app.Changelog(p), kCommitted).size())
        << "the crashed transaction's records are in the log, aborted";
  }
  EXPECT_EQ(world_->ExpectStoresEqualChangelogs(dir, app).size(), size_t{kPartitions});
  ExpectExactCounts(app, kChangelogRecords);
}

// A zombie: instance a runs the application's tasks; instance b joins with the same
// application.id, so its stream thread has a's transactional.id, and when b initialises it
// for the tasks it takes over, a's producer is fenced. a must lose its tasks (closed dirty,
// re-created), never fail, and nothing it wrote after the fence may commit: the counts stay
// exact.
// Two live instances of one application under exactly_once_v2: their transactional ids differ
// (Kafka's "<application.id>-<process id>-<thread index>"), so neither fences the other; a task
// moves from a to b by a clean revocation (a commits its transaction first), and both go on
// processing. Found by kafka_streams_runtime_test's exactly-once case on 2026-12-06: every
// instance's thread used "<application.id>-<thread name>", the same in every instance of an
// application, so b's initialisation fenced a, a's re-initialisation (after its tasks were lost)
// fenced b, and so on for as long as both lived. This test failed then (a lost its tasks again
// and again: its restore listener saw them start anew after b joined).
TEST_F(KafkaEosTest, TwoInstancesNeverFenceEachOtherAndHandATaskOverCleanly) {
  constexpr int32_t kPartitions = 2;
  constexpr size_t kChangelogRecords = 500;
  const AppTopics app = NewApp("eos-two", kPartitions);
  for (int32_t p = 0; p < kPartitions; ++p) {
    ASSERT_TRUE(world_->Produce(app.Changelog(p), ChangelogRecords("", 500, 20)).ok());
    ASSERT_TRUE(world_->Produce(app.Input(p), InputRecords(200, 7)).ok());
  }
  const std::string dir_a = world_->NewStateDir("eos-two-a");
  const std::string dir_b = world_->NewStateDir("eos-two-b");
  GatedRestoreListener listener_a;
  GatedRestoreListener listener_b;
  std::unique_ptr<Runtime> a = Start(EosConfig(app, dir_a), &listener_a);
  auto committed = [&]() { return world_->InputFullyCommitted(app); };
  ASSERT_TRUE(WaitUntil(world_->clock(), kWaitNs, [&]() {
    return listener_a.ends() == kPartitions && committed();
  })) << "instance a alone did not process its input";

  // b joins and takes a task over; both then process the input that arrives next, twice.
  const int64_t starts_before = listener_a.starts();
  std::unique_ptr<Runtime> b = Start(EosConfig(app, dir_b), &listener_b);
  ASSERT_TRUE(WaitUntil(world_->clock(), kWaitNs, [&]() { return listener_b.ends() > 0; }))
      << "no task moved to instance b";
  for (int round = 0; round < 2; ++round) {
    for (int32_t p = 0; p < kPartitions; ++p) {
      ASSERT_TRUE(world_->Produce(app.Input(p), InputRecords(200, 7)).ok());
    }
    EXPECT_TRUE(WaitUntil(world_->clock(), kWaitNs, committed)) << "round " << round;
  }
  EXPECT_EQ(listener_a.starts(), starts_before)
      << "a restored a task again after b joined: it lost its tasks (fenced)";
  EXPECT_EQ(a->threads_failed(), 0);
  EXPECT_EQ(b->threads_failed(), 0);
  Close(*a);
  Close(*b);
  world_->ExpectStoresEqualChangelogs(dir_a, app, /*at_end=*/false);
  world_->ExpectStoresEqualChangelogs(dir_b, app, /*at_end=*/false);
  ExpectExactCounts(app, kChangelogRecords);
}

}  // namespace
}  // namespace restoresim::kafka_test
