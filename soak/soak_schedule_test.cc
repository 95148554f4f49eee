#include "soak/soak_schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace restoresim::soak {
namespace {

ScheduleParams Params(uint64_t seed) {
  return ScheduleParams{.seed = seed, .duration_ns = 30 * 60 * kSecond,
                        .kinds = std::vector<FaultKind>(AllFaultKinds().begin(),
                                                        AllFaultKinds().end())};
}

TEST(SoakScheduleTest, TheScheduleIsAPureFunctionOfItsParameters) {
  const std::vector<Fault> a = DrawSchedule(Params(7));
  const std::vector<Fault> b = DrawSchedule(Params(7));
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(ScheduleText(a), ScheduleText(b));
  EXPECT_NE(ScheduleText(a), ScheduleText(DrawSchedule(Params(8))));
}

TEST(SoakScheduleTest, FaultsComeOneAtATimeAndRecoverBeforeTheEnd) {
  const ScheduleParams params = Params(3);
  const std::vector<Fault> faults = DrawSchedule(params);
  ASSERT_GT(faults.size(), 20u);  // 30 minutes of faults every ~40 s
  EXPECT_GE(faults.front().at_ns, params.settle_ns);
  for (size_t i = 0; i < faults.size(); ++i) {
    const Fault& f = faults[i];
    EXPECT_LT(f.at_ns + f.hold_ns, params.duration_ns);
    if (i > 0) {
      EXPECT_GE(f.at_ns, faults[i - 1].at_ns + faults[i - 1].hold_ns + params.gap_min_ns);
    }
    switch (f.kind) {
      case FaultKind::kBrokerKill: EXPECT_THAT(f.target, testing::AllOf(testing::Ge(1u),
                                                                        testing::Le(3u))); break;
      case FaultKind::kLeaderKill: EXPECT_LT(f.target, params.partitions); break;
      default: EXPECT_LT(f.target, params.instances); break;
    }
  }
}

TEST(SoakScheduleTest, EveryKindIsDrawnAndOnlyTheKindsAsked) {
  std::set<FaultKind> seen;
  for (const Fault& f : DrawSchedule(Params(1))) seen.insert(f.kind);
  EXPECT_EQ(seen.size(), AllFaultKinds().size());
  ScheduleParams only = Params(1);
  only.kinds = {FaultKind::kInstanceKill};
  for (const Fault& f : DrawSchedule(only)) EXPECT_EQ(f.kind, FaultKind::kInstanceKill);
  only.kinds.clear();
  EXPECT_TRUE(DrawSchedule(only).empty());
}

TEST(SoakScheduleTest, FaultListsParseAndBadOnesAreNamed) {
  absl::StatusOr<std::vector<FaultKind>> kinds = ParseFaultKinds("instance-kill,broker-kill");
  ASSERT_TRUE(kinds.ok()) << kinds.status();
  EXPECT_EQ(FaultKindsText(*kinds), "instance-kill,broker-kill");
  EXPECT_EQ(ParseFaultKinds("all")->size(), AllFaultKinds().size());
  EXPECT_TRUE(ParseFaultKinds("none")->empty());
  EXPECT_THAT(std::string(ParseFaultKinds("instance-kill,meteor").status().message()),
              testing::HasSubstr("unknown fault 'meteor'"));
  EXPECT_THAT(std::string(ParseFaultKinds("pause,pause").status().message()),
              testing::HasSubstr("named twice"));
  EXPECT_FALSE(ParseFaultKinds("").ok());
  EXPECT_FALSE(ParseFaultKinds("pause,").ok());
}

}  // namespace
}  // namespace restoresim::soak
