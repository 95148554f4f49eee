// The conformance suite, part 2: consumer groups — committed offsets and the rebalance
// callbacks of the default assignor as members join and leave, pausing from a callback, and
// commits of partitions the member does not own. Each member polls on its own
// thread, as a real client must for a rebalance to complete.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/sync/mutex.h"
#include "core/sync/thread.h"
#include "core/transport/transport_conformance.h"
#include "core/transport/transport_conformance_helpers.h"

namespace restoresim {
namespace {

using conformance::CreateTopic;
using conformance::MakeRecords;
using conformance::PartitionsOf;
using conformance::Polled;
using conformance::PollOf;
using conformance::PollRecords;
using conformance::Produce;
using conformance::RecordingListener;
using Offsets = std::map<TopicPartition, int64_t>;
using Assignments = std::vector<std::vector<TopicPartition>>;
using Kind = RecordingListener::Event::Kind;

ConsumerConfig MainConfig(const std::string& client_id, OffsetReset reset) {
  ConsumerConfig config;
  config.client_id = client_id;
  config.auto_offset_reset = reset;
  return config;
}

// Polls every consumer on its own thread until `settled` holds for their latest assignments
// (as each consumer reports it after a poll), or each has made poll_attempts_max polls.
bool PollUntilSettled(TransportTestEnv& env, const std::vector<MainConsumer*>& consumers,
                      const std::function<bool(const Assignments&)>& settled) {
  Mutex mu("conformance.settle");
  Assignments latest(consumers.size());
  bool done = false;
  std::vector<std::unique_ptr<Thread>> pollers;
  for (size_t i = 0; i < consumers.size(); ++i) {
    pollers.push_back(std::make_unique<Thread>(fmt::format("poller-{}", i), [&, i]() {
      for (int poll = 0; poll < env.poll_attempts_max(); ++poll) {
        {
          MutexLock lock(mu);
          if (done) return;
        }
        absl::StatusOr<PollResult> result = consumers[i]->Poll(env.poll_timeout_ns());
        const bool fatal = !result.ok() && !IsRetryable(result.status());
        if (fatal) ADD_FAILURE() << env.Describe() << ": poll: " << result.status();
        std::vector<TopicPartition> assignment = consumers[i]->Assignment();
        std::sort(assignment.begin(), assignment.end());  // the port does not promise an order
        MutexLock lock(mu);
        latest[i] = std::move(assignment);
        done = done || fatal || settled(latest);
      }
    }));
  }
  for (auto& poller : pollers) poller->Join();
  MutexLock lock(mu);
  return settled(latest);
}

bool Disjoint(const std::vector<TopicPartition>& a, const std::vector<TopicPartition>& b) {
  std::vector<TopicPartition> common;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
  return common.empty();
}

// Two members that split `all` between them, disjoint, both with something.
bool SplitBetweenTwo(const Assignments& a, const std::vector<TopicPartition>& all) {
  std::vector<TopicPartition> both;
  std::merge(a[0].begin(), a[0].end(), a[1].begin(), a[1].end(), std::back_inserter(both));
  return !a[0].empty() && !a[1].empty() && Disjoint(a[0], a[1]) && both == all;
}

// Whether a member saw no revocation or loss of anything before its first assignment.
bool AssignedBeforeAnyRevocation(const RecordingListener& listener) {
  for (const RecordingListener::Event& e : listener.events()) {
    if (e.kind == Kind::kAssigned) return true;
    if (!e.partitions.empty()) return false;
  }
  return false;
}

TEST_P(TransportConformanceTest, CommittedOffsetsAreReadByAdminAndConsumerAndResumeTheGroup) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("commit");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 2));
    const std::vector<TopicPartition> all = PartitionsOf(topic, 2);
    auto producer = env().transport().NewProducer("conformance-producer");
    Produce(env(), *producer, all[0], MakeRecords("c0", 10));
    Produce(env(), *producer, all[1], MakeRecords("c1", 4));
    const std::string group = env().UniqueGroup("commit");
    Clock& clock = env().clock();
    absl::StatusOr<Offsets> none =
        RetryUntilOk(clock, [&]() { return admin->CommittedOffsets(group, all); });
    ASSERT_TRUE(none.ok()) << none.status();
    EXPECT_TRUE(none->empty()) << "a group without commits has no offsets";

    auto first =
        env().transport().NewMainConsumer(group, MainConfig("c-1", OffsetReset::kEarliest));
    ASSERT_TRUE(first->Subscribe({topic}, nullptr).ok());
    ASSERT_TRUE(
        PollUntilSettled(env(), {first.get()}, [&](const Assignments& a) { return a[0] == all; }));
    const Offsets commit{{all[0], 7}, {all[1], 2}};
    ASSERT_TRUE(RetryUntilOk(clock, [&]() { return first->CommitSync(commit); }).ok());
    absl::StatusOr<Offsets> read =
        RetryUntilOk(clock, [&]() { return admin->CommittedOffsets(group, all); });
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read, commit);
    read = RetryUntilOk(clock, [&]() { return first->Committed(all); });
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read, commit);
    first->Close();

    // A new member without an offset reset policy starts where the group committed.
    auto second = env().transport().NewMainConsumer(group, MainConfig("c-2", OffsetReset::kNone));
    ASSERT_TRUE(second->Subscribe({topic}, nullptr).ok());
    Polled polled = PollRecords(env(), PollOf(*second), 1000, 3 + 2);
    ASSERT_FALSE(polled.records[all[0]].empty());
    ASSERT_FALSE(polled.records[all[1]].empty());
    EXPECT_EQ(polled.records[all[0]].front().offset, 7);
    EXPECT_EQ(polled.records[all[1]].front().offset, 2);
  });
}

