// The fake broker's fault injection: rates, tags, what each fault does, that nothing is drawn
// when faults are off, swarm profiles, and the trace marks that show faults and calls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/port/file_system.h"
#include "fakes/broker_faults.h"
#include "fakes/fake_broker.h"
#include "fakes/fake_broker_test_util.h"
#include "sim/sim_test_util.h"
#include "sim/virtual_clock.h"

namespace restoresim::fakes {
namespace {

using sim::RunUnderSim;
using sim::TestRun;
using ::testing::Contains;
using ::testing::HasSubstr;

ConsumerConfig Config(const std::string& id, int32_t max_poll_records = 1000) {
  ConsumerConfig config;
  config.client_id = id;
  config.max_poll_records = max_poll_records;
  return config;
}

TEST(BrokerFaultsTest, RequestFaultsHappenAtTheirRatesAndAreTaggedInjected) {
  constexpr int kCalls = 4000;
  std::map<absl::StatusCode, int> codes;
  FaultCounts counts;
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    SeededRandom random(42);
    BrokerFaults faults;
    faults.request_timeout_per_mille = 100;
    faults.disconnect_per_mille = 300;
    FakeBroker broker(clock, &random, faults);
    EXPECT_TRUE(broker.CreateTopic("t", 1).ok());
    auto admin = broker.NewAdmin("admin");
    for (int i = 0; i < kCalls; ++i) {
      absl::StatusOr<int32_t> count = admin->PartitionCount("t");
      ++codes[count.status().code()];
      if (!count.ok()) {
        EXPECT_TRUE(IsInjected(count.status())) << count.status();
        EXPECT_TRUE(IsRetryable(count.status())) << count.status();
        EXPECT_THAT(std::string(count.status().message()), HasSubstr("injected"));
      }
    }
    counts = broker.faults_injected();
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  // Deterministic (seeded), so the bounds only say the rates are the configured ones.
  EXPECT_NEAR(codes[absl::StatusCode::kDeadlineExceeded], kCalls * 0.1, kCalls * 0.02);
  EXPECT_NEAR(codes[absl::StatusCode::kUnavailable], kCalls * 0.9 * 0.3, kCalls * 0.03);
  EXPECT_EQ(counts.request_timeout,
            static_cast<uint64_t>(codes[absl::StatusCode::kDeadlineExceeded]));
  EXPECT_EQ(counts.disconnect, static_cast<uint64_t>(codes[absl::StatusCode::kUnavailable]));
  // Each timeout waited out the 30 s request timeout in virtual time.
  EXPECT_EQ(r.end_ns, static_cast<TimeNs>(counts.request_timeout) * 30 * kSecond);
}

TEST(BrokerFaultsTest, NoFaultsMeansNoDraws) {
  ScriptedRandom random;
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    FakeBroker broker(clock, &random, BrokerFaults{});
    EXPECT_TRUE(broker.CreateTopic("t", 1).ok());
    auto producer = broker.NewProducer("p");
    EXPECT_TRUE(producer->Send({"t", 0}, "k", "v", 0).ok());
    EXPECT_TRUE(producer->Flush(kSecond).ok());
    auto consumer = broker.NewRestoreConsumer(Config("c"));
    EXPECT_TRUE(consumer->Assign({{"t", 0}}).ok());
    EXPECT_TRUE(consumer->SeekToBeginning({{"t", 0}}).ok());
    EXPECT_EQ(consumer->Poll(kSecond)->RecordCount(), 1u);
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_EQ(random.draws(), 0u) << "a run without faults must not spend schedule choices";
}

TEST(BrokerFaultsTest, RequestTimeoutWaitsOutThePollTimeout) {
  TimeNs returned_at_ns = -1;
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    ScriptedRandom random;
    BrokerFaults faults;
    faults.request_timeout_per_mille = 1000;
    FakeBroker broker(clock, &random, faults);
    EXPECT_TRUE(broker.CreateTopic("t", 1).ok());
    auto consumer = broker.NewRestoreConsumer(Config("c"));
    EXPECT_TRUE(consumer->Assign({{"t", 0}}).ok());
    absl::StatusOr<PollResult> result = consumer->Poll(2 * kSecond);
    returned_at_ns = clock.NowNs();
    EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded);
    EXPECT_TRUE(IsInjected(result.status()));
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_EQ(returned_at_ns, 2 * kSecond);
}

TEST(BrokerFaultsTest, SlowPartialAndEmptyFetchesNeverSkipAnOffset) {
  FaultCounts counts;
  TimeNs end_ns = 0;
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    SeededRandom random(7);
    BrokerFaults faults;
    faults.slow_fetch_per_mille = 300;
    faults.partial_fetch_per_mille = 500;
    faults.empty_poll_per_mille = 300;
    FakeBroker broker(clock, &random, faults);
    const TopicPartition tp{"t", 0};
    EXPECT_TRUE(broker.CreateTopic("t", 1).ok());
    for (int i = 0; i < 1000; ++i) EXPECT_TRUE(broker.Append(tp, "k", "v", i).ok());
    auto consumer = broker.NewRestoreConsumer(Config("c", 50));
    EXPECT_TRUE(consumer->Assign({tp}).ok());
    EXPECT_TRUE(consumer->SeekToBeginning({tp}).ok());
    int64_t next = 0;
    for (int poll = 0; poll < 1000 && next < 1000; ++poll) {
      absl::StatusOr<PollResult> result = consumer->Poll(kSecond);
      ASSERT_TRUE(result.ok()) << result.status();
      for (const PartitionRecords& p : result->partitions) {
        for (const ConsumerRecord& rec : p.records) ASSERT_EQ(rec.offset, next++);
      }
    }
    EXPECT_EQ(next, 1000);
    counts = broker.faults_injected();
    end_ns = clock.NowNs();
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_GT(counts.slow_fetch, 0u);
  EXPECT_GT(counts.partial_fetch, 0u);
  EXPECT_GT(counts.empty_poll, 0u);
  EXPECT_GT(end_ns, 0) << "slow fetches cost virtual time";
}

TEST(BrokerFaultsTest, UnavailableLeaderFailsOffsetCallsAndIsSkippedByPollsForAWhile) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    ScriptedRandom random;
    BrokerFaults faults;
    faults.leader_unavailable_per_mille = 999;  // missed only at the script's default 0
    faults.leader_unavailable_ns_max = 2 * kSecond;
    FakeBroker broker(clock, &random, faults);
    const std::vector<TopicPartition> both = Partitions("t", {0, 1});
    EXPECT_TRUE(broker.CreateTopic("t", 2).ok());
    for (const TopicPartition& tp : both) EXPECT_TRUE(broker.Append(tp, "k", "v", 0).ok());
    auto admin = broker.NewAdmin("a");
    random.Push(999);          // the leader of one partition goes away...
    random.Push(1);            // ...partition index 1...
    random.Push(kSecond - 1);  // ...for 1 s
    absl::StatusOr<std::map<TopicPartition, int64_t>> end = admin->EndOffsets(both);
    EXPECT_EQ(end.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_TRUE(IsInjected(end.status()));
    EXPECT_THAT(std::string(end.status().message()), HasSubstr("leader not available for t-1"));
    auto consumer = broker.NewRestoreConsumer(Config("c"));
    EXPECT_TRUE(consumer->Assign(both).ok());
    EXPECT_TRUE(consumer->SeekToBeginning(both).ok());
    absl::StatusOr<PollResult> polled = consumer->Poll(0);
    ASSERT_TRUE(polled.ok());
    ASSERT_EQ(polled->partitions.size(), 1u) << "the leaderless partition is skipped";
    EXPECT_EQ(polled->partitions[0].partition, both[0]);
    clock.SleepFor(kSecond);
    EXPECT_TRUE(admin->EndOffsets(both).ok()) << "the leader is back";
    polled = consumer->Poll(0);
    ASSERT_TRUE(polled.ok());
    EXPECT_EQ(polled->RecordCount(), 1u);
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

TEST(BrokerFaultsTest, FencedProducerStaysFencedAndLosesItsQueue) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    ScriptedRandom random;
    BrokerFaults faults;
    faults.producer_fenced_per_mille = 999;  // missed only at the script's default 0
    FakeBroker broker(clock, &random, faults);
    const TopicPartition tp{"t", 0};
    EXPECT_TRUE(broker.CreateTopic("t", 1).ok());
    auto producer = broker.NewProducer("zombie");
    EXPECT_TRUE(producer->Send(tp, "k", "v", 0).ok());
    random.Push(999);  // fenced at the flush
    absl::StatusOr<std::map<TopicPartition, int64_t>> flushed = producer->Flush(kSecond);
    EXPECT_EQ(flushed.status().code(), absl::StatusCode::kAborted);
    EXPECT_TRUE(IsInjected(flushed.status()));
    EXPECT_FALSE(IsRetryable(flushed.status()));
    EXPECT_EQ(producer->Send(tp, "k", "v", 1).code(), absl::StatusCode::kAborted);
    EXPECT_EQ(producer->Flush(kSecond).status().code(), absl::StatusCode::kAborted);
    producer.reset();
    EXPECT_EQ(*broker.EndOffset(tp), 0) << "nothing of the fenced producer became visible";
    auto fresh = broker.NewProducer("fresh");
    EXPECT_TRUE(fresh->Send(tp, "k", "v", 2).ok());
    EXPECT_TRUE(fresh->Flush(kSecond).ok());
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

// Under the simulator every draw is a schedule choice that the shrinker lowers toward 0, so 0
// must be the quiet answer everywhere: no fault at any rate below 1000, the smallest effect when
// a fault does happen (a partial fetch withholding one record, the least extra latency).
TEST(BrokerFaultsTest, TheAnswerZeroNeverInjectsAFault) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    ScriptedRandom random;  // answers 0 to every draw
    BrokerFaults faults;
    faults.request_timeout_per_mille = 999;
    faults.disconnect_per_mille = 999;
    faults.slow_fetch_per_mille = 999;
    faults.partial_fetch_per_mille = 999;
    faults.empty_poll_per_mille = 999;
    faults.leader_unavailable_per_mille = 999;
    faults.producer_fenced_per_mille = 999;
    FakeBroker broker(clock, &random, faults);
    const TopicPartition tp{"t", 0};
    EXPECT_TRUE(broker.CreateTopic("t", 1).ok());
    auto producer = broker.NewProducer("p");
    for (int i = 0; i < 10; ++i) EXPECT_TRUE(producer->Send(tp, "k", "v", i).ok());
    EXPECT_TRUE(producer->Flush(kSecond).ok());
    auto consumer = broker.NewRestoreConsumer(Config("c"));
    EXPECT_TRUE(consumer->Assign({tp}).ok());
    EXPECT_TRUE(consumer->SeekToBeginning({tp}).ok());
    absl::StatusOr<PollResult> polled = consumer->Poll(kSecond);
    ASSERT_TRUE(polled.ok()) << polled.status();
    EXPECT_EQ(polled->RecordCount(), 10u) << "no partial fetch, no empty poll";
    EXPECT_EQ(clock.NowNs(), 0) << "no slow fetch, no timeout";
    EXPECT_EQ(broker.faults_injected().Total(), 0u);
    EXPECT_GT(random.draws(), 5u) << "every fault was possible and drawn";

    // When a fault does happen, 0 picks its smallest effect.
    faults = BrokerFaults{};
    faults.partial_fetch_per_mille = 1000;
    faults.slow_fetch_per_mille = 1000;
    broker.SetFaults(faults);
    for (int i = 10; i < 20; ++i) EXPECT_TRUE(producer->Send(tp, "k", "v", i).ok());
    EXPECT_TRUE(producer->Flush(kSecond).ok());
    polled = consumer->Poll(kSecond);
    ASSERT_TRUE(polled.ok()) << polled.status();
    EXPECT_EQ(polled->RecordCount(), 9u) << "a partial fetch withholds one record";
    EXPECT_EQ(clock.NowNs(), 1) << "a slow fetch costs 1 ns more";
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

TEST(BrokerFaultsTest, SwarmAnsweredZeroTurnsOnOnlyItsOneGuaranteedFault) {
  ScriptedRandom zeros;
  const BrokerFaults f = BrokerFaults::Swarm(zeros, /*include_fatal=*/true);
  // Every coin says "off"; the profile must still have a fault, so the first kind is turned on.
  EXPECT_EQ(f.request_timeout_per_mille, 50u);
  BrokerFaults only = BrokerFaults{};
  only.request_timeout_per_mille = 50;
  EXPECT_EQ(f.ToString(), only.ToString());
  ScriptedRandom ones;
  for (int i = 0; i < 14; ++i) ones.Push(i % 2 == 0 ? 1 : 0);  // on, at the lowest rate
  const BrokerFaults all = BrokerFaults::Swarm(ones, /*include_fatal=*/true);
  EXPECT_EQ(all.request_timeout_per_mille, 1u);
  EXPECT_EQ(all.disconnect_per_mille, 1u);
  EXPECT_EQ(all.producer_fenced_per_mille, 1u);
}

TEST(BrokerFaultsTest, SwarmDrawsVariedProfilesWithAtLeastOneFault) {
  std::set<std::string> profiles;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    SeededRandom random(seed);
    const BrokerFaults f = BrokerFaults::Swarm(random);
    EXPECT_TRUE(f.any());
    EXPECT_EQ(f.producer_fenced_per_mille, 0u) << "fatal faults only when asked for";
    profiles.insert(f.ToString());
    SeededRandom again(seed);
    EXPECT_EQ(BrokerFaults::Swarm(again).ToString(), f.ToString()) << "a seed decides it";
  }
  EXPECT_GT(profiles.size(), 150u);
  bool fenced = false;
  for (uint64_t seed = 0; seed < 200 && !fenced; ++seed) {
    SeededRandom random(seed);
    fenced = BrokerFaults::Swarm(random, /*include_fatal=*/true).producer_fenced_per_mille > 0;
  }
  EXPECT_TRUE(fenced);
}

TEST(BrokerFaultsTest, FaultsAndCallsShowAsTraceMarks) {
  sim::SimOptions options;
  options.trace_mode = sim::TraceMode::kFull;
  std::vector<std::string> marks;
  size_t transport_points = 0;
  TestRun r = RunUnderSim(
      [&]() {
        sim::VirtualClock clock;
        ScriptedRandom random;
        BrokerFaults faults;
        faults.disconnect_per_mille = 999;  // missed only at the script's default 0
        FakeBroker broker(clock, &random, faults);
        EXPECT_TRUE(broker.CreateTopic("t", 1).ok());
        auto consumer = broker.NewRestoreConsumer(Config("c"));
        EXPECT_TRUE(consumer->Assign({{"t", 0}}).ok());
        random.Push(999);
        EXPECT_EQ(consumer->Poll(0).status().code(), absl::StatusCode::kUnavailable);
      },
      1, options);
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  marks = MarkTexts(*r.sim);
  for (const sim::TraceEvent& e : r.sim->trace().events()) {
    if (e.kind == sim::TraceKind::kPoint && e.op == SimOp::kTransport) ++transport_points;
  }
  EXPECT_THAT(marks, Contains("fault/disconnect"));
  EXPECT_THAT(marks, Contains("transport/restore.assign"));
  EXPECT_THAT(marks, Contains("transport/restore.poll"));
  EXPECT_GE(transport_points, 3u) << "new consumer, assign, poll: each a transport point";
  const auto fault = std::find(marks.begin(), marks.end(), "fault/disconnect");
  const auto poll = std::find(marks.begin(), marks.end(), "transport/restore.poll");
  EXPECT_LT(poll - marks.begin(), fault - marks.begin()) << "the call, then its fault";
}

// A scenario draws its fault profile after building the world, and heals every fault for its
// liveness phase: SetFaults turns faults on and off from then on.
TEST(BrokerFaultsTest, SetFaultsTurnsFaultsOnAndHealsThem) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    SeededRandom random(7);
    FakeBroker broker(clock, &random, BrokerFaults{});
    EXPECT_TRUE(broker.CreateTopic("t", 1).ok());
    auto admin = broker.NewAdmin("admin");
    for (int i = 0; i < 50; ++i) EXPECT_TRUE(admin->PartitionCount("t").ok());
    EXPECT_EQ(broker.faults_injected().Total(), 0u);
    BrokerFaults faults;
    faults.disconnect_per_mille = 1000;
    broker.SetFaults(faults);
    EXPECT_EQ(broker.faults().disconnect_per_mille, 1000u);
    EXPECT_FALSE(admin->PartitionCount("t").ok());
    faults = BrokerFaults{};
    faults.leader_unavailable_per_mille = 1000;
    broker.SetFaults(faults);
    EXPECT_FALSE(admin->EndOffsets({{"t", 0}}).ok());
    broker.SetFaults(BrokerFaults{});  // healed: leaderless partitions have leaders at once
    for (int i = 0; i < 50; ++i) {
      EXPECT_TRUE(admin->PartitionCount("t").ok());
      EXPECT_TRUE(admin->EndOffsets({{"t", 0}}).ok());
    }
    EXPECT_EQ(broker.faults_injected().disconnect, 1u);
    EXPECT_EQ(broker.faults_injected().leader_unavailable, 1u);
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

// The restore consumer's Assign looks its partitions up in the metadata: when that fails, the
// call fails before the assignment changes (positions and pauses kept), and the answer 0 of
// the draw is no fault.
TEST(BrokerFaultsTest, UnavailableMetadataFailsAnAssignBeforeItChangesAnything) {
  TestRun r = RunUnderSim([&]() {
    sim::VirtualClock clock;
    ScriptedRandom random;  // answers 0 to every draw
    FakeBroker broker(clock, &random, BrokerFaults{});
    const TopicPartition t0{"t", 0};
    const TopicPartition t1{"t", 1};
    EXPECT_TRUE(broker.CreateTopic("t", 2).ok());
    auto consumer = broker.NewRestoreConsumer(Config("c"));
    ASSERT_TRUE(consumer->Assign({t0}).ok());
    ASSERT_TRUE(consumer->Seek(t0, 0).ok());
    ASSERT_TRUE(consumer->Pause({t0}).ok());
    EXPECT_EQ(random.draws(), 0u) << "off: nothing drawn";
    BrokerFaults faults;
    faults.metadata_unavailable_per_mille = 1000;
    broker.SetFaults(faults);
    const absl::Status s = consumer->Assign({t0, t1});
    EXPECT_TRUE(absl::IsUnavailable(s)) << s;
    EXPECT_TRUE(IsInjected(s) && IsRetryable(s)) << s;
    EXPECT_EQ(consumer->Assignment(), std::vector<TopicPartition>{t0});
    EXPECT_EQ(*consumer->Position(t0), 0);
    EXPECT_EQ(consumer->Paused(), std::vector<TopicPartition>{t0});
    EXPECT_TRUE(consumer->Seek(t0, 0).ok()) << "Seek is local: never failed so";
    EXPECT_EQ(broker.faults_injected().metadata_unavailable, 1u);
    faults.metadata_unavailable_per_mille = 999;
    broker.SetFaults(faults);
    EXPECT_TRUE(consumer->Assign({t0, t1}).ok()) << "the answer 0 is no fault";
  });
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
}

}  // namespace
}  // namespace restoresim::fakes
