// The fake broker's transactions: markers taking offsets, the last stable offset, read_committed
// fetches skipping aborted records, producer-epoch fencing, the broker's transaction time-out,
// transactional offsets visible on commit only, the abortable state, and the log's
// transaction index on its own.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/runtime/suspendable_transport.h"
#include "fakes/fake_broker.h"
#include "fakes/fake_broker_test_util.h"
#include "fakes/fake_log.h"
#include "core/port/file_system.h"
#include "core/port/random.h"
#include "sim/sim_test_util.h"
#include "sim/virtual_clock.h"

namespace restoresim::fakes {
namespace {

using sim::RunUnderSim;
using sim::TestRun;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr TimeNs kTimeoutNs = 10 * kSecond;

std::vector<int64_t> OffsetsOf(const std::vector<ConsumerRecord>& records) {
  std::vector<int64_t> out;
  for (const ConsumerRecord& r : records) out.push_back(r.offset);
  return out;
}

TEST(PartitionLogTransactionsTest, MarkersTakeOffsetsAndAbortedRecordsAreSkippedWhenAsked) {
  PartitionLog log;
  ASSERT_TRUE(log.Append("plain", "v", 0).ok());                         // 0
  ASSERT_TRUE(log.AppendTransactional(7, "a0", "v", 0).ok());            // 1
  ASSERT_TRUE(log.AppendTransactional(8, "b0", "v", 0).ok());            // 2
  ASSERT_TRUE(log.AppendTransactional(7, "a1", "v", 0).ok());            // 3
  EXPECT_EQ(log.last_stable_offset(), 1) << "the earliest open transaction starts at 1";
  EXPECT_EQ(log.WriteMarker(7, /*commit=*/false, 0), 4);                 // abort marker
  EXPECT_EQ(log.last_stable_offset(), 2) << "producer 8's transaction is still open";
  EXPECT_EQ(log.WriteMarker(8, /*commit=*/true, 0), 5);                  // commit marker
  EXPECT_EQ(log.last_stable_offset(), 6);
  EXPECT_EQ(log.end_offset(), 6);
  EXPECT_EQ(log.markers_written(), 2);

  PartitionLog::Fetched committed = log.Fetch(0, 6, 100, /*skip_aborted=*/true);
  EXPECT_THAT(OffsetsOf(committed.records), ElementsAre(0, 2));
  EXPECT_EQ(committed.next_offset, 6) << "the position passes the markers";
  PartitionLog::Fetched uncommitted = log.Fetch(0, 6, 100, /*skip_aborted=*/false);
  EXPECT_THAT(OffsetsOf(uncommitted.records), ElementsAre(0, 1, 2, 3));
  PartitionLog::Fetched limited = log.Fetch(0, 6, 2, /*skip_aborted=*/true);
  EXPECT_THAT(OffsetsOf(limited.records), ElementsAre(0, 2));
  EXPECT_EQ(limited.next_offset, 3) << "stops right after the last record it returns";
  PartitionLog::Fetched tail = log.Fetch(3, 6, 100, /*skip_aborted=*/true);
  EXPECT_TRUE(tail.records.empty());
  EXPECT_EQ(tail.next_offset, 6) << "a tail of aborted data and markers is read over";
}

TEST(PartitionLogTransactionsTest, DeleteRecordsDropsTheSpansBelowTheLogStart) {
  PartitionLog log;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(log.AppendTransactional(1, "k", "v", 0).ok());
  log.WriteMarker(1, false, 0);  // 3
  ASSERT_TRUE(log.Append("k", "v", 0).ok());  // 4
  ASSERT_TRUE(log.DeleteRecordsBefore(2).ok());
  EXPECT_THAT(OffsetsOf(log.Fetch(2, 5, 10, true).records), ElementsAre(4));
  ASSERT_TRUE(log.DeleteRecordsBefore(4).ok());
  EXPECT_THAT(OffsetsOf(log.Fetch(4, 5, 10, true).records), ElementsAre(4));
}

// One simulated run over a broker with one topic "t" of one partition.
template <typename Body>
void WithBroker(Body body, BrokerOptions options = {}) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    FakeBroker broker(clock, nullptr, {}, options);
    ASSERT_TRUE(broker.CreateTopic("t", 1).ok());
    body(broker, clock);
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

std::unique_ptr<TransactionalProducer> NewInitialised(FakeBroker& broker, const std::string& id,
                                                      TimeNs timeout_ns = kTimeoutNs) {
  TransactionalProducerConfig config;
  config.client_id = "client-" + id;
  config.transactional_id = id;
  config.transaction_timeout_ns = timeout_ns;
  auto producer = broker.NewTransactionalProducer(config);
  EXPECT_TRUE(producer->InitTransactions(kSecond).ok());
  return producer;
}

ConsumerConfig Config(IsolationLevel isolation) {
  ConsumerConfig config;
  config.client_id = "reader";
  config.isolation_level = isolation;
  config.auto_offset_reset = OffsetReset::kEarliest;
  return config;
}

std::vector<ConsumerRecord> PollAll(RestoreConsumer& consumer) {
  std::vector<ConsumerRecord> out;
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<PollResult> result = consumer.Poll(0);
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) break;
    for (const PartitionRecords& p : result->partitions) {
      out.insert(out.end(), p.records.begin(), p.records.end());
    }
  }
  return out;
}

