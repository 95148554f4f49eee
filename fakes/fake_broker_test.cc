// The fake broker's data path: polls that wait in virtual time, positions and resets, fair
// max_poll_records, bad calls, many clients at once (simulated and on OS threads), determinism.
// Faults are in fake_broker_faults_test.cc, consumer groups in fake_group_test.cc.
#include "fakes/fake_broker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/port/system_clock.h"
#include "core/sync/mutex.h"
#include "core/sync/thread.h"
#include "fakes/fake_broker_test_util.h"
#include "sim/choice_random.h"
#include "sim/sim_test_util.h"
#include "sim/virtual_clock.h"

namespace restoresim::fakes {
namespace {

using sim::RunUnderSim;
using sim::TestRun;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

ConsumerConfig Config(const std::string& id, int32_t max_poll_records = 1000,
                      OffsetReset reset = OffsetReset::kNone) {
  ConsumerConfig config;
  config.client_id = id;
  config.max_poll_records = max_poll_records;
  config.auto_offset_reset = reset;
  return config;
}

void AppendN(FakeBroker& broker, const TopicPartition& tp, int n) {
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(broker.Append(tp, fmt::format("k{}", i), fmt::format("v{}", i), i).ok());
  }
}

TEST(FakeBrokerTest, PollWaitsInVirtualTimeUntilAProducerAppends) {
  TimeNs returned_at_ns = -1;
  size_t records = 0;
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    FakeBroker broker(clock, nullptr, {});
    const TopicPartition tp{"input", 0};
    EXPECT_TRUE(broker.CreateTopic("input", 1).ok());
    auto consumer = broker.NewRestoreConsumer(Config("restore"));
    EXPECT_TRUE(consumer->Assign({tp}).ok());
    EXPECT_TRUE(consumer->Seek(tp, 0).ok());
    Thread producer_thread("producer", [&]() {
      clock.SleepFor(5 * kSecond);
      auto producer = broker.NewProducer("producer");
      EXPECT_TRUE(producer->Send(tp, "k", "v", 0).ok());
      EXPECT_TRUE(producer->Flush(kSecond).ok());
    });
    absl::StatusOr<PollResult> result = consumer->Poll(10 * kSecond);
    returned_at_ns = clock.NowNs();
    if (result.ok()) records = result->RecordCount();
    producer_thread.Join();
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_EQ(returned_at_ns, 5 * kSecond) << "the poll returns when the data arrives";
  EXPECT_EQ(records, 1u);
}

TEST(FakeBrokerTest, PollWithoutDataReturnsNothingAtItsDeadlineAndLatencyIsCharged) {
  TimeNs returned_at_ns = -1;
  TimeNs admin_done_ns = -1;
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    BrokerOptions options;
    options.request_latency_ns = 7 * kMillisecond;
    FakeBroker broker(clock, nullptr, {}, options);
    EXPECT_TRUE(broker.CreateTopic("input", 1).ok());
    auto consumer = broker.NewRestoreConsumer(Config("restore"));
    EXPECT_TRUE(consumer->Assign({{"input", 0}}).ok());
    EXPECT_TRUE(consumer->SeekToEnd({{"input", 0}}).ok());
    absl::StatusOr<PollResult> result = consumer->Poll(3 * kSecond);
    returned_at_ns = clock.NowNs();
    EXPECT_TRUE(result.ok() && result->RecordCount() == 0);
    auto admin = broker.NewAdmin("admin");
    EXPECT_TRUE(admin->EndOffsets({{"input", 0}}).ok());
    admin_done_ns = clock.NowNs();
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_EQ(returned_at_ns, 3 * kSecond);
  EXPECT_EQ(admin_done_ns, 3 * kSecond + 7 * kMillisecond);
}

TEST(FakeBrokerTest, PartitionWithoutPositionFollowsTheResetPolicy) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    FakeBroker broker(clock, nullptr, {});
    const TopicPartition tp{"log", 0};
    EXPECT_TRUE(broker.CreateTopic("log", 1).ok());
    AppendN(broker, tp, 4);
    EXPECT_TRUE(broker.DeleteRecords({{tp, 1}}).ok());
    auto none = broker.NewRestoreConsumer(Config("none"));
    EXPECT_TRUE(none->Assign({tp}).ok());
    absl::StatusOr<PollResult> failed = none->Poll(0);
    EXPECT_EQ(failed.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(failed.status().message()), HasSubstr("log-0"));
    EXPECT_EQ(none->Position(tp).status().code(), absl::StatusCode::kFailedPrecondition);

