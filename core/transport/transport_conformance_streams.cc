// The conformance suite, part 4: streams groups (KIP-1071, GroupProtocol::kStreams). The broker
// (the fake's StreamsGroupCoordinator, or Kafka 4.4's group coordinator) places active and
// standby tasks of the count topology (subtopology 0, task p reads partition p); the members'
// callbacks must show it. The suite assumes the streams-group settings of the test cluster
// (tools/kafka/broker), which the fake's env sets too: one standby replica per task, heartbeats
// every second, a 10 s session. Each member polls on its own thread.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
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
using conformance::PartitionsOf;
using conformance::ToString;
using Offsets = std::map<TopicPartition, int64_t>;

// The callbacks of every member of one test, in the order they ran (members poll on their own
// threads; the log is shared), and what each member holds after its last callback.
class StreamsLog {
 public:
  struct Held {
    std::vector<TopicPartition> active, standby;  // sorted
    int losses = 0;
  };
  void Add(const std::string& member, const std::string& what,
           std::vector<TopicPartition> partitions) {
    std::sort(partitions.begin(), partitions.end());
    MutexLock lock(mu_);
    lines_.push_back(fmt::format("{} {}{}", member, what, ToString(partitions)));
    Held& held = held_[member];
    if (what == "assigned") held.active = partitions;
    if (what == "standby") held.standby = partitions;
    if (what == "lost") {
      held = Held{.losses = held.losses + 1};
    }
  }
  std::vector<std::string> lines() const {
    MutexLock lock(mu_);
    return lines_;
  }
  Held held(const std::string& member) const {
    MutexLock lock(mu_);
    auto it = held_.find(member);
    return it == held_.end() ? Held{} : it->second;
  }
  // Whether `line` appears before `later` (both present).
  bool Before(const std::string& line, const std::string& later) const {
    MutexLock lock(mu_);
    auto a = std::find(lines_.begin(), lines_.end(), line);
    auto b = std::find(lines_.begin(), lines_.end(), later);
    return a != lines_.end() && b != lines_.end() && a < b;
  }

 private:
  mutable Mutex mu_{"conformance.streams_log"};
  std::vector<std::string> lines_;
  std::map<std::string, Held> held_;
};

class StreamsListener final : public RebalanceListener {
 public:
  StreamsListener(StreamsLog& log, std::string member) : log_(log), member_(std::move(member)) {}
  void OnPartitionsRevoked(const std::vector<TopicPartition>& partitions) override {
    log_.Add(member_, "revoked", partitions);
  }
  void OnPartitionsAssigned(const Assignment& assignment) override {
    log_.Add(member_, "assigned", assignment.partitions);
    log_.Add(member_, "standby", assignment.standby_partitions);
  }
  void OnPartitionsLost(const std::vector<TopicPartition>& partitions) override {
    log_.Add(member_, "lost", partitions);
  }

 private:
  StreamsLog& log_;
  const std::string member_;
};

// One member: its consumer (in its own process) and its listener.
struct Member {
  std::string name;
  std::unique_ptr<MainConsumer> consumer;
  std::unique_ptr<StreamsListener> listener;
};

Member Join(TransportTestEnv& env, StreamsLog& log, const std::string& group,
            const std::string& topic, const std::string& name,
            const std::string& store = "counts") {
  ConsumerConfig config;
  config.client_id = name;
  config.auto_offset_reset = OffsetReset::kEarliest;
  config.group_protocol = GroupProtocol::kStreams;
  config.process_id = group + "-process-" + name;
  config.changelog_topics = {group + "-" + store + "-changelog"};
  Member m{name, env.transport().NewMainConsumer(group, config),
           std::make_unique<StreamsListener>(log, name)};
  absl::Status s = m.consumer->Subscribe({topic}, m.listener.get());
  EXPECT_TRUE(s.ok()) << env.Describe() << ": subscribe " << name << ": " << s;
  return m;
}