TEST(FakeTransactionsTest, ReadCommittedStopsAtTheLsoAndSkipsAbortedRecords) {
  WithBroker([](FakeBroker& broker, sim::VirtualClock&) {
    const TopicPartition tp{"t", 0};
    auto producer = NewInitialised(broker, "app-0");
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->Send(tp, "a", "1", 0).ok());
    ASSERT_TRUE(producer->Send(tp, "b", "2", 0).ok());
    ASSERT_TRUE(producer->Flush(kSecond).ok());
    EXPECT_EQ(*broker.EndOffset(tp), 2);
    EXPECT_EQ(*broker.LastStableOffset(tp), 0) << "the open transaction holds the LSO";
    auto committed = broker.NewRestoreConsumer(Config(IsolationLevel::kReadCommitted));
    auto uncommitted = broker.NewRestoreConsumer(Config(IsolationLevel::kReadUncommitted));
    for (auto* c : {committed.get(), uncommitted.get()}) {
      ASSERT_TRUE(c->Assign({tp}).ok());
      ASSERT_TRUE(c->Seek(tp, 0).ok());
    }
    EXPECT_TRUE(PollAll(*committed).empty()) << "nothing stable yet";
    EXPECT_EQ(*committed->Position(tp), 0);
    EXPECT_THAT(OffsetsOf(PollAll(*uncommitted)), ElementsAre(0, 1));
    ASSERT_TRUE(producer->AbortTransaction(kSecond).ok());  // marker at 2
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->Send(tp, "c", "3", 0).ok());
    ASSERT_TRUE(producer->CommitTransaction(kSecond).ok());  // 3, marker at 4
    EXPECT_EQ(*broker.EndOffset(tp), 5);
    EXPECT_EQ(*broker.LastStableOffset(tp), 5);
    std::vector<ConsumerRecord> got = PollAll(*committed);
    EXPECT_THAT(OffsetsOf(got), ElementsAre(3));
    EXPECT_EQ(got.at(0).key, "c");
    EXPECT_EQ(*committed->Position(tp), 5) << "the position passes the commit marker";
    EXPECT_THAT(OffsetsOf(PollAll(*uncommitted)), ElementsAre(3)) << "aborted data was read";
    EXPECT_EQ(*uncommitted->Position(tp), 5);
    EXPECT_THAT(OffsetsOf(*broker.ReadLog(tp, 0, 10)), ElementsAre(0, 1, 3))
        << "ReadLog leaves out control records";
    EXPECT_THAT(OffsetsOf(broker.PeekLog(tp)), ElementsAre(0, 1, 3));
    EXPECT_THAT(OffsetsOf(broker.PeekLog(tp, IsolationLevel::kReadCommitted)), ElementsAre(3));
  });
}

