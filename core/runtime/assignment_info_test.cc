#include "core/runtime/assignment_info.h"

#include <gtest/gtest.h>

namespace restoresim {
namespace {

TEST(AssignmentInfoTest, RoundTripsStandbysAndProbingTime) {
  AssignmentInfo info{.standby_tasks = {TaskId{0, 1}, TaskId{0, 3}}, .rebalance_at_ms = 1500};
  EXPECT_EQ(info.Encode(), "standby=0_1,0_3;rebalance_at_ms=1500");
  absl::StatusOr<AssignmentInfo> back = AssignmentInfo::Decode(info.Encode());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->standby_tasks, info.standby_tasks);
  EXPECT_EQ(back->rebalance_at_ms, 1500);
}

TEST(AssignmentInfoTest, ScenarioFormatStillDecodes) {
  absl::StatusOr<AssignmentInfo> info = AssignmentInfo::Decode("standby=0_2");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->standby_tasks, (std::set<TaskId>{TaskId{0, 2}}));
  EXPECT_FALSE(info->rebalance_at_ms);
  EXPECT_TRUE(AssignmentInfo::Decode("").ok());
  EXPECT_TRUE(AssignmentInfo::Decode("standby=").ok());
}

TEST(AssignmentInfoTest, BadAssignmentInfoIsAnError) {
  EXPECT_FALSE(AssignmentInfo::Decode("standby=0_x").ok());
  EXPECT_FALSE(AssignmentInfo::Decode("standby=0_1;rebalance_at_ms=-4").ok());
  EXPECT_FALSE(AssignmentInfo::Decode("standby=0_1;other=1").ok());
}

TEST(SubscriptionInfoTest, RoundTripsOffsetSums) {
  SubscriptionInfo info{.process_id = "app-a",
                        .task_offset_sums = {{TaskId{0, 0}, kLatestOffset}, {TaskId{0, 1}, 120}}};
  EXPECT_EQ(info.Encode(), "process=app-a;offsets=0_0:-2,0_1:120");
  absl::StatusOr<SubscriptionInfo> back = SubscriptionInfo::Decode(info.Encode());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->process_id, "app-a");
  EXPECT_EQ(back->task_offset_sums, info.task_offset_sums);
  EXPECT_TRUE(SubscriptionInfo::Decode("process=p;offsets=").ok());
}

TEST(SubscriptionInfoTest, BadSubscriptionInfoIsAnError) {
  for (const char* bad : {"", "offsets=0_0:1", "process=;offsets=", "process=a b;offsets=",
                          "process=p;offsets=0_0", "process=p;offsets=0_0:-1",
                          "process=p;offsets=0_0:1,0_0:2", "process=p;offsets=zz:1"}) {
    EXPECT_FALSE(SubscriptionInfo::Decode(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace restoresim
