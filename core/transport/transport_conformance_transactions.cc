// The conformance suite, part 3: transactions (issue 21). Commit and abort markers taking
// offsets, the last stable offset, read_committed reads that skip aborted records, fencing by a
// new producer of the same transactional.id, offsets sent to a transaction, and the broker's
// transaction time-out. As the rest of the suite, it assumes only what Kafka guarantees: in
// particular a commit or abort returns once the coordinator decided, and Kafka writes the
// markers (and the group's offsets) shortly after, so the tests wait for end offsets and
// committed offsets to show them (WaitForEndOffset, WaitForCommitted); the fake writes them
// before the call returns.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/transport/transport_conformance.h"
#include "core/transport/transport_conformance_helpers.h"

namespace restoresim {
namespace {

using conformance::CreateTopic;
using conformance::MakeRecords;
using conformance::TestRecord;
using conformance::ValueOr;
using Offsets = std::map<TopicPartition, int64_t>;

constexpr TimeNs kTxnCallTimeoutNs = 30 * kSecond;

ConsumerConfig ReaderConfig(const std::string& client_id, IsolationLevel isolation) {
  ConsumerConfig config;
  config.client_id = client_id;
  config.auto_offset_reset = OffsetReset::kNone;
  config.isolation_level = isolation;
  return config;
}

std::unique_ptr<TransactionalProducer> NewInitialised(
    TransportTestEnv& env, const std::string& transactional_id,
    TimeNs transaction_timeout_ns = 60 * kSecond) {
  TransactionalProducerConfig config;
  config.client_id = "conformance-" + transactional_id;
  config.transactional_id = transactional_id;
  config.transaction_timeout_ns = transaction_timeout_ns;
  std::unique_ptr<TransactionalProducer> producer =
      env.transport().NewTransactionalProducer(config);
  absl::Status init = RetryUntilOk(env.clock(), [&]() {
    return producer->InitTransactions(kTxnCallTimeoutNs);
  });
  EXPECT_TRUE(init.ok()) << env.Describe() << ": init transactions: " << init;
  return producer;
}

// Begins a transaction and sends `records` to `tp` in it (flushed when `flush`).
bool SendInTransaction(TransportTestEnv& env, TransactionalProducer& producer,
                       const TopicPartition& tp, const std::vector<TestRecord>& records,
                       bool flush) {
  if (absl::Status s = producer.BeginTransaction(); !s.ok()) {
    ADD_FAILURE() << env.Describe() << ": begin: " << s;
    return false;
  }
  for (const TestRecord& r : records) {
    if (absl::Status s = producer.Send(tp, r.key, r.value, r.timestamp_ms); !s.ok()) {
      ADD_FAILURE() << env.Describe() << ": send: " << s;
      return false;
    }
  }
  if (!flush) return true;
  absl::StatusOr<Offsets> flushed =
      RetryUntilOk(env.clock(), [&]() { return producer.Flush(kTxnCallTimeoutNs); });
  EXPECT_TRUE(flushed.ok()) << env.Describe() << ": flush: " << flushed.status();
  return flushed.ok();
}

absl::Status Commit(TransportTestEnv& env, TransactionalProducer& producer) {
  return RetryUntilOk(env.clock(), [&]() { return producer.CommitTransaction(kTxnCallTimeoutNs); });
}

absl::Status Abort(TransportTestEnv& env, TransactionalProducer& producer) {
  return RetryUntilOk(env.clock(), [&]() { return producer.AbortTransaction(kTxnCallTimeoutNs); });
}

int64_t EndOffset(TransportTestEnv& env, Admin& admin, const TopicPartition& tp,
                  IsolationLevel isolation) {
  absl::StatusOr<Offsets> end =
      RetryUntilOk(env.clock(), [&]() { return admin.EndOffsetsFor({tp}, isolation); });
  EXPECT_TRUE(end.ok()) << env.Describe() << ": end offsets: " << end.status();
  return end.ok() && end->contains(tp) ? end->at(tp) : -1;
}

// Polls the end offset until it is `want` (markers are written after a commit or abort
// returns) or the env's poll budget is spent; returns the last one seen.
int64_t WaitForEndOffset(TransportTestEnv& env, Admin& admin, const TopicPartition& tp,
                         IsolationLevel isolation, int64_t want) {
  int64_t end = EndOffset(env, admin, tp, isolation);
  for (int wait = 0; wait < env.poll_attempts_max() && end != want && end >= 0; ++wait) {
    env.clock().SleepFor(env.poll_timeout_ns() / 4);
    end = EndOffset(env, admin, tp, isolation);
  }
  return end;
}

// What a consumer of one partition read: records and the position it got to.
struct Read {
  std::vector<ConsumerRecord> records;
  int64_t position = -1;
  std::vector<int64_t> offsets() const {
    std::vector<int64_t> out;
    for (const ConsumerRecord& r : records) out.push_back(r.offset);
    return out;
  }
};

// Reads `tp` from `from` until the position reaches `position_at_least` (markers count: the
// position passes them) or the env's poll budget is spent. Offsets must only go up.
Read ReadUntilPosition(TransportTestEnv& env, RestoreConsumer& consumer, const TopicPartition& tp,
                       int64_t from, int64_t position_at_least) {
  Read read;
  EXPECT_TRUE(consumer.Assign({tp}).ok());
  EXPECT_TRUE(consumer.Seek(tp, from).ok());
  for (int poll = 0; poll < env.poll_attempts_max(); ++poll) {
    read.position = ValueOr(RetryUntilOk(env.clock(), [&]() { return consumer.Position(tp); }));
    if (read.position >= position_at_least) break;
    absl::StatusOr<PollResult> result = consumer.Poll(env.poll_timeout_ns());
    if (!result.ok() && IsRetryable(result.status())) continue;
    if (!result.ok()) {
      ADD_FAILURE() << env.Describe() << ": poll: " << result.status();
      break;
    }
    for (PartitionRecords& batch : result->partitions) {
      for (ConsumerRecord& r : batch.records) {
        if (!read.records.empty()) {
          EXPECT_GT(r.offset, read.records.back().offset) << env.Describe() << ": ascending";
        }
        read.records.push_back(std::move(r));
      }
    }
  }
  return read;
}

std::vector<std::string> KeysOf(const std::vector<ConsumerRecord>& records) {
  std::vector<std::string> keys;
  for (const ConsumerRecord& r : records) keys.push_back(r.key);
  return keys;
}

std::vector<std::string> KeysOf(const std::vector<TestRecord>& records) {
  std::vector<std::string> keys;
  for (const TestRecord& r : records) keys.push_back(r.key);
  return keys;
}

TEST_P(TransportConformanceTest, CommittedTransactionEndsWithAMarkerThatTakesAnOffset) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("txn-commit");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 1));
    const TopicPartition tp{topic, 0};
    auto producer = NewInitialised(env(), env().UniqueGroup("txn-commit"));
    const std::vector<TestRecord> sent = MakeRecords("tc", 5, /*tombstone_every=*/3);
    ASSERT_TRUE(SendInTransaction(env(), *producer, tp, sent, /*flush=*/false));
    ASSERT_TRUE(Commit(env(), *producer).ok());
    EXPECT_EQ(WaitForEndOffset(env(), *admin, tp, IsolationLevel::kReadUncommitted, 6), 6)
        << "five records and the commit marker";
    EXPECT_EQ(WaitForEndOffset(env(), *admin, tp, IsolationLevel::kReadCommitted, 6), 6);
    auto reader = env().transport().NewRestoreConsumer(
        ReaderConfig("tc-committed", IsolationLevel::kReadCommitted));
    Read read = ReadUntilPosition(env(), *reader, tp, 0, 6);
    EXPECT_EQ(read.offsets(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(KeysOf(read.records), KeysOf(sent));
    ASSERT_EQ(read.records.size(), sent.size());
    EXPECT_EQ(read.records[2].value, std::nullopt) << "a tombstone in a transaction";
    EXPECT_EQ(read.position, 6) << "read_committed's position passes the commit marker";
  });
}