TEST(FakeTransactionsTest, AdminEndOffsetsPerIsolationLevelAndSeekToEnd) {
  WithBroker([](FakeBroker& broker, sim::VirtualClock&) {
    const TopicPartition tp{"t", 0};
    ASSERT_TRUE(broker.Append(tp, "plain", "v", 0).ok());
    auto producer = NewInitialised(broker, "app-0");
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->Send(tp, "a", "1", 0).ok());
    ASSERT_TRUE(producer->Flush(kSecond).ok());
    auto admin = broker.NewAdmin("admin");
    using Offsets = std::map<TopicPartition, int64_t>;
    EXPECT_EQ(*admin->EndOffsets({tp}), (Offsets{{tp, 2}}));
    EXPECT_EQ(*admin->EndOffsetsFor({tp}, IsolationLevel::kReadUncommitted), (Offsets{{tp, 2}}));
    EXPECT_EQ(*admin->EndOffsetsFor({tp}, IsolationLevel::kReadCommitted), (Offsets{{tp, 1}}));
    auto committed = broker.NewRestoreConsumer(Config(IsolationLevel::kReadCommitted));
    ASSERT_TRUE(committed->Assign({tp}).ok());
    ASSERT_TRUE(committed->SeekToEnd({tp}).ok());
    EXPECT_EQ(*committed->Position(tp), 1) << "read_committed's end is the LSO";
    ASSERT_TRUE(producer->CommitTransaction(kSecond).ok());
    EXPECT_EQ(*admin->EndOffsetsFor({tp}, IsolationLevel::kReadCommitted), (Offsets{{tp, 3}}));
  });
}

TEST(FakeTransactionsTest, ANewEpochFencesTheOldProducerAndAbortsItsTransaction) {
  WithBroker([](FakeBroker& broker, sim::VirtualClock&) {
    const TopicPartition tp{"t", 0};
    auto zombie = NewInitialised(broker, "app-0");
    const int64_t pid = broker.Transaction("app-0")->producer_id;
    EXPECT_EQ(broker.Transaction("app-0")->epoch, 0);
    ASSERT_TRUE(zombie->BeginTransaction().ok());
    ASSERT_TRUE(zombie->Send(tp, "z", "1", 0).ok());
    ASSERT_TRUE(zombie->Flush(kSecond).ok());
    EXPECT_TRUE(broker.Transaction("app-0")->ongoing);

    auto successor = NewInitialised(broker, "app-0");
    EXPECT_EQ(broker.Transaction("app-0")->producer_id, pid) << "the id keeps its producer id";
    EXPECT_EQ(broker.Transaction("app-0")->epoch, 1);
    EXPECT_FALSE(broker.Transaction("app-0")->ongoing) << "the zombie's transaction is aborted";
    EXPECT_EQ(*broker.LastStableOffset(tp), 2) << "record 0, abort marker 1";

    ASSERT_TRUE(zombie->Send(tp, "z", "2", 0).ok()) << "a send only queues";
    absl::StatusOr<std::map<TopicPartition, int64_t>> flushed = zombie->Flush(kSecond);
    EXPECT_EQ(flushed.status().code(), absl::StatusCode::kAborted);
    EXPECT_THAT(flushed.status().message(), HasSubstr("producer fenced"));
    EXPECT_EQ(zombie->CommitTransaction(kSecond).code(), absl::StatusCode::kAborted)
        << "fatal: every later call fails";
    EXPECT_EQ(*broker.EndOffset(tp), 2) << "nothing of the zombie's landed after the fence";

    ASSERT_TRUE(successor->BeginTransaction().ok());
    ASSERT_TRUE(successor->Send(tp, "s", "1", 0).ok());
    ASSERT_TRUE(successor->CommitTransaction(kSecond).ok());
    auto committed = broker.NewRestoreConsumer(Config(IsolationLevel::kReadCommitted));
    ASSERT_TRUE(committed->Assign({tp}).ok());
    ASSERT_TRUE(committed->Seek(tp, 0).ok());
    std::vector<ConsumerRecord> got = PollAll(*committed);
    ASSERT_THAT(OffsetsOf(got), ElementsAre(2));
    EXPECT_EQ(got[0].key, "s");
  });
}

TEST(FakeTransactionsTest, TheBrokerAbortsATransactionOpenPastItsTimeoutAndFencesItsProducer) {
  WithBroker([](FakeBroker& broker, sim::VirtualClock& clock) {
    const TopicPartition tp{"t", 0};
    auto producer = NewInitialised(broker, "app-0", kTimeoutNs);
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->Send(tp, "a", "1", 0).ok());
    ASSERT_TRUE(producer->Flush(kSecond).ok());
    clock.SleepFor(kTimeoutNs - kMillisecond);
    EXPECT_EQ(*broker.LastStableOffset(tp), 0) << "not timed out yet";
    clock.SleepFor(kMillisecond);
    EXPECT_EQ(*broker.LastStableOffset(tp), 2) << "aborted by the broker: record, marker";
    EXPECT_EQ(broker.Transaction("app-0")->aborted_by_timeout, 1);
    EXPECT_EQ(broker.Transaction("app-0")->epoch, 1);
    absl::Status commit = producer->CommitTransaction(kSecond);
    EXPECT_EQ(commit.code(), absl::StatusCode::kAborted);
    EXPECT_THAT(commit.message(), HasSubstr("timed out"));
  });
}

