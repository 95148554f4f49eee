// StreamsGroupDriver (streams_group_driver.h) over a scripted host: the group's statuses acted
// on as Kafka 4.4's StreamThread does (handleStreamsRebalanceData). The callbacks and fencing are
// covered over the fake broker (fakes/fake_streams_group_test.cc) and against Kafka 4.4
// (kafka/kafka_streams_runtime_test.cc).
#include "core/transport/streams_group_driver.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace restoresim {
namespace {

namespace kp = kafka_protocol;
using Code = kp::StreamsGroupStatusCode;

// Answers each heartbeat with `answer(now)`; the clock is the test's.
class ScriptedHost final : public StreamsGroupDriver::Host {
 public:
  int64_t NowMs() const override { return now_ms; }
  absl::StatusOr<kp::StreamsGroupHeartbeatResponse> SendHeartbeat(
      const kp::StreamsGroupHeartbeatRequest&) override {
    ++sent;
    return answer(now_ms);
  }
  void CoordinatorMoved() override {}
  absl::Status ErrorStatus(int16_t code, const std::optional<std::string>& message,
                           std::string_view what) const override {
    if (code == 0) return absl::OkStatus();
    return absl::UnknownError(fmt::format("{}: {} {}", what, code, message.value_or("")));
  }
  void Say(std::string_view line) override { said.emplace_back(line); }
  std::vector<TopicPartition> Fetching() const override { return fetching; }
  bool IsFetching(const TopicPartition& p) const override {
    return std::find(fetching.begin(), fetching.end(), p) != fetching.end();
  }
  void AddFetching(const std::vector<TopicPartition>& p) override {
    fetching.insert(fetching.end(), p.begin(), p.end());
    std::sort(fetching.begin(), fetching.end());
  }
  void RemoveFetching(const std::vector<TopicPartition>& p) override {
    std::erase_if(fetching, [&](const TopicPartition& tp) {
      return std::find(p.begin(), p.end(), tp) != p.end();
    });
  }

  int64_t now_ms = 0;
  int sent = 0;
  std::function<kp::StreamsGroupHeartbeatResponse(int64_t)> answer;
  std::vector<std::string> said;
  std::vector<TopicPartition> fetching;
};

// The member's epoch 1 with tasks `active` of the source topic, and `statuses`.
kp::StreamsGroupHeartbeatResponse Given(std::vector<int32_t> active,
                                        std::vector<kp::StreamsGroupStatus> statuses) {
  kp::StreamsGroupHeartbeatResponse r{.member_id = "m1", .member_epoch = 1,
                                      .heartbeat_interval_ms = 1000};
  r.active_tasks = std::vector<kp::TaskIds>{};
  if (!active.empty()) r.active_tasks->push_back({.subtopology_id = "0", .partitions = active});
  r.standby_tasks = std::vector<kp::TaskIds>{};
  r.warmup_tasks = std::vector<kp::TaskIds>{};
  r.status = std::move(statuses);
  return r;
}

class DriverTest : public ::testing::Test {
 protected:
  void Start() {
    const kp::Topology topology =
        StreamsGroupDriver::CountTopology("input", {"app-counts-changelog"});
    driver_.Start(
        {.group_id = "app", .member_id = "m1", .process_id = "p1", .topology = topology},
        "input", /*listener=*/nullptr);
  }
  // Drives at `at_ms` (a heartbeat, and its acknowledgement when it reconciled).
  absl::Status DriveAt(int64_t at_ms) {
    host_.now_ms = at_ms;
    return driver_.Drive();
  }

  ScriptedHost host_;
  StreamsGroupDriver driver_{host_};
};

TEST_F(DriverTest, IncorrectlyPartitionedTopicsFailTheDriveAsKafkasTopologyException) {
  host_.answer = [](int64_t) {
    return Given({0}, {{static_cast<int8_t>(Code::kIncorrectlyPartitionedTopics),
                        "input has 2 partitions, 3 expected"}});
  };
  Start();
  const absl::Status s = DriveAt(0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("input has 2 partitions"), std::string::npos) << s;
}

TEST_F(DriverTest, MissingSourceTopicsFailTheDriveAfterTwoHeartbeatIntervals) {
  const kp::StreamsGroupStatus missing{static_cast<int8_t>(Code::kMissingSourceTopics),
                                       "input is missing"};
  host_.answer = [&](int64_t) { return Given({}, {missing}); };
  Start();
  EXPECT_TRUE(DriveAt(0).ok());
  ASSERT_EQ(host_.said.size(), 1u);
  EXPECT_NE(host_.said[0].find("failing in 2000 ms"), std::string::npos) << host_.said[0];
  EXPECT_TRUE(DriveAt(1000).ok()) << "one interval: still waiting";
  const absl::Status s = DriveAt(2000);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_NE(s.message().find("input is missing"), std::string::npos) << s;
}

TEST_F(DriverTest, SourceTopicsThatAppearInTimeResetTheWait) {
  const kp::StreamsGroupStatus missing{static_cast<int8_t>(Code::kMissingSourceTopics), "gone"};
  // The topics are there at 2000 only.
  host_.answer = [&](int64_t now_ms) {
    return now_ms == 2000 ? Given({0}, {}) : Given({0}, {missing});
  };
  Start();
  EXPECT_TRUE(DriveAt(0).ok());
  EXPECT_TRUE(DriveAt(1000).ok());
  EXPECT_TRUE(DriveAt(2000).ok()) << "the topics appeared: no status";
  EXPECT_TRUE(DriveAt(3000).ok()) << "missing again: a new wait of two intervals";
  EXPECT_TRUE(DriveAt(4000).ok());
  EXPECT_EQ(DriveAt(5000).code(), absl::StatusCode::kNotFound);
}

TEST_F(DriverTest, ShutdownApplicationFailsThisDriveAndEveryLaterOne) {
  host_.answer = [](int64_t) {
    return Given({0}, {{static_cast<int8_t>(Code::kShutdownApplication), "asked"}});
  };
  Start();
  EXPECT_EQ(DriveAt(0).code(), absl::StatusCode::kAborted);
  const int sent = host_.sent;
  EXPECT_EQ(DriveAt(5000).code(), absl::StatusCode::kAborted);
  EXPECT_EQ(host_.sent, sent) << "no heartbeat after it";
  EXPECT_FALSE(IsRetryable(driver_.fatal()));
}

TEST_F(DriverTest, InformationalStatusesAreNotErrors) {
  host_.answer = [](int64_t) {
    return Given({}, {{static_cast<int8_t>(Code::kMissingInternalTopics), "creating"},
                      {5, "assignment delayed"},
                      {static_cast<int8_t>(Code::kStaleTopology), "stale"}});
  };
  Start();
  for (int64_t t = 0; t <= 10'000; t += 1000) EXPECT_TRUE(DriveAt(t).ok()) << t;
}

}  // namespace
}  // namespace restoresim
