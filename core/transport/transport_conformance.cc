// The conformance suite, part 1: the restore consumer (assign, seek, poll, pause, positions,
// out of range), the admin client and the producer, and bad calls. Part 2 (consumer groups)
// is transport_conformance_group.cc.
#include "core/transport/transport_conformance.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/transport/transport_conformance_helpers.h"

namespace restoresim {
namespace {

using conformance::CreateTopic;
using conformance::MakeRecords;
using conformance::PartitionsOf;
using conformance::Polled;
using conformance::PollOf;
using conformance::PollRecords;
using conformance::PollUntil;
using conformance::Produce;
using conformance::ValueOr;
using Offsets = std::map<TopicPartition, int64_t>;

ConsumerConfig RestoreConfig(const std::string& client_id, int32_t max_poll_records = 1000) {
  ConsumerConfig config;
  config.client_id = client_id;
  config.max_poll_records = max_poll_records;
  config.auto_offset_reset = OffsetReset::kNone;  // what Kafka Streams' restore consumer uses
  return config;
}

TEST_P(TransportConformanceTest, AssignSeekPollRoundTripsRecordsInOffsetOrder) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("roundtrip");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 1));
    const TopicPartition tp{topic, 0};
    auto producer = env().transport().NewProducer("conformance-producer");
    const auto sent = MakeRecords("rt", 20, /*tombstone_every=*/4);
    EXPECT_EQ(Produce(env(), *producer, tp, sent), (Offsets{{tp, 19}}));

    auto consumer = env().transport().NewRestoreConsumer(RestoreConfig("rt-restore"));
    ASSERT_TRUE(consumer->Assign({tp}).ok());
    EXPECT_EQ(consumer->Assignment(), std::vector<TopicPartition>{tp});
    ASSERT_TRUE(consumer->Seek(tp, 0).ok());
    Polled polled = PollRecords(env(), PollOf(*consumer), 1000, sent.size());
    const std::vector<ConsumerRecord>& got = polled.records[tp];
    ASSERT_EQ(got.size(), sent.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].offset, static_cast<int64_t>(i));
      EXPECT_EQ(got[i].key, sent[i].key);
      EXPECT_EQ(got[i].value, sent[i].value) << "offset " << i << " (every 4th is a tombstone)";
      EXPECT_EQ(got[i].timestamp_ms, sent[i].timestamp_ms);
    }
    EXPECT_EQ(ValueOr(consumer->Position(tp)), 20) << "the position is past the last record";
  });
}

TEST_P(TransportConformanceTest, AssignKeepsThePositionsOfPartitionsThatStay) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("reassign");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 2));
    const TopicPartition p0{topic, 0};
    const TopicPartition p1{topic, 1};
    auto producer = env().transport().NewProducer("conformance-producer");
    Produce(env(), *producer, p0, MakeRecords("ra", 5));
    auto consumer = env().transport().NewRestoreConsumer(RestoreConfig("ra-restore"));
    ASSERT_TRUE(consumer->Assign({p0}).ok());
    ASSERT_TRUE(consumer->Seek(p0, 3).ok());
    ASSERT_TRUE(consumer->Assign({p0, p1}).ok());
    EXPECT_EQ(ValueOr(consumer->Position(p0)), 3);
    ASSERT_TRUE(consumer->Assign({p1}).ok());
    EXPECT_EQ(consumer->Assignment(), std::vector<TopicPartition>{p1});
    EXPECT_EQ(consumer->Seek(p0, 0).code(), absl::StatusCode::kFailedPrecondition)
        << "a removed partition is no longer assigned";
    ASSERT_TRUE(consumer->Unassign().ok());
    EXPECT_TRUE(consumer->Assignment().empty());
  });
}