TEST_P(TransportConformanceTest, ReadCommittedSkipsAbortedRecordsReadUncommittedDoesNot) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("txn-abort");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 1));
    const TopicPartition tp{topic, 0};
    auto producer = NewInitialised(env(), env().UniqueGroup("txn-abort"));
    ASSERT_TRUE(SendInTransaction(env(), *producer, tp, MakeRecords("aborted", 3), true));
    ASSERT_TRUE(Abort(env(), *producer).ok());  // offsets 0-2, abort marker 3
    const std::vector<TestRecord> kept = MakeRecords("kept", 2);
    ASSERT_TRUE(SendInTransaction(env(), *producer, tp, kept, false));
    ASSERT_TRUE(Commit(env(), *producer).ok());  // offsets 4-5, commit marker 6
    EXPECT_EQ(WaitForEndOffset(env(), *admin, tp, IsolationLevel::kReadUncommitted, 7), 7);
    EXPECT_EQ(WaitForEndOffset(env(), *admin, tp, IsolationLevel::kReadCommitted, 7), 7);

    auto committed = env().transport().NewRestoreConsumer(
        ReaderConfig("ta-committed", IsolationLevel::kReadCommitted));
    Read read = ReadUntilPosition(env(), *committed, tp, 0, 7);
    EXPECT_EQ(read.offsets(), (std::vector<int64_t>{4, 5}));
    EXPECT_EQ(KeysOf(read.records), KeysOf(kept));
    EXPECT_EQ(read.position, 7);
    auto uncommitted = env().transport().NewRestoreConsumer(
        ReaderConfig("ta-uncommitted", IsolationLevel::kReadUncommitted));
    read = ReadUntilPosition(env(), *uncommitted, tp, 0, 7);
    EXPECT_EQ(read.offsets(), (std::vector<int64_t>{0, 1, 2, 4, 5}))
        << "aborted records are returned, markers never";
    EXPECT_EQ(read.position, 7);
  });
}

