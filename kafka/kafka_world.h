// KafkaWorld: what an integration test of the runtime against a real cluster works with — the
// librdkafka transport, the system clock, POSIX files and RocksDB stores, and helpers to create
// an application's topics, write and read them, and read a task's store back from disk after
// the runtime closed. Also a restore listener that counts and can hold restoration at its
// first batch, so a test can break the cluster mid-restoration at a known point.
//
// Thread-safety: KafkaWorld is used by the test's thread; GatedRestoreListener by restore
// threads and the test's thread.
#ifndef RESTORESIM_KAFKA_KAFKA_WORLD_H_
#define RESTORESIM_KAFKA_KAFKA_WORLD_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "core/runtime/restore_listener.h"
#include "core/runtime/runtime_config.h"
#include "core/runtime/state_manager.h"
#include "core/sync/clock.h"
#include "core/transport/rdkafka/rdkafka_transport.h"

namespace restoresim::soak {
class KafkaReader;
}  // namespace restoresim::soak

namespace restoresim::kafka_test {

struct AppTopics {
  std::string app_id;
  std::string input;
  std::string changelog;  // ChangelogTopic(app_id, "counts")
  int32_t partitions = 0;
  TopicPartition Input(int32_t p) const { return {input, p}; }
  TopicPartition Changelog(int32_t p) const { return {changelog, p}; }
};

struct TestRecord {
  std::string key;
  std::optional<std::string> value;  // nullopt: a tombstone
};

// `n` changelog records of `keys` keys "<prefix>k<i % keys>" with count values, every tenth a
// tombstone.
std::vector<TestRecord> ChangelogRecords(const std::string& prefix, int n, int keys);
// One transaction of a transactional writer: its records, committed or aborted.
struct TestTransaction {
  std::vector<TestRecord> records;
  bool commit = true;
};

// `n` input records adding 1 to keys "k<i % keys>".
std::vector<TestRecord> InputRecords(int n, int keys);

// Waits (polling every 20 ms) until `done` or timeout_ns; returns done().
bool WaitUntil(Clock& clock, TimeNs timeout_ns, const std::function<bool()>& done);

StoreOpener RocksDbOpener();

class KafkaWorld {
 public:
  // Connects to the cluster whose address is in `env_var` (a test failure says how to start
  // one when it is not set).
  static absl::StatusOr<std::unique_ptr<KafkaWorld>> Connect(const char* env_var);
  ~KafkaWorld();

  Transport& transport() { return *transport_; }
  Clock& clock();
  const std::string& bootstrap() const { return bootstrap_; }

  // Creates "<base>-..." input and changelog topics of `partitions` partitions.
  absl::StatusOr<AppTopics> CreateApp(const std::string& base, int32_t partitions);
  absl::Status Produce(const TopicPartition& partition, const std::vector<TestRecord>& records);
  // Writes `transactions` in order with a transactional producer of its own (a fresh
  // transactional.id), each committed or aborted: the log then holds the aborted records and
  // a marker after each transaction.
  absl::Status ProduceTransactions(const TopicPartition& partition,
                                   const std::vector<TestTransaction>& transactions);
  absl::Status DeleteRecords(const TopicPartition& partition, int64_t before_offset);
  // Every record from the log start to the end offset, as a consumer of `isolation` reads them
  // (read_committed: aborted records left out; it waits for every transaction to end). This
  // and the other reads retry retryable errors for up to a minute.
  absl::StatusOr<std::vector<ConsumerRecord>> ReadAll(
      const TopicPartition& partition,
      IsolationLevel isolation = IsolationLevel::kReadUncommitted);
  absl::StatusOr<int64_t> EndOffset(const TopicPartition& partition);
  // The last stable offset (the first offset of the earliest open transaction, else the end).
  absl::StatusOr<int64_t> StableOffset(const TopicPartition& partition);
  absl::StatusOr<std::map<TopicPartition, int64_t>> Committed(
      const std::string& group, const std::vector<TopicPartition>& partitions);
  // Whether the group committed every input partition up to its end offset.
  bool InputFullyCommitted(const AppTopics& app);

  // A fresh state directory under the test's temp dir.
  std::string NewStateDir(const std::string& base);
  RuntimeConfig Config(const AppTopics& app, const std::string& state_dir) const;
  // The counts store of task 0_<partition> as the runtime left it on disk (after Close).
  absl::StatusOr<std::map<std::string, std::string>> ReadStore(const std::string& state_dir,
                                                               const AppTopics& app,
                                                               int32_t partition);
  // Whether that task has a store directory in `state_dir`.
  bool HasStore(const std::string& state_dir, const AppTopics& app, int32_t partition);
  // Checks every task store in `state_dir` (after Close) against its changelog: the store
  // must equal the fold of the changelog's committed records (read_committed: no aborted
  // record) below the task's checkpoint, and with
  // `at_end` no committed record may lie past the checkpoint (the last owner closed cleanly:
  // it checkpointed the end, or under exactly once the offset of the commit marker after its
  // last record).
  // Records test failures; returns the partitions checked.
  std::vector<int32_t> ExpectStoresEqualChangelogs(const std::string& state_dir,
                                                   const AppTopics& app, bool at_end = true);

  // Records test failures unless each partition's counts (its changelog folded) equal its first
  // `initial` changelog records folded, then every input record processed once; the logs read
  // as a consumer of `isolation` reads them (read_committed under exactly once).
  void ExpectCountsOfTheReference(const AppTopics& app, size_t initial,
                                  IsolationLevel isolation = IsolationLevel::kReadUncommitted);

  // The node id leading `partition` (librdkafka metadata).
  absl::StatusOr<int32_t> Leader(const TopicPartition& partition);

 private:
  explicit KafkaWorld(std::string bootstrap);
  void ExpectStoreEqualsChangelog(const std::string& state_dir, const AppTopics& app,
                                  int32_t partition, bool at_end);

  const std::string bootstrap_;
  std::unique_ptr<rdkafka::RdKafkaTransport> transport_;
  std::unique_ptr<Admin> admin_;
  std::unique_ptr<Producer> producer_;
  std::unique_ptr<soak::KafkaReader> reader_;  // the soak's reads (retries, leaders)
};

// Counts restoration, and with Hold() blocks the restore thread at its next batch until
// Release() (or hold_ns_max passed), so a test can act while a restoration is under way.
class GatedRestoreListener final : public StateRestoreListener {
 public:
  static constexpr TimeNs kHoldNsMax = 60 * kSecond;

  void Hold() { hold_.store(true); }
  // Waits until a restore thread is held at a batch (true) or timeout_ns passed.
  bool WaitHeld(TimeNs timeout_ns);
  void Release();

  void OnRestoreStart(const TopicPartition&, std::string_view, int64_t, int64_t) override;
  void OnBatchRestored(const TopicPartition&, std::string_view, int64_t, int64_t records) override;
  void OnRestoreEnd(const TopicPartition&, std::string_view, int64_t) override;
  void OnRestoreSuspended(const TopicPartition&, std::string_view, int64_t) override;

  int64_t records() const { return records_.load(); }
  int64_t starts() const { return starts_.load(); }
  int64_t ends() const { return ends_.load(); }
  int64_t suspended() const { return suspended_.load(); }

 private:
  std::atomic<bool> hold_{false};
  absl::Notification held_;
  absl::Notification released_;
  std::atomic<int64_t> records_{0};
  std::atomic<int64_t> starts_{0};
  std::atomic<int64_t> ends_{0};
  std::atomic<int64_t> suspended_{0};
};

}  // namespace restoresim::kafka_test

#endif  // RESTORESIM_KAFKA_KAFKA_WORLD_H_