TEST_P(TransportConformanceTest, SeekToBeginningAndEndSetThePosition) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("seekto");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 1));
    const TopicPartition tp{topic, 0};
    auto producer = env().transport().NewProducer("conformance-producer");
    Produce(env(), *producer, tp, MakeRecords("st", 10));
    auto consumer = env().transport().NewRestoreConsumer(RestoreConfig("st-restore"));
    ASSERT_TRUE(consumer->Assign({tp}).ok());
    ASSERT_TRUE(consumer->SeekToEnd({tp}).ok());
    EXPECT_EQ(ValueOr(consumer->Position(tp)), 10);
    ASSERT_TRUE(consumer->SeekToBeginning({tp}).ok());
    EXPECT_EQ(ValueOr(consumer->Position(tp)), 0);
    ASSERT_TRUE(consumer->SeekToEnd({tp}).ok());
    EXPECT_EQ(ValueOr(consumer->Position(tp)), 10);
    Produce(env(), *producer, tp, MakeRecords("st2", 3));
    Polled polled = PollRecords(env(), PollOf(*consumer), 1000, 3);
    ASSERT_EQ(polled.records[tp].size(), 3u);
    EXPECT_EQ(polled.records[tp].front().offset, 10) << "only what came after the end";
    EXPECT_EQ(polled.records[tp].front().key, "st2-key-0");
  });
}

TEST_P(TransportConformanceTest, PollsReturnAtMostMaxPollRecords) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("maxpoll");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 2));
    auto producer = env().transport().NewProducer("conformance-producer");
    const std::vector<TopicPartition> both = PartitionsOf(topic, 2);
    for (const TopicPartition& tp : both) Produce(env(), *producer, tp, MakeRecords("mp", 10));
    constexpr int32_t kMaxPollRecords = 3;
    auto consumer =
        env().transport().NewRestoreConsumer(RestoreConfig("mp-restore", kMaxPollRecords));
    ASSERT_TRUE(consumer->Assign(both).ok());
    ASSERT_TRUE(consumer->SeekToBeginning(both).ok());
    Polled polled = PollRecords(env(), PollOf(*consumer), kMaxPollRecords, 20);
    EXPECT_GE(polled.polls, 7) << "20 records, at most 3 a poll";
    for (const TopicPartition& tp : both) EXPECT_EQ(polled.records[tp].size(), 10u);
  });
}

TEST_P(TransportConformanceTest, PausedPartitionsReturnNothingUntilResumed) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("pause");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 2));
    const TopicPartition p0{topic, 0};
    const TopicPartition p1{topic, 1};
    auto producer = env().transport().NewProducer("conformance-producer");
    Produce(env(), *producer, p0, MakeRecords("p0", 5));
    Produce(env(), *producer, p1, MakeRecords("p1", 5));
    auto consumer = env().transport().NewRestoreConsumer(RestoreConfig("pause-restore"));
    ASSERT_TRUE(consumer->Assign({p0, p1}).ok());
    ASSERT_TRUE(consumer->SeekToBeginning({p0, p1}).ok());
    ASSERT_TRUE(consumer->Pause({p0}).ok());
    EXPECT_EQ(consumer->Paused(), std::vector<TopicPartition>{p0});
    // Every record of p1, then a few more polls: p0 stays silent throughout.
    Polled polled = PollUntil(env(), PollOf(*consumer), 1000, [&](const Polled& p) {
      return p.records.contains(p1) && p.records.at(p1).size() >= 5 && p.polls >= 3;
    });
    EXPECT_EQ(polled.records[p1].size(), 5u);
    EXPECT_FALSE(polled.records.contains(p0)) << "a paused partition returned records";
    ASSERT_TRUE(consumer->Resume({p0}).ok());
    EXPECT_TRUE(consumer->Paused().empty());
    polled = PollRecords(env(), PollOf(*consumer), 1000, 5);
    EXPECT_EQ(polled.records[p0].size(), 5u);
    EXPECT_EQ(polled.records[p0].front().offset, 0);
  });
}