TEST_P(TransportConformanceTest, AnOpenTransactionHoldsTheLastStableOffset) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("txn-lso");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 1));
    const TopicPartition tp{topic, 0};
    auto plain = env().transport().NewProducer("conformance-producer");
    conformance::Produce(env(), *plain, tp, MakeRecords("plain", 2));  // offsets 0-1
    auto producer = NewInitialised(env(), env().UniqueGroup("txn-lso"));
    ASSERT_TRUE(SendInTransaction(env(), *producer, tp, MakeRecords("open", 3), true));
    EXPECT_EQ(EndOffset(env(), *admin, tp, IsolationLevel::kReadUncommitted), 5);
    EXPECT_EQ(EndOffset(env(), *admin, tp, IsolationLevel::kReadCommitted), 2)
        << "the LSO is the open transaction's first offset";
    auto committed = env().transport().NewRestoreConsumer(
        ReaderConfig("tl-committed", IsolationLevel::kReadCommitted));
    ASSERT_TRUE(committed->Assign({tp}).ok());
    ASSERT_TRUE(committed->SeekToEnd({tp}).ok());
    EXPECT_EQ(ValueOr(RetryUntilOk(env().clock(), [&]() { return committed->Position(tp); })), 2)
        << "read_committed's end is the LSO";
    Read read = ReadUntilPosition(env(), *committed, tp, 0, 2);
    EXPECT_EQ(read.offsets(), (std::vector<int64_t>{0, 1}));
    for (int i = 0; i < 3; ++i) {  // nothing past the LSO while the transaction is open
      absl::StatusOr<PollResult> more = committed->Poll(env().poll_timeout_ns());
      if (more.ok()) EXPECT_EQ(more->RecordCount(), 0u) << env().Describe();
    }
    ASSERT_TRUE(Commit(env(), *producer).ok());
    EXPECT_EQ(WaitForEndOffset(env(), *admin, tp, IsolationLevel::kReadCommitted, 6), 6);
    read = ReadUntilPosition(env(), *committed, tp, 2, 6);
    EXPECT_EQ(read.offsets(), (std::vector<int64_t>{2, 3, 4}));
  });
}

TEST_P(TransportConformanceTest, ANewProducerOfTheTransactionalIdFencesTheOldOne) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("txn-fence");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 1));
    const TopicPartition tp{topic, 0};
    const std::string id = env().UniqueGroup("txn-fence");
    auto zombie = NewInitialised(env(), id);
    ASSERT_TRUE(SendInTransaction(env(), *zombie, tp, MakeRecords("zombie", 2), true));
    auto successor = NewInitialised(env(), id);  // aborts the zombie's open transaction
    absl::Status zombie_commit = Commit(env(), *zombie);
    EXPECT_EQ(zombie_commit.code(), absl::StatusCode::kAborted)
        << env().Describe() << ": a fenced producer's commit: " << zombie_commit;
    const std::vector<TestRecord> kept = MakeRecords("successor", 2);
    ASSERT_TRUE(SendInTransaction(env(), *successor, tp, kept, false));
    ASSERT_TRUE(Commit(env(), *successor).ok());
    const int64_t end = WaitForEndOffset(env(), *admin, tp, IsolationLevel::kReadCommitted, 6);
    EXPECT_EQ(end, 6) << "2 zombie records, its abort marker, 2 records, a commit marker";
    auto committed = env().transport().NewRestoreConsumer(
        ReaderConfig("tf-committed", IsolationLevel::kReadCommitted));
    Read read = ReadUntilPosition(env(), *committed, tp, 0, end);
    EXPECT_EQ(KeysOf(read.records), KeysOf(kept)) << "nothing of the zombie is committed";
  });
}