TEST(FakeTransactionsTest, TransactionalOffsetsBecomeVisibleOnCommitOnly) {
  WithBroker([](FakeBroker& broker, sim::VirtualClock&) {
    const TopicPartition tp{"t", 0};
    auto consumer = broker.NewMainConsumer("g", Config(IsolationLevel::kReadCommitted));
    TextListener listener;
    ASSERT_TRUE(consumer->Subscribe({"t"}, &listener).ok());
    ASSERT_TRUE(consumer->Poll(0).ok());
    const ConsumerGroupMetadata group = consumer->GroupMetadata();
    EXPECT_EQ(group.group_id, "g");
    EXPECT_EQ(group.member_id, consumer->MemberId());
    EXPECT_EQ(group.generation_id, broker.Generation("g"));
    auto producer = NewInitialised(broker, "app-0");
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->SendOffsetsToTransaction({{tp, 7}}, group).ok());
    EXPECT_TRUE(broker.CommittedOffsets("g").empty()) << "pending until the commit";
    ASSERT_TRUE(producer->AbortTransaction(kSecond).ok());
    EXPECT_TRUE(broker.CommittedOffsets("g").empty()) << "an abort drops them";
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->SendOffsetsToTransaction({{tp, 9}}, group).ok());
    ASSERT_TRUE(producer->CommitTransaction(kSecond).ok());
    EXPECT_EQ(broker.CommittedOffsets("g"), (std::map<TopicPartition, int64_t>{{tp, 9}}));
    EXPECT_EQ(*broker.EndOffset(tp), 0) << "a transaction without records writes no marker";
  });
}

TEST(FakeTransactionsTest, OffsetsOfAStaleGenerationMakeTheTransactionAbortable) {
  WithBroker([](FakeBroker& broker, sim::VirtualClock&) {
    const TopicPartition tp{"t", 0};
    auto consumer = broker.NewMainConsumer("g", Config(IsolationLevel::kReadCommitted));
    ASSERT_TRUE(consumer->Subscribe({"t"}, nullptr).ok());
    ASSERT_TRUE(consumer->Poll(0).ok());
    ConsumerGroupMetadata stale = consumer->GroupMetadata();
    stale.generation_id -= 1;
    auto producer = NewInitialised(broker, "app-0");
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->Send(tp, "a", "1", 0).ok());
    EXPECT_EQ(producer->SendOffsetsToTransaction({{tp, 1}}, stale).code(),
              absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(producer->CommitTransaction(kSecond).code(), absl::StatusCode::kCancelled);
    EXPECT_EQ(producer->Send(tp, "b", "2", 0).code(), absl::StatusCode::kCancelled);
    ASSERT_TRUE(producer->AbortTransaction(kSecond).ok()) << "abortable: abort, then go on";
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->Send(tp, "c", "3", 0).ok());
    ASSERT_TRUE(producer->CommitTransaction(kSecond).ok());
    EXPECT_EQ(*broker.EndOffset(tp), 2) << "the queued record of the aborted one never went";
  });
}

TEST(FakeTransactionsTest, CallsInTheWrongStateAreMisuse) {
  WithBroker([](FakeBroker& broker, sim::VirtualClock&) {
    const TopicPartition tp{"t", 0};
    TransactionalProducerConfig config;
    config.transactional_id = "app-0";
    auto producer = broker.NewTransactionalProducer(config);
    constexpr auto kMisuse = absl::StatusCode::kFailedPrecondition;
    EXPECT_EQ(producer->BeginTransaction().code(), kMisuse) << "before InitTransactions";
    ASSERT_TRUE(producer->InitTransactions(kSecond).ok());
    EXPECT_EQ(producer->InitTransactions(kSecond).code(), kMisuse);
    EXPECT_EQ(producer->Send(tp, "k", "v", 0).code(), kMisuse) << "outside a transaction";
    EXPECT_EQ(producer->CommitTransaction(kSecond).code(), kMisuse);
    EXPECT_EQ(producer->AbortTransaction(kSecond).code(), kMisuse);
    ASSERT_TRUE(producer->BeginTransaction().ok());
    EXPECT_EQ(producer->BeginTransaction().code(), kMisuse);
    producer->Close();
    EXPECT_EQ(producer->Send(tp, "k", "v", 0).code(), kMisuse);
    TransactionalProducerConfig no_id;
    EXPECT_EQ(broker.NewTransactionalProducer(no_id)->InitTransactions(kSecond).code(),
              absl::StatusCode::kInvalidArgument);
  });
}