TEST_P(TransportConformanceTest, AdminReportsEndAndBeginningOffsets) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("offsets");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 3));
    const std::vector<TopicPartition> all = PartitionsOf(topic, 3);
    auto producer = env().transport().NewProducer("conformance-producer");
    Produce(env(), *producer, all[0], MakeRecords("o0", 7));
    Produce(env(), *producer, all[2], MakeRecords("o2", 2));
    Clock& clock = env().clock();
    absl::StatusOr<Offsets> end = RetryUntilOk(clock, [&]() { return admin->EndOffsets(all); });
    ASSERT_TRUE(end.ok()) << end.status();
    EXPECT_EQ(*end, (Offsets{{all[0], 7}, {all[1], 0}, {all[2], 2}}));
    absl::StatusOr<Offsets> begin =
        RetryUntilOk(clock, [&]() { return admin->BeginningOffsets(all); });
    ASSERT_TRUE(begin.ok()) << begin.status();
    EXPECT_EQ(*begin, (Offsets{{all[0], 0}, {all[1], 0}, {all[2], 0}}));
  });
}

TEST_P(TransportConformanceTest, CheckpointBelowDeletedRecordsIsOutOfRangeUntilSought) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("truncated");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 1));
    const TopicPartition tp{topic, 0};
    auto producer = env().transport().NewProducer("conformance-producer");
    Produce(env(), *producer, tp, MakeRecords("tr", 10));
    auto consumer = env().transport().NewRestoreConsumer(RestoreConfig("tr-restore"));
    ASSERT_TRUE(consumer->Assign({tp}).ok());
    ASSERT_TRUE(consumer->Seek(tp, 2).ok());  // a checkpoint
    Clock& clock = env().clock();
    ASSERT_TRUE(RetryUntilOk(clock, [&]() { return admin->DeleteRecords({{tp, 5}}); }).ok());
    absl::StatusOr<Offsets> begin =
        RetryUntilOk(clock, [&]() { return admin->BeginningOffsets({tp}); });
    ASSERT_TRUE(begin.ok()) << begin.status();
    EXPECT_EQ(*begin, (Offsets{{tp, 5}}));

    Polled polled = PollUntil(env(), PollOf(*consumer), 1000,
                              [](const Polled& p) { return !p.out_of_range.empty(); });
    EXPECT_EQ(polled.out_of_range, std::vector<TopicPartition>{tp});
    EXPECT_EQ(polled.total(), 0u) << "nothing is read below the log start";

    ASSERT_TRUE(consumer->SeekToBeginning({tp}).ok());
    EXPECT_EQ(ValueOr(consumer->Position(tp)), 5);
    polled = PollRecords(env(), PollOf(*consumer), 1000, 5);
    ASSERT_FALSE(polled.records[tp].empty());
    EXPECT_EQ(polled.records[tp].front().offset, 5);
    EXPECT_TRUE(polled.out_of_range.empty());

    ASSERT_TRUE(consumer->Seek(tp, 100).ok());  // past the end is out of range too
    polled = PollUntil(env(), PollOf(*consumer), 1000,
                       [](const Polled& p) { return !p.out_of_range.empty(); });
    EXPECT_EQ(polled.out_of_range, std::vector<TopicPartition>{tp});
  });
}

TEST_P(TransportConformanceTest, ProducerFlushReturnsTheLastOffsetPerPartition) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("produce");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 2));
    const TopicPartition p0{topic, 0};
    const TopicPartition p1{topic, 1};
    auto producer = env().transport().NewProducer("conformance-producer");
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(producer->Send(p0, "k", "v", i).ok());
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(producer->Send(p1, "k", std::nullopt, i).ok());
    Clock& clock = env().clock();
    auto flush = [&]() { return producer->Flush(10 * kSecond); };
    absl::StatusOr<Offsets> flushed = RetryUntilOk(clock, flush);
    ASSERT_TRUE(flushed.ok()) << flushed.status();
    EXPECT_EQ(*flushed, (Offsets{{p0, 2}, {p1, 1}}));
    ASSERT_TRUE(producer->Send(p0, "k", "v", 3).ok());
    flushed = RetryUntilOk(clock, flush);
    ASSERT_TRUE(flushed.ok()) << flushed.status();
    EXPECT_EQ(*flushed, (Offsets{{p0, 3}})) << "only partitions written since the last flush";
    flushed = RetryUntilOk(clock, flush);
    ASSERT_TRUE(flushed.ok()) << flushed.status();
    EXPECT_TRUE(flushed->empty());
    absl::StatusOr<Offsets> end = RetryUntilOk(clock, [&]() {
      return admin->EndOffsets({p0, p1});
    });
    ASSERT_TRUE(end.ok()) << end.status();
    EXPECT_EQ(*end, (Offsets{{p0, 4}, {p1, 2}}));
  });
}

