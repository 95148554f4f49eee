#include "kafka/kafka_world.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "core/port/posix_file_system.h"
#include "core/port/system_clock.h"
#include "core/state/checkpoint_file.h"
#include "core/runtime/count_topology.h"
#include "core/state/rocksdb_store.h"
#include "kafka/kafka_env.h"
#include "soak/soak_audit.h"

namespace restoresim::kafka_test {
namespace {

constexpr TimeNs kFlushTimeoutNs = 60 * kSecond;
constexpr int kCreateAttemptsMax = 50;

// Wall-clock timestamps, as a real producer's: a broker with time retention keeps them.
int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::vector<TestRecord> ChangelogRecords(const std::string& prefix, int n, int keys) {
  std::vector<TestRecord> out;
  for (int i = 0; i < n; ++i) {
    TestRecord r{fmt::format("{}k{}", prefix, i % keys), std::to_string(i)};
    if (i % 10 == 9) r.value.reset();
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<TestRecord> InputRecords(int n, int keys) {
  std::vector<TestRecord> out;
  for (int i = 0; i < n; ++i) out.push_back(TestRecord{fmt::format("k{}", i % keys), "1"});
  return out;
}

bool WaitUntil(Clock& clock, TimeNs timeout_ns, const std::function<bool()>& done) {
  const TimeNs deadline = DeadlineAfter(clock.NowNs(), timeout_ns);
  while (!done()) {
    if (clock.NowNs() >= deadline) return done();
    clock.SleepFor(20 * kMillisecond);
  }
  return true;
}

StoreOpener RocksDbOpener() {
  return [](const std::string& dir,
            const std::string& name) -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
    auto store = RocksDbStore::Open(dir, name);
    if (!store.ok()) return store.status();
    return std::unique_ptr<KeyValueStore>(std::move(*store));
  };
}

absl::StatusOr<std::unique_ptr<KafkaWorld>> KafkaWorld::Connect(const char* env_var) {
  absl::StatusOr<std::string> bootstrap = Bootstrap(env_var);
  if (!bootstrap.ok()) return bootstrap.status();
  return std::unique_ptr<KafkaWorld>(new KafkaWorld(*bootstrap));
}

KafkaWorld::KafkaWorld(std::string bootstrap) : bootstrap_(std::move(bootstrap)) {
  rdkafka::RdKafkaOptions options;
  options.bootstrap_servers = bootstrap_;
  transport_ = std::make_unique<rdkafka::RdKafkaTransport>(options, clock());
  admin_ = transport_->NewAdmin("test-admin");
  producer_ = transport_->NewProducer("test-producer");
  reader_ = std::make_unique<soak::KafkaReader>(*transport_, clock());
}

KafkaWorld::~KafkaWorld() = default;

Clock& KafkaWorld::clock() { return *SystemClock::Default(); }

absl::StatusOr<AppTopics> KafkaWorld::CreateApp(const std::string& base, int32_t partitions) {
  AppTopics app;
  app.app_id = UniqueName(base);
  app.input = app.app_id + "-input";
  app.changelog = ChangelogTopic(app.app_id, kCountsStoreName);
  app.partitions = partitions;
  for (const std::string& topic : {app.input, app.changelog}) {
    if (absl::Status s = admin_->CreateTopic(topic, partitions); !s.ok()) return s;
    // Metadata reaches every broker asynchronously: wait until the topic is visible.
    absl::StatusOr<int32_t> count = absl::NotFoundError(topic);
    for (int i = 0; i < kCreateAttemptsMax && !count.ok(); ++i) {
      count = admin_->PartitionCount(topic);
      if (!count.ok()) clock().SleepFor(100 * kMillisecond);
    }
    if (!count.ok()) return count.status();
  }
  return app;
}

absl::Status KafkaWorld::Produce(const TopicPartition& partition,
                                 const std::vector<TestRecord>& records) {
  const int64_t timestamp_ms = WallClockMs();
  for (const TestRecord& r : records) {
    if (absl::Status s = producer_->Send(partition, r.key, r.value, timestamp_ms); !s.ok()) {
      return s;
    }
  }
  return producer_->Flush(kFlushTimeoutNs).status();
}

absl::Status KafkaWorld::ProduceTransactions(const TopicPartition& partition,
                                             const std::vector<TestTransaction>& transactions) {
  std::unique_ptr<TransactionalProducer> producer = transport_->NewTransactionalProducer(
      {.client_id = "test-txn-producer", .transactional_id = UniqueName("test-txn")});
  absl::Status s = producer->InitTransactions(kFlushTimeoutNs);
  for (const TestTransaction& txn : transactions) {
    if (s.ok()) s = producer->BeginTransaction();
    for (const TestRecord& r : txn.records) {
      if (s.ok()) s = producer->Send(partition, r.key, r.value, WallClockMs());
    }
    if (s.ok()) s = producer->Flush(kFlushTimeoutNs).status();  // in the log before its end
    if (s.ok()) {
      s = txn.commit ? producer->CommitTransaction(kFlushTimeoutNs)
                     : producer->AbortTransaction(kFlushTimeoutNs);
    }
  }
  producer->Close();
  return s;
}

absl::StatusOr<std::vector<ConsumerRecord>> KafkaWorld::ReadAll(const TopicPartition& partition,
                                                                IsolationLevel isolation) {
  return reader_->ReadAll(partition, isolation);
}

absl::StatusOr<int64_t> KafkaWorld::EndOffset(const TopicPartition& partition) {
  absl::StatusOr<std::map<TopicPartition, int64_t>> end = reader_->EndOffsets({partition});
  if (!end.ok()) return end.status();
  return end->at(partition);
}

absl::StatusOr<int64_t> KafkaWorld::StableOffset(const TopicPartition& partition) {
  absl::StatusOr<std::map<TopicPartition, int64_t>> end =
      reader_->EndOffsets({partition}, IsolationLevel::kReadCommitted);
  if (!end.ok()) return end.status();
  return end->at(partition);
}

absl::StatusOr<std::map<TopicPartition, int64_t>> KafkaWorld::Committed(
    const std::string& group, const std::vector<TopicPartition>& partitions) {
  return reader_->Committed(group, partitions);
}

bool KafkaWorld::InputFullyCommitted(const AppTopics& app) {
  std::vector<TopicPartition> inputs;
  for (int32_t p = 0; p < app.partitions; ++p) inputs.push_back(app.Input(p));
  absl::StatusOr<std::map<TopicPartition, int64_t>> ends = admin_->EndOffsets(inputs);
  absl::StatusOr<std::map<TopicPartition, int64_t>> committed = Committed(app.app_id, inputs);
  if (!ends.ok() || !committed.ok()) return false;
  for (const TopicPartition& tp : inputs) {
    auto it = committed->find(tp);
    if (it == committed->end() || it->second != ends->at(tp)) return false;
  }
  return true;
}

std::string KafkaWorld::NewStateDir(const std::string& base) {
  const std::string dir = ::testing::TempDir() + "/restoresim-kafka/" + UniqueName(base);
  std::filesystem::create_directories(dir);
  return dir;
}

RuntimeConfig KafkaWorld::Config(const AppTopics& app, const std::string& state_dir) const {
  RuntimeConfig config;
  config.application_id = app.app_id;
  config.input_topic = app.input;
  config.state_dir = state_dir;
  config.commit_interval_ms = 200;
  config.poll_ms = 50;
  config.checkpoint_offset_delta_min = 0;  // small changelogs: checkpoint on any progress
  return config;
}

void KafkaWorld::ExpectCountsOfTheReference(const AppTopics& app, size_t initial,
                                            IsolationLevel isolation) {
  for (int32_t p = 0; p < app.partitions; ++p) {
    absl::StatusOr<std::vector<ConsumerRecord>> changelog = ReadAll(app.Changelog(p), isolation);
    absl::StatusOr<std::vector<ConsumerRecord>> input = ReadAll(app.Input(p), isolation);
    ASSERT_TRUE(changelog.ok() && input.ok());
    ASSERT_GE(changelog->size(), initial);
    const auto initial_end = changelog->begin() + static_cast<ptrdiff_t>(initial);
    const std::vector<ConsumerRecord> before(changelog->begin(), initial_end);
    EXPECT_EQ(FoldChangelog(*changelog), ReferenceCounts(*input, FoldChangelog(before)))
        << "partition " << p;
  }
}

absl::StatusOr<std::map<std::string, std::string>> KafkaWorld::ReadStore(
    const std::string& state_dir, const AppTopics& app, int32_t partition) {
  const std::string dir = fmt::format("{}/{}/0_{}/{}", state_dir, app.app_id, partition,
                                      kCountsStoreName);
  absl::StatusOr<std::unique_ptr<RocksDbStore>> store =
      RocksDbStore::Open(dir, std::string(kCountsStoreName));
  if (!store.ok()) return store.status();
  absl::StatusOr<std::map<std::string, std::string>> contents = (*store)->ReadAll();
  (void)(*store)->Close();
  return contents;
}

bool KafkaWorld::HasStore(const std::string& state_dir, const AppTopics& app, int32_t partition) {
  return std::filesystem::exists(fmt::format("{}/{}/0_{}/{}", state_dir, app.app_id, partition,
                                             kCountsStoreName));
}

absl::Status KafkaWorld::DeleteRecords(const TopicPartition& partition, int64_t before_offset) {
  return admin_->DeleteRecords({{partition, before_offset}});
}

std::vector<int32_t> KafkaWorld::ExpectStoresEqualChangelogs(const std::string& state_dir,
                                                             const AppTopics& app, bool at_end) {
  std::vector<int32_t> checked;
  for (int32_t p = 0; p < app.partitions; ++p) {
    if (!HasStore(state_dir, app, p)) continue;
    checked.push_back(p);
    ExpectStoreEqualsChangelog(state_dir, app, p, at_end);
  }
  return checked;
}

void KafkaWorld::ExpectStoreEqualsChangelog(const std::string& state_dir, const AppTopics& app,
                                            int32_t p, bool at_end) {
  const TopicPartition changelog = app.Changelog(p);
  const std::string path = fmt::format("{}/{}/0_{}/.checkpoint", state_dir, app.app_id, p);
  absl::StatusOr<CheckpointOffsets> checkpoint = ReadCheckpoint(*PosixFileSystem::Default(), path);
  ASSERT_TRUE(checkpoint.ok()) << "task 0_" << p << ": " << checkpoint.status();
  // No offset for the changelog: nothing restored into the store yet (a task closed before
  // its first restored batch), so the store must be empty.
  const int64_t offset = checkpoint->contains(changelog) ? checkpoint->at(changelog) : 0;
  absl::StatusOr<std::vector<ConsumerRecord>> log =
      ReadAll(changelog, IsolationLevel::kReadCommitted);
  ASSERT_TRUE(log.ok()) << log.status();
  const size_t committed = log->size();
  std::erase_if(*log, [&](const ConsumerRecord& r) { return r.offset >= offset; });
  absl::StatusOr<std::map<std::string, std::string>> store = ReadStore(state_dir, app, p);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(*store, FoldChangelog(*log))
      << "task 0_" << p << " in " << state_dir << " (checkpoint " << offset << ")";
  absl::StatusOr<int64_t> end = EndOffset(changelog);
  ASSERT_TRUE(end.ok()) << end.status();
  if (at_end) {
    // The end, or under exactly once short of it by markers (and aborted records) only: a
    // clean close checkpoints one past the last record written, and the commit marker after
    // it takes an offset (Kafka's checkpoint is the same).
    EXPECT_LE(offset, *end) << "task 0_" << p << ": checkpoint past the end";
    EXPECT_EQ(log->size(), committed)
        << "task 0_" << p << ": the last owner checkpoints the end (checkpoint " << offset
        << ", end " << *end << ")";
  }
}

absl::StatusOr<int32_t> KafkaWorld::Leader(const TopicPartition& partition) {
  return soak::KafkaReader::Leader(bootstrap_, partition);
}

bool GatedRestoreListener::WaitHeld(TimeNs timeout_ns) {
  return held_.WaitForNotificationWithTimeout(absl::Nanoseconds(timeout_ns));
}

void GatedRestoreListener::Release() {
  hold_.store(false);
  if (!released_.HasBeenNotified()) released_.Notify();
}

void GatedRestoreListener::OnRestoreStart(const TopicPartition&, std::string_view, int64_t,
                                          int64_t) {
  starts_.fetch_add(1);
}

void GatedRestoreListener::OnBatchRestored(const TopicPartition&, std::string_view, int64_t,
                                           int64_t records) {
  records_.fetch_add(records);
  if (!hold_.load() || held_.HasBeenNotified()) return;
  held_.Notify();
  released_.WaitForNotificationWithTimeout(absl::Nanoseconds(kHoldNsMax));
}

void GatedRestoreListener::OnRestoreEnd(const TopicPartition&, std::string_view, int64_t) {
  ends_.fetch_add(1);
}

void GatedRestoreListener::OnRestoreSuspended(const TopicPartition&, std::string_view, int64_t) {
  suspended_.fetch_add(1);
}

}  // namespace restoresim::kafka_test