TEST(FakeTransactionsTest, AReadCommittedMainConsumerSkipsAbortedRecords) {
  WithBroker([](FakeBroker& broker, sim::VirtualClock&) {
    const TopicPartition tp{"t", 0};
    auto producer = NewInitialised(broker, "app-0");
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->Send(tp, "aborted", "1", 0).ok());
    ASSERT_TRUE(producer->Flush(kSecond).ok());
    ASSERT_TRUE(producer->AbortTransaction(kSecond).ok());  // 0, marker 1
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->Send(tp, "kept", "2", 0).ok());
    ASSERT_TRUE(producer->CommitTransaction(kSecond).ok());  // 2, marker 3
    auto consumer = broker.NewMainConsumer("g", Config(IsolationLevel::kReadCommitted));
    ASSERT_TRUE(consumer->Subscribe({"t"}, nullptr).ok());
    std::vector<std::string> keys;
    for (int i = 0; i < 5; ++i) {
      absl::StatusOr<PollResult> polled = consumer->Poll(0);
      ASSERT_TRUE(polled.ok()) << polled.status();
      for (const PartitionRecords& p : polled->partitions) {
        for (const ConsumerRecord& r : p.records) keys.push_back(r.key);
      }
    }
    EXPECT_THAT(keys, ElementsAre("kept"));
    EXPECT_EQ(*consumer->Position(tp), 4);
  });
}

TEST(FakeTransactionsTest, TheSuspendableTransportForwardsTheTransactionalCalls) {
  WithBroker([](FakeBroker& broker, sim::VirtualClock&) {
    const TopicPartition tp{"t", 0};
    SuspendableTransport::Options options;
    options.application_id = "app";
    options.process_id = "p1";
    SuspendableTransport transport(broker, options);
    TransactionalProducerConfig config;
    config.client_id = "producer";
    config.transactional_id = "app-0_0";
    auto producer = transport.NewTransactionalProducer(config);
    ASSERT_TRUE(producer->InitTransactions(kSecond).ok());
    EXPECT_TRUE(broker.Transaction("app-0_0").has_value());
    auto consumer = transport.NewMainConsumer("g", Config(IsolationLevel::kReadCommitted));
    ASSERT_TRUE(consumer->Subscribe({"t"}, nullptr).ok());
    ASSERT_TRUE(consumer->Poll(0).ok());
    const ConsumerGroupMetadata group = consumer->GroupMetadata();
    EXPECT_EQ(group.generation_id, broker.Generation("g"));
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->Send(tp, "k", "v", 0).ok());
    ASSERT_TRUE(producer->SendOffsetsToTransaction({{tp, 5}}, group).ok());
    auto admin = transport.NewAdmin("admin");
    using Offsets = std::map<TopicPartition, int64_t>;
    ASSERT_TRUE(producer->Flush(kSecond).ok());
    EXPECT_EQ(*admin->EndOffsetsFor({tp}, IsolationLevel::kReadCommitted), (Offsets{{tp, 0}}));
    ASSERT_TRUE(producer->CommitTransaction(kSecond).ok());
    EXPECT_EQ(*admin->EndOffsetsFor({tp}, IsolationLevel::kReadCommitted), (Offsets{{tp, 2}}));
    EXPECT_EQ(broker.CommittedOffsets("g"), (Offsets{{tp, 5}}));
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->AbortTransaction(kSecond).ok());
    producer->Close();
    consumer->Close();
  });
}