TEST_P(TransportConformanceTest, OffsetsSentToATransactionReachTheGroupOnCommitOnly) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("txn-offsets");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 1));
    const TopicPartition tp{topic, 0};
    const std::string group = env().UniqueGroup("txn-offsets");
    ConsumerConfig config = ReaderConfig("to-main", IsolationLevel::kReadCommitted);
    config.auto_offset_reset = OffsetReset::kEarliest;
    auto consumer = env().transport().NewMainConsumer(group, config);
    conformance::RecordingListener listener;
    ASSERT_TRUE(consumer->Subscribe({topic}, &listener).ok());
    for (int poll = 0; poll < env().poll_attempts_max() && consumer->Assignment().empty();
         ++poll) {
      (void)consumer->Poll(env().poll_timeout_ns());
    }
    ASSERT_EQ(consumer->Assignment(), std::vector<TopicPartition>{tp}) << listener.ToString();
    const ConsumerGroupMetadata metadata = consumer->GroupMetadata();
    EXPECT_EQ(metadata.group_id, group);
    // -1: the backend does not say (librdkafka 2.0.2 carries it in `opaque` only).
    EXPECT_TRUE(metadata.generation_id >= 1 || metadata.generation_id == -1)
        << "the member joined a generation: " << metadata.generation_id;
    EXPECT_FALSE(metadata.member_id.empty());

    auto producer = NewInitialised(env(), env().UniqueGroup("txn-offsets-producer"));
    auto committed = [&]() {
      return RetryUntilOk(env().clock(), [&]() { return admin->CommittedOffsets(group, {tp}); });
    };
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->Send(tp, "k", "v", 0).ok());
    ASSERT_TRUE(RetryUntilOk(env().clock(), [&]() {
                  return producer->SendOffsetsToTransaction({{tp, 1}}, metadata);
                }).ok());
    ASSERT_TRUE(Abort(env(), *producer).ok());
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->Send(tp, "k", "v", 0).ok());
    absl::Status sent = RetryUntilOk(env().clock(), [&]() {
      return producer->SendOffsetsToTransaction({{tp, 3}}, metadata);
    });
    ASSERT_TRUE(sent.ok()) << sent;
    absl::StatusOr<Offsets> before = committed();
    ASSERT_TRUE(before.ok()) << before.status();
    EXPECT_TRUE(before->empty()) << "an aborted or open transaction's offsets are not committed";
    ASSERT_TRUE(Commit(env(), *producer).ok());
    absl::StatusOr<Offsets> after = committed();
    for (int wait = 0; wait < env().poll_attempts_max() && after.ok() && after->empty(); ++wait) {
      env().clock().SleepFor(env().poll_timeout_ns() / 4);  // Kafka applies them after commit
      after = committed();
    }
    ASSERT_TRUE(after.ok()) << after.status();
    EXPECT_EQ(*after, (Offsets{{tp, 3}}));
    consumer->Close();
  });
}

TEST_P(TransportConformanceTest, ATransactionOpenPastItsTimeoutIsAbortedByTheBroker) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("txn-timeout");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 1));
    const TopicPartition tp{topic, 0};
    constexpr TimeNs kTimeoutNs = 2 * kSecond;
    auto producer = NewInitialised(env(), env().UniqueGroup("txn-timeout"), kTimeoutNs);
    ASSERT_TRUE(SendInTransaction(env(), *producer, tp, MakeRecords("late", 2), true));
    EXPECT_EQ(EndOffset(env(), *admin, tp, IsolationLevel::kReadCommitted), 0);
    // The broker aborts it (Kafka checks every
    // transaction.abort.timed.out.transaction.cleanup.interval.ms): the LSO moves past the
    // abort marker.
    int64_t lso = 0;
    for (int wait = 0; wait < env().poll_attempts_max() && lso < 3; ++wait) {
      env().clock().SleepFor(env().poll_timeout_ns());
      lso = EndOffset(env(), *admin, tp, IsolationLevel::kReadCommitted);
    }
    EXPECT_EQ(lso, 3) << "two records and the abort marker";
    absl::Status commit = Commit(env(), *producer);
    // Kafka fences the producer (the coordinator bumped the epoch: kAborted); librdkafka may
    // first fail the transaction locally as timed out (abortable: kCancelled). Never OK.
    EXPECT_TRUE(commit.code() == absl::StatusCode::kAborted ||
                commit.code() == absl::StatusCode::kCancelled)
        << env().Describe() << ": commit after the time-out: " << commit;
    auto committed = env().transport().NewRestoreConsumer(
        ReaderConfig("tt-committed", IsolationLevel::kReadCommitted));
    Read read = ReadUntilPosition(env(), *committed, tp, 0, 3);
    EXPECT_TRUE(read.records.empty()) << "a timed-out transaction never commits";
    EXPECT_EQ(read.position, 3);
  });
}

}  // namespace
}  // namespace restoresim