// Polls each member on its own thread until `settled` holds (checked after every poll), or
// each made poll_attempts_max polls.
bool PollUntil(TransportTestEnv& env, const std::vector<Member*>& members,
               const std::function<bool()>& settled) {
  Mutex mu("conformance.streams_settle");
  bool done = false;
  std::vector<std::unique_ptr<Thread>> pollers;
  for (Member* m : members) {
    pollers.push_back(std::make_unique<Thread>("poller-" + m->name, [&, m]() {
      for (int poll = 0; poll < env.poll_attempts_max(); ++poll) {
        {
          MutexLock lock(mu);
          if (done) return;
        }
        absl::StatusOr<PollResult> result = m->consumer->Poll(env.poll_timeout_ns());
        const bool fatal = !result.ok() && !IsRetryable(result.status());
        if (fatal) {
          ADD_FAILURE() << env.Describe() << ": poll " << m->name << ": " << result.status();
        }
        const bool now_settled = settled();
        MutexLock lock(mu);
        done = done || fatal || now_settled;
      }
    }));
  }
  for (auto& poller : pollers) poller->Join();
  return settled();
}

// Two members split the tasks, each holding a standby of each of the other's actives.
bool SplitWithStandbys(const StreamsLog& log, const std::vector<TopicPartition>& all) {
  const StreamsLog::Held a = log.held("a");
  const StreamsLog::Held b = log.held("b");
  std::vector<TopicPartition> both;
  std::merge(a.active.begin(), a.active.end(), b.active.begin(), b.active.end(),
             std::back_inserter(both));
  return a.active.size() == all.size() / 2 && both == all && a.standby == b.active &&
         b.standby == a.active;
}

class StreamsGroupConformance {
 public:
  explicit StreamsGroupConformance(TransportTestEnv& env) : env_(env) {}
  // Creates the topic of `partitions`, then a joins and settles with every task active.
  bool Start(int32_t partitions) {
    auto admin = env_.transport().NewAdmin("conformance-admin");
    topic_ = env_.UniqueTopic("streams");
    group_ = env_.UniqueGroup("streams");
    all_ = PartitionsOf(topic_, partitions);
    if (!CreateTopic(env_, *admin, topic_, partitions)) return false;
    a_ = Join(env_, log_, group_, topic_, "a");
    return PollUntil(env_, {&a_}, [&]() { return log_.held("a").active == all_; });
  }
  bool AddB() {
    b_ = Join(env_, log_, group_, topic_, "b");
    return PollUntil(env_, {&a_, &b_}, [&]() { return SplitWithStandbys(log_, all_); });
  }
  std::string Lines() const { return fmt::format("{}", fmt::join(log_.lines(), "; ")); }

  TransportTestEnv& env_;
  StreamsLog log_;
  std::string topic_, group_;
  std::vector<TopicPartition> all_;
  Member a_, b_;
};

TEST_P(TransportConformanceTest, AFirstStreamsMemberGetsEveryTaskActiveAndNoStandby) {
  env().Run([&]() {
    StreamsGroupConformance t(env());
    ASSERT_TRUE(t.Start(2)) << env().Describe() << ": " << t.Lines();
    EXPECT_TRUE(t.log_.held("a").standby.empty()) << "one process: no room for a standby";
    // Kafka 4.4 answers the first join with nothing while it creates the changelog (status
    // MISSING_INTERNAL_TOPICS), so the member may first be assigned nothing; never a revocation.
    for (const std::string& line : t.log_.lines()) {
      EXPECT_TRUE(line == "a assigned[]" || line == "a standby[]" ||
                  line == "a assigned" + ToString(t.all_))
          << env().Describe() << ": " << t.Lines();
    }
    t.a_.consumer->Close();
  });
}