TEST_P(TransportConformanceTest, BadCallsGiveClearErrors) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("bad");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 1));
    const TopicPartition tp{topic, 0};
    auto consumer = env().transport().NewRestoreConsumer(RestoreConfig("bad-restore"));
    Clock& clock = env().clock();
    absl::StatusOr<PollResult> nothing =
        RetryUntilOk(clock, [&]() { return consumer->Poll(100 * kMillisecond); });
    ASSERT_TRUE(nothing.ok()) << "a poll with nothing assigned: " << nothing.status();
    EXPECT_EQ(nothing->RecordCount(), 0u);
    EXPECT_TRUE(nothing->out_of_range.empty());
    constexpr auto kMisuse = absl::StatusCode::kFailedPrecondition;
    EXPECT_EQ(consumer->Seek(tp, 0).code(), kMisuse) << "seek of an unassigned partition";
    EXPECT_EQ(consumer->Position(tp).status().code(), kMisuse);
    EXPECT_EQ(consumer->Pause({tp}).code(), kMisuse);
    EXPECT_EQ(consumer->SeekToBeginning({tp}).code(), kMisuse);
    ASSERT_TRUE(consumer->Assign({tp}).ok());
    EXPECT_EQ(consumer->Seek(tp, -1).code(), absl::StatusCode::kInvalidArgument);
    const std::string unknown = env().UniqueTopic("never-created");
    absl::StatusOr<int32_t> count =
        RetryUntilOk(clock, [&]() { return admin->PartitionCount(unknown); });
    EXPECT_EQ(count.status().code(), absl::StatusCode::kNotFound) << count.status();
    absl::StatusOr<Offsets> end = RetryUntilOk(clock, [&]() {
      return admin->EndOffsets({TopicPartition{unknown, 0}});
    });
    EXPECT_EQ(end.status().code(), absl::StatusCode::kNotFound) << end.status();
  });
}

TEST_P(TransportConformanceTest, CallsAfterCloseFail) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("closed");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 1));
    const TopicPartition tp{topic, 0};
    constexpr auto kMisuse = absl::StatusCode::kFailedPrecondition;
    auto consumer = env().transport().NewRestoreConsumer(RestoreConfig("closed-restore"));
    ASSERT_TRUE(consumer->Assign({tp}).ok());
    consumer->Close();
    EXPECT_EQ(consumer->Poll(0).status().code(), kMisuse);
    EXPECT_EQ(consumer->Assign({tp}).code(), kMisuse);
    EXPECT_EQ(consumer->Seek(tp, 0).code(), kMisuse);
    consumer->Close();  // idempotent

    auto producer = env().transport().NewProducer("closed-producer");
    producer->Close();
    EXPECT_EQ(producer->Send(tp, "k", "v", 0).code(), kMisuse);
    EXPECT_EQ(producer->Flush(kSecond).status().code(), kMisuse);

    ConsumerConfig config;
    config.client_id = "closed-main";
    auto main = env().transport().NewMainConsumer(env().UniqueGroup("closed"), config);
    main->Close();
    EXPECT_EQ(main->Subscribe({topic}, nullptr).code(), kMisuse);
    EXPECT_EQ(main->Poll(0).status().code(), kMisuse);
  });
}

}  // namespace
}  // namespace restoresim