TEST_P(TransportConformanceTest, FirstMemberIsAssignedEveryPartition) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("onemember");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 4));
    const std::vector<TopicPartition> all = PartitionsOf(topic, 4);
    RecordingListener listener;
    auto member = env().transport().NewMainConsumer(env().UniqueGroup("one"),
                                                    MainConfig("m-1", OffsetReset::kEarliest));
    ASSERT_TRUE(member->Subscribe({topic}, &listener).ok());
    EXPECT_FALSE(member->MemberId().empty());
    ASSERT_TRUE(
        PollUntilSettled(env(), {member.get()}, [&](const Assignments& a) { return a[0] == all; }))
        << env().Describe() << ": " << listener.ToString();
    ASSERT_TRUE(AssignedBeforeAnyRevocation(listener)) << listener.ToString();
    const RecordingListener::Event& last = listener.events().back();
    EXPECT_EQ(last.kind, Kind::kAssigned) << listener.ToString();
    EXPECT_EQ(last.partitions, all) << listener.ToString();
  });
}

// Two members of one group over a 4-partition topic, split between them; then the second
// leaves. The callbacks must say so, in order.
TEST_P(TransportConformanceTest, SecondMemberJoiningSplitsThePartitionsAndLeavingHandsThemBack) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("twomembers");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 4));
    const std::vector<TopicPartition> all = PartitionsOf(topic, 4);
    const std::string group = env().UniqueGroup("two");
    RecordingListener first_listener;
    RecordingListener second_listener;
    auto first =
        env().transport().NewMainConsumer(group, MainConfig("m-1", OffsetReset::kEarliest));
    ASSERT_TRUE(first->Subscribe({topic}, &first_listener).ok());
    ASSERT_TRUE(
        PollUntilSettled(env(), {first.get()}, [&](const Assignments& a) { return a[0] == all; }));
    const size_t first_events_alone = first_listener.events().size();

    auto second =
        env().transport().NewMainConsumer(group, MainConfig("m-2", OffsetReset::kEarliest));
    ASSERT_TRUE(second->Subscribe({topic}, &second_listener).ok());
    EXPECT_NE(second->MemberId(), first->MemberId());
    ASSERT_TRUE(PollUntilSettled(env(), {first.get(), second.get()},
                                 [&](const Assignments& a) { return SplitBetweenTwo(a, all); }))
        << env().Describe() << ": first " << first_listener.ToString() << "; second "
        << second_listener.ToString();
    // The first member gave partitions up (revoked) before it was told its new assignment.
    const auto& events = first_listener.events();
    auto revoked = std::find_if(events.begin() + static_cast<ptrdiff_t>(first_events_alone),
                                events.end(), [](const RecordingListener::Event& e) {
                                  return e.kind == Kind::kRevoked && !e.partitions.empty();
                                });
    ASSERT_NE(revoked, events.end()) << first_listener.ToString();
    EXPECT_TRUE(std::any_of(revoked, events.end(), [](const RecordingListener::Event& e) {
      return e.kind == Kind::kAssigned;
    })) << first_listener.ToString();
    EXPECT_TRUE(AssignedBeforeAnyRevocation(second_listener)) << second_listener.ToString();

    second->Close();
    ASSERT_TRUE(
        PollUntilSettled(env(), {first.get()}, [&](const Assignments& a) { return a[0] == all; }))
        << env().Describe() << ": " << first_listener.ToString();
    EXPECT_EQ(first_listener.events().back().kind, Kind::kAssigned) << first_listener.ToString();
  });
}