TEST(FakeTransactionsTest, AMovedCoordinatorIsRetryableAndActsOnNothing) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    ScriptedRandom random;
    BrokerFaults faults;
    faults.coordinator_moved_per_mille = 1;
    FakeBroker broker(clock, &random, faults);
    ASSERT_TRUE(broker.CreateTopic("t", 1).ok());
    const TopicPartition tp{"t", 0};
    auto producer = NewInitialised(broker, "app-0");  // draws 0: no fault
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->Send(tp, "a", "1", 0).ok());
    random.Push(999);  // the commit's draw hits
    absl::Status commit = producer->CommitTransaction(kSecond);
    EXPECT_EQ(commit.code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(commit.message(), HasSubstr("NOT_COORDINATOR"));
    EXPECT_TRUE(IsInjected(commit));
    EXPECT_EQ(*broker.LastStableOffset(tp), 0) << "flushed, not committed";
    ASSERT_TRUE(producer->CommitTransaction(kSecond).ok()) << "the retry commits";
    EXPECT_EQ(*broker.LastStableOffset(tp), 2);
    EXPECT_EQ(broker.faults_injected().coordinator_moved, 1u);
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

TEST(FakeTransactionsTest, AnInjectedTimeOutAbortsTheTransactionAndFencesTheProducer) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    ScriptedRandom random;
    BrokerFaults faults;
    faults.transaction_timeout_per_mille = 1;
    FakeBroker broker(clock, &random, faults);
    ASSERT_TRUE(broker.CreateTopic("t", 1).ok());
    const TopicPartition tp{"t", 0};
    auto producer = NewInitialised(broker, "app-0");
    ASSERT_TRUE(producer->BeginTransaction().ok());
    ASSERT_TRUE(producer->Send(tp, "a", "1", 0).ok());
    random.Push(999);
    absl::Status commit = producer->CommitTransaction(kSecond);
    EXPECT_EQ(commit.code(), absl::StatusCode::kAborted);
    EXPECT_THAT(commit.message(), HasSubstr("timed out"));
    EXPECT_EQ(*broker.LastStableOffset(tp), 2) << "record, abort marker";
    EXPECT_EQ(broker.Transaction("app-0")->aborted_by_timeout, 1);
    auto successor = NewInitialised(broker, "app-0");
    ASSERT_TRUE(successor->BeginTransaction().ok());
    ASSERT_TRUE(successor->Send(tp, "b", "2", 0).ok());
    ASSERT_TRUE(successor->CommitTransaction(kSecond).ok()) << "a new producer goes on";
    auto committed = broker.NewRestoreConsumer(Config(IsolationLevel::kReadCommitted));
    ASSERT_TRUE(committed->Assign({tp}).ok());
    ASSERT_TRUE(committed->Seek(tp, 0).ok());
    std::vector<ConsumerRecord> got = PollAll(*committed);
    ASSERT_THAT(OffsetsOf(got), ElementsAre(2));
    EXPECT_EQ(got[0].key, "b");
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

TEST(FakeTransactionsTest, SwarmWithTransactionsLeavesSwarmsDrawsAlone) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    SeededRandom a(seed);
    SeededRandom b(seed);
    const BrokerFaults plain = BrokerFaults::Swarm(a);
    const BrokerFaults with = BrokerFaults::SwarmWithTransactions(b);
    EXPECT_EQ(with.request_timeout_per_mille, plain.request_timeout_per_mille);
    EXPECT_EQ(with.empty_poll_per_mille, plain.empty_poll_per_mille);
    EXPECT_EQ(with.transaction_timeout_per_mille, 0u) << "fatal: only with include_fatal";
    EXPECT_EQ(plain.coordinator_moved_per_mille, 0u);
    EXPECT_EQ(plain.ToString().find("coordinator_moved"), std::string::npos)
        << "profiles without the transaction faults print as before";
  }
}

TEST(FakeTransactionsTest, ScriptedFenceAndMarkersShowInTheTrace) {
  sim::SimOptions options;
  options.trace_mode = sim::TraceMode::kFull;
  TestRun r = RunUnderSim(
      [&]() {
        sim::VirtualClock clock;
        FakeBroker broker(clock, nullptr, {});
        ASSERT_TRUE(broker.CreateTopic("t", 1).ok());
        auto producer = NewInitialised(broker, "app-0");
        ASSERT_TRUE(producer->BeginTransaction().ok());
        ASSERT_TRUE(producer->Send({"t", 0}, "a", "1", 0).ok());
        ASSERT_TRUE(producer->Flush(kSecond).ok());
        ASSERT_TRUE(broker.FenceTransactionalId("app-0").ok());
        EXPECT_EQ(producer->CommitTransaction(kSecond).code(), absl::StatusCode::kAborted);
        std::vector<std::string> marks;
        for (const std::string& m : MarkTexts(CurrentSimulation())) {
          if (m.starts_with("transaction/")) marks.push_back(m);
        }
        EXPECT_THAT(marks, ElementsAre(HasSubstr("init app-0"), HasSubstr("abort marker t-0@1"),
                                       HasSubstr("abort app-0"), HasSubstr("fence app-0 epoch 1")));
      },
      1, options);
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

}  // namespace
}  // namespace restoresim::fakes