    auto earliest = broker.NewRestoreConsumer(Config("e", 1000, OffsetReset::kEarliest));
    EXPECT_TRUE(earliest->Assign({tp}).ok());
    absl::StatusOr<PollResult> from_start = earliest->Poll(0);
    ASSERT_TRUE(from_start.ok());
    ASSERT_EQ(from_start->RecordCount(), 3u);
    EXPECT_EQ(from_start->partitions[0].records[0].offset, 1) << "the log start, not 0";

    auto latest = broker.NewRestoreConsumer(Config("l", 1000, OffsetReset::kLatest));
    EXPECT_TRUE(latest->Assign({tp}).ok());
    EXPECT_EQ(*latest->Position(tp), 4);
    // Out of range with a reset policy resets instead of reporting.
    EXPECT_TRUE(earliest->Seek(tp, 0).ok());
    absl::StatusOr<PollResult> reset = earliest->Poll(0);
    ASSERT_TRUE(reset.ok());
    EXPECT_TRUE(reset->out_of_range.empty());
    EXPECT_EQ(reset->RecordCount(), 3u);
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

TEST(FakeBrokerTest, MaxPollRecordsRotatesThePartitionServedFirst) {
  std::vector<std::vector<int32_t>> served;  // per poll, the partitions that returned records
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    FakeBroker broker(clock, nullptr, {});
    EXPECT_TRUE(broker.CreateTopic("t", 3).ok());
    const std::vector<TopicPartition> all = Partitions("t", {0, 1, 2});
    for (const TopicPartition& tp : all) AppendN(broker, tp, 10);
    auto consumer = broker.NewRestoreConsumer(Config("c", 2));
    EXPECT_TRUE(consumer->Assign(all).ok());
    EXPECT_TRUE(consumer->SeekToBeginning(all).ok());
    for (int poll = 0; poll < 3; ++poll) {
      absl::StatusOr<PollResult> result = consumer->Poll(0);
      ASSERT_TRUE(result.ok());
      EXPECT_EQ(result->RecordCount(), 2u);
      served.emplace_back();
      for (const PartitionRecords& p : result->partitions) {
        served.back().push_back(p.partition.partition);
      }
    }
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_THAT(served, ElementsAre(ElementsAre(0), ElementsAre(1), ElementsAre(2)));
}

TEST(FakeBrokerTest, BadCallsGiveClearErrors) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    FakeBroker broker(clock, nullptr, {});
    const TopicPartition tp{"t", 0};
    EXPECT_TRUE(broker.CreateTopic("t", 1).ok());
    EXPECT_EQ(broker.CreateTopic("t", 1).code(), absl::StatusCode::kAlreadyExists);
    EXPECT_EQ(broker.CreateTopic("bad name", 1).code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(broker.CreateTopic("zero", 0).code(), absl::StatusCode::kInvalidArgument);
    AppendN(broker, tp, 3);
    EXPECT_EQ(broker.DeleteRecords({{tp, 4}}).code(), absl::StatusCode::kOutOfRange);
    EXPECT_EQ(broker.DeleteRecords({{tp, -1}}).code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(broker.DeleteRecords({{{"t", 1}, 0}}).code(), absl::StatusCode::kNotFound);

    auto restore = broker.NewRestoreConsumer(Config("r"));
    absl::Status unknown = restore->Assign({{"nope", 0}});
    EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(std::string(unknown.message()), HasSubstr("unknown topic nope"));
    EXPECT_EQ(restore->Assign({{"t", 7}}).code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(restore->Poll(-1).status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(restore->Resume({tp}).code(), absl::StatusCode::kFailedPrecondition);

    auto zero = broker.NewRestoreConsumer(Config("z", 0));
    EXPECT_EQ(zero->Assign({tp}).code(), absl::StatusCode::kInvalidArgument);

    auto main = broker.NewMainConsumer("g", Config("m"));
    EXPECT_EQ(main->Poll(0).status().code(), absl::StatusCode::kFailedPrecondition)
        << "poll before subscribe";
    EXPECT_EQ(main->Subscribe({}, nullptr).code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(main->Subscribe({"nope"}, nullptr).code(), absl::StatusCode::kNotFound);
    EXPECT_TRUE(main->Subscribe({"t"}, nullptr).ok());
    EXPECT_EQ(main->Subscribe({"t"}, nullptr).code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(main->Seek(tp, 0).code(), absl::StatusCode::kFailedPrecondition)
        << "not owned until the poll that delivers the assignment";

    auto producer = broker.NewProducer("p");
    EXPECT_EQ(producer->Send({"nope", 0}, "k", "v", 0).code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(producer->Flush(-1).status().code(), absl::StatusCode::kInvalidArgument);
    auto admin = broker.NewAdmin("a");
    EXPECT_EQ(admin->BeginningOffsets({{"t", 3}}).status().code(), absl::StatusCode::kNotFound);
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

TEST(FakeBrokerTest, ProducerCloseDeliversWhatIsQueued) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    FakeBroker broker(clock, nullptr, {});
    const TopicPartition tp{"t", 0};
    EXPECT_TRUE(broker.CreateTopic("t", 1).ok());
    auto producer = broker.NewProducer("p");
    EXPECT_TRUE(producer->Send(tp, "k", std::nullopt, 0).ok());
    EXPECT_EQ(*broker.EndOffset(tp), 0) << "a send is not visible before the flush";
    producer.reset();  // the destructor closes
    EXPECT_EQ(*broker.EndOffset(tp), 1);
    absl::StatusOr<std::vector<ConsumerRecord>> log = broker.ReadLog(tp, 0, 10);
    ASSERT_TRUE(log.ok());
    EXPECT_FALSE(log->front().value.has_value());
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

// Three instances with two stream threads each: main consumers sharing one group over a
// 6-partition input, while three restore threads read a changelog and a producer writes both.
void ManyClients(FakeBroker& broker, Clock& clock) {
  constexpr int kPartitions = 6;
  constexpr int kRecords = 40;
  EXPECT_TRUE(broker.CreateTopic("input", kPartitions).ok());
  EXPECT_TRUE(broker.CreateTopic("changelog", kPartitions).ok());
  Mutex mu("many.seen");
  std::set<std::pair<int32_t, int64_t>> seen_input;  // (partition, offset): duplicates allowed
  int restored = 0;
  std::vector<std::unique_ptr<Thread>> threads;
  threads.push_back(std::make_unique<Thread>("producer", [&]() {
    auto producer = broker.NewProducer("producer");
    for (int i = 0; i < kRecords; ++i) {
      for (int32_t p = 0; p < kPartitions; ++p) {
        EXPECT_TRUE(producer->Send({"input", p}, "k", "v", i).ok());
        EXPECT_TRUE(producer->Send({"changelog", p}, "k", "v", i).ok());
      }
      EXPECT_TRUE(producer->Flush(kSecond).ok());
      clock.SleepFor(10 * kMillisecond);
    }
  }));
  for (int t = 0; t < 6; ++t) {
    threads.push_back(std::make_unique<Thread>(fmt::format("stream-{}", t), [&, t]() {
      auto consumer = broker.NewMainConsumer(
          "app",
          Config(fmt::format("instance{}-thread{}", t / 2, t % 2), 7, OffsetReset::kEarliest));
      EXPECT_TRUE(consumer->Subscribe({"input"}, nullptr).ok());
      for (int poll = 0; poll < 500; ++poll) {
        absl::StatusOr<PollResult> result = consumer->Poll(100 * kMillisecond);
        ASSERT_TRUE(result.ok()) << result.status();
        MutexLock lock(mu);
        for (const PartitionRecords& p : result->partitions) {
          for (const ConsumerRecord& rec : p.records) {
            seen_input.emplace(p.partition.partition, rec.offset);
          }
        }
        if (seen_input.size() == kPartitions * kRecords) break;
      }
    }));
  }
  for (int t = 0; t < 3; ++t) {
    threads.push_back(std::make_unique<Thread>(fmt::format("restore-{}", t), [&, t]() {
      auto consumer = broker.NewRestoreConsumer(Config(fmt::format("restore-{}", t), 5));
      const std::vector<TopicPartition> mine = Partitions("changelog", {2 * t, 2 * t + 1});
      EXPECT_TRUE(consumer->Assign(mine).ok());
      EXPECT_TRUE(consumer->SeekToBeginning(mine).ok());
      int count = 0;
      for (int poll = 0; poll < 500 && count < 2 * kRecords; ++poll) {
        absl::StatusOr<PollResult> result = consumer->Poll(100 * kMillisecond);
        ASSERT_TRUE(result.ok()) << result.status();
        count += static_cast<int>(result->RecordCount());
      }
      MutexLock lock(mu);
      restored += count;
    }));
  }
  for (auto& t : threads) t->Join();
  MutexLock lock(mu);
  EXPECT_EQ(seen_input.size(), static_cast<size_t>(kPartitions * kRecords));
  EXPECT_EQ(restored, kPartitions * kRecords);
}

TEST(FakeBrokerTest, ManyClientsAtOnceUnderTheSimulator) {
  for (uint64_t seed = 0; seed < 5; ++seed) {
    TestRun r = RunUnderSim(
        [&]() {
          sim::VirtualClock clock;
          FakeBroker broker(clock, nullptr, {});
          ManyClients(broker, clock);
          EXPECT_EQ(broker.Members("app").size(), 0u) << "every member left at close";
        },
        seed);
    ASSERT_TRUE(r.outcome.ok()) << "seed " << seed << ": " << r.outcome.message;
  }
}

TEST(FakeBrokerTest, ManyClientsAtOnceOnOsThreads) {
  FakeBroker broker(*SystemClock::Default(), nullptr, {});
  ManyClients(broker, *SystemClock::Default());
}

// A workload with every kind of client and moderate faults drawn as schedule choices.
void FaultyWorkload() {
  sim::VirtualClock clock;
  sim::ChoiceRandom random(CurrentSimulation());
  FakeBroker broker(clock, &random, BrokerFaults::Moderate());
  EXPECT_TRUE(broker.CreateTopic("t", 2).ok());
  Thread producer_thread("producer", [&]() {
    auto producer = broker.NewProducer("p");
    for (int i = 0; i < 20; ++i) {
      EXPECT_TRUE(producer->Send({"t", i % 2}, "k", "v", i).ok());
      if (i % 5 == 4) producer->Flush(kSecond).IgnoreError();  // retried by the next flush
    }
    while (!producer->Flush(kSecond).ok()) clock.SleepFor(kMillisecond);
  });
  Thread consumer_thread("consumer", [&]() {
    auto consumer = broker.NewMainConsumer("g", Config("c", 3, OffsetReset::kEarliest));
    EXPECT_TRUE(consumer->Subscribe({"t"}, nullptr).ok());
    size_t records = 0;
    for (int poll = 0; poll < 200 && records < 20; ++poll) {
      absl::StatusOr<PollResult> result = consumer->Poll(100 * kMillisecond);
      if (result.ok()) records += result->RecordCount();
    }
    EXPECT_EQ(records, 20u);
  });
  producer_thread.Join();
  consumer_thread.Join();
}

TEST(FakeBrokerTest, SameSeedSameTraceHash) {
  std::set<uint64_t> hashes;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    TestRun a = RunUnderSim(FaultyWorkload, seed);
    TestRun b = RunUnderSim(FaultyWorkload, seed);
    ASSERT_TRUE(a.outcome.ok()) << "seed " << seed << ": " << a.outcome.message;
    EXPECT_EQ(a.hash, b.hash) << "seed " << seed;
    EXPECT_EQ(a.end_ns, b.end_ns) << "seed " << seed;
    hashes.insert(a.hash);
  }
  EXPECT_GT(hashes.size(), 4u) << "seeds should give different schedules and faults";
}

}  // namespace
}  // namespace restoresim::fakes