// Pauses every partition it is given, from inside the callback, as Kafka Streams pauses the
// input of tasks that are not restored yet.
class PausingListener final : public RebalanceListener {
 public:
  explicit PausingListener(MainConsumer*& consumer) : consumer_(consumer) {}
  void OnPartitionsRevoked(const std::vector<TopicPartition>&) override {}
  void OnPartitionsAssigned(const Assignment& assignment) override {
    if (!assignment.partitions.empty()) pause_status_ = consumer_->Pause(assignment.partitions);
  }
  void OnPartitionsLost(const std::vector<TopicPartition>&) override {}
  const absl::Status& pause_status() const { return pause_status_; }

 private:
  MainConsumer*& consumer_;
  absl::Status pause_status_;
};

// Found against Kafka: librdkafka fetches a newly assigned partition from the committed offset
// before the callback's pause takes effect; the records it fetched meanwhile must not be lost
// when the partition is resumed.
TEST_P(TransportConformanceTest, PausedInTheAssignedCallbackThenResumedLosesNothing) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("pauseassigned");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 2));
    const std::vector<TopicPartition> all = PartitionsOf(topic, 2);
    auto producer = env().transport().NewProducer("conformance-producer");
    Produce(env(), *producer, all[0], MakeRecords("pa0", 6));
    Produce(env(), *producer, all[1], MakeRecords("pa1", 4));
    MainConsumer* raw = nullptr;
    PausingListener listener(raw);
    auto member = env().transport().NewMainConsumer(env().UniqueGroup("pauseassigned"),
                                                    MainConfig("pa-1", OffsetReset::kEarliest));
    raw = member.get();
    ASSERT_TRUE(member->Subscribe({topic}, &listener).ok());
    ASSERT_TRUE(
        PollUntilSettled(env(), {member.get()}, [&](const Assignments& a) { return a[0] == all; }));
    ASSERT_TRUE(listener.pause_status().ok()) << listener.pause_status();
    Polled paused = conformance::PollUntil(env(), PollOf(*member), 1000,
                                           [](const Polled& p) { return p.polls >= 5; });
    EXPECT_EQ(paused.total(), 0u) << "paused partitions returned records";
    ASSERT_TRUE(member->Resume(all).ok());
    Polled polled = PollRecords(env(), PollOf(*member), 1000, 6 + 4);
    ASSERT_FALSE(polled.records[all[0]].empty());
    ASSERT_FALSE(polled.records[all[1]].empty());
    EXPECT_EQ(polled.records[all[0]].front().offset, 0);
    EXPECT_EQ(polled.records[all[1]].front().offset, 0);
  });
}

// The port refuses a commit of a partition the member does not own (a real broker would take
// it from any member of the current generation: the Kafka adapter refuses it itself).
TEST_P(TransportConformanceTest, CommitOfAPartitionNotOwnedIsRefused) {
  env().Run([&]() {
    auto admin = env().transport().NewAdmin("conformance-admin");
    const std::string topic = env().UniqueTopic("notowned");
    ASSERT_TRUE(CreateTopic(env(), *admin, topic, 1));
    const std::string other = env().UniqueTopic("notsubscribed");
    ASSERT_TRUE(CreateTopic(env(), *admin, other, 1));
    const std::string group = env().UniqueGroup("notowned");
    auto member =
        env().transport().NewMainConsumer(group, MainConfig("no-1", OffsetReset::kEarliest));
    ASSERT_TRUE(member->Subscribe({topic}, nullptr).ok());
    const std::vector<TopicPartition> mine = PartitionsOf(topic, 1);
    ASSERT_TRUE(PollUntilSettled(env(), {member.get()},
                                 [&](const Assignments& a) { return a[0] == mine; }));
    absl::Status refused = member->CommitSync({{TopicPartition{other, 0}, 1}});
    EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
    const std::vector<TopicPartition> others = {TopicPartition{other, 0}};
    absl::StatusOr<Offsets> committed =
        RetryUntilOk(env().clock(), [&]() { return admin->CommittedOffsets(group, others); });
    ASSERT_TRUE(committed.ok()) << committed.status();
    EXPECT_TRUE(committed->empty()) << "the refused commit reached the group";
  });
}

}  // namespace
}  // namespace restoresim