// With one standby replica a second member gets half the actives and a standby of each of the
// first's, and is given a task only after the first revoked it (Kafka's reconciliation).
TEST_P(TransportConformanceTest, ASecondStreamsMemberGetsHalfTheTasksOnlyAfterTheirRevocation) {
  env().Run([&]() {
    StreamsGroupConformance t(env());
    ASSERT_TRUE(t.Start(2)) << env().Describe() << ": " << t.Lines();
    ASSERT_TRUE(t.AddB()) << env().Describe() << ": " << t.Lines();
    const TopicPartition moved = t.log_.held("b").active.at(0);
    const std::string given = "b assigned" + ToString({moved});
    if (!env().faults_on()) {  // with faults a may be fenced instead (a loss, found later)
      EXPECT_TRUE(t.log_.Before("a revoked" + ToString({moved}), given))
          << env().Describe() << ": " << t.Lines();
      EXPECT_EQ(t.log_.held("a").losses + t.log_.held("b").losses, 0) << t.Lines();
    }
    t.a_.consumer->Close();
    t.b_.consumer->Close();
  });
}

TEST_P(TransportConformanceTest, ALeavingStreamsMembersTasksGoBackToTheOther) {
  env().Run([&]() {
    StreamsGroupConformance t(env());
    ASSERT_TRUE(t.Start(2)) << env().Describe() << ": " << t.Lines();
    ASSERT_TRUE(t.AddB()) << env().Describe() << ": " << t.Lines();
    t.b_.consumer->Close();  // leaves the group (epoch -1)
    EXPECT_TRUE(PollUntil(env(), {&t.a_}, [&]() {
      const StreamsLog::Held a = t.log_.held("a");
      return a.active == t.all_ && a.standby.empty();
    })) << env().Describe() << ": " << t.Lines();
    t.a_.consumer->Close();
  });
}

// A member that stops heartbeating for its session timeout is removed by the broker: its
// commit is refused (kFailedPrecondition, UNKNOWN_MEMBER_ID on Kafka), and its next poll
// reports its partitions lost; the other member takes every task.
TEST_P(TransportConformanceTest, AStreamsMemberTheGroupRemovedCannotCommitAndLosesItsTasks) {
  env().Run([&]() {
    StreamsGroupConformance t(env());
    ASSERT_TRUE(t.Start(2)) << env().Describe() << ": " << t.Lines();
    ASSERT_TRUE(t.AddB()) << env().Describe() << ": " << t.Lines();
    const std::vector<TopicPartition> held = t.a_.consumer->Assignment();
    ASSERT_FALSE(held.empty());
    // Only b polls, until it holds every task: a's session has ended.
    ASSERT_TRUE(PollUntil(env(), {&t.b_}, [&]() { return t.log_.held("b").active == t.all_; }))
        << env().Describe() << ": " << t.Lines();
    absl::Status s = RetryUntilOk(env().clock(), [&]() {
      return t.a_.consumer->CommitSync(Offsets{{held[0], 0}});
    });
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << env().Describe() << ": " << s;
    EXPECT_TRUE(PollUntil(env(), {&t.a_, &t.b_}, [&]() { return t.log_.held("a").losses > 0; }))
        << env().Describe() << ": " << t.Lines();
    t.a_.consumer->Close();
    t.b_.consumer->Close();
  });
}

// Kafka 4.4 refuses a member whose topology differs from the group's at the same epoch
// (INVALID_REQUEST, "Topology updates are not supported yet."): the member is fatal, and its
// poll fails with a non-retryable kInvalidArgument.
TEST_P(TransportConformanceTest, AStreamsMemberWithAnotherTopologyIsRefused) {
  env().Run([&]() {
    StreamsGroupConformance t(env());
    ASSERT_TRUE(t.Start(2)) << env().Describe() << ": " << t.Lines();
    Member other = Join(env(), t.log_, t.group_, t.topic_, "b", /*store=*/"other");
    absl::Status s;
    for (int poll = 0; poll < env().poll_attempts_max(); ++poll) {
      s = other.consumer->Poll(env().poll_timeout_ns()).status();
      if (!s.ok() && !IsRetryable(s)) break;
    }
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << env().Describe() << ": " << s;
    EXPECT_TRUE(t.log_.held("b").active.empty()) << t.Lines();
    other.consumer->Close();
    t.a_.consumer->Close();
  });
}

}  // namespace
}  // namespace restoresim
