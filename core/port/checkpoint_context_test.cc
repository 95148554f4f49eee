#include "core/port/checkpoint_context.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace restoresim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Records every notification in one shared log; may be told to fail either one.
class Recorder : public CheckpointResource {
 public:
  Recorder(std::string name, std::vector<std::string>& log) : name_(std::move(name)), log_(log) {}
  std::string ResourceName() const override { return name_; }
  absl::Status BeforeCheckpoint(CheckpointContext& context) override {
    log_.push_back("before " + name_);
    if (on_before) on_before(context);
    return fail_before ? absl::UnavailableError(name_ + " cannot close") : absl::OkStatus();
  }
  absl::Status AfterRestore(CheckpointContext&) override {
    log_.push_back("after " + name_);
    return fail_after ? absl::UnavailableError(name_ + " cannot reopen") : absl::OkStatus();
  }
  bool fail_before = false;
  bool fail_after = false;
  std::function<void(CheckpointContext&)> on_before;

 private:
  std::string name_;
  std::vector<std::string>& log_;
};

TEST(CheckpointContextTest, CheckpointInReverseOrderRestoreInRegistrationOrder) {
  std::vector<std::string> log;
  Recorder a("a", log), b("b", log), c("c", log);
  CheckpointContext context;
  for (Recorder* r : {&a, &b, &c}) ASSERT_TRUE(context.Register(r).ok());
  ASSERT_TRUE(context.Checkpoint().ok());
  EXPECT_EQ(context.phase(), CheckpointPhase::kCheckpointed);
  ASSERT_TRUE(context.Restore().ok());
  EXPECT_EQ(context.phase(), CheckpointPhase::kIdle);
  EXPECT_EQ(context.restores(), 1);
  EXPECT_THAT(log, ElementsAre("before c", "before b", "before a", "after a", "after b",
                               "after c"));
}

TEST(CheckpointContextTest, AFailedCheckpointNotifiesEveryoneThenRestoresAtOnce) {
  std::vector<std::string> log;
  Recorder a("a", log), b("b", log), c("c", log);
  b.fail_before = true;
  c.fail_before = true;
  CheckpointContext context;
  for (Recorder* r : {&a, &b, &c}) ASSERT_TRUE(context.Register(r).ok());
  absl::Status s = context.Checkpoint();
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  // Both failures named, in notification order.
  EXPECT_THAT(s.message(), HasSubstr("2 of 3 resources failed"));
  EXPECT_THAT(s.message(), HasSubstr("[c: UNAVAILABLE: c cannot close]; [b: UNAVAILABLE"));
  EXPECT_THAT(log, ElementsAre("before c", "before b", "before a", "after a", "after b",
                               "after c"));
  EXPECT_EQ(context.phase(), CheckpointPhase::kIdle);
  EXPECT_EQ(context.restores(), 0);
  // Abandoned, not stuck: the next checkpoint runs.
  b.fail_before = c.fail_before = false;
  EXPECT_TRUE(context.Checkpoint().ok());
}

TEST(CheckpointContextTest, RestoreFailuresAreCollectedAndEveryoneIsStillRestored) {
  std::vector<std::string> log;
  Recorder a("a", log), b("b", log);
  a.fail_after = true;
  CheckpointContext context;
  ASSERT_TRUE(context.Register(&a).ok());
  ASSERT_TRUE(context.Register(&b).ok());
  ASSERT_TRUE(context.Checkpoint().ok());
  absl::Status s = context.Restore();
  EXPECT_TRUE(absl::IsInternal(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("[a: UNAVAILABLE: a cannot reopen]"));
  EXPECT_THAT(log, ElementsAre("before b", "before a", "after a", "after b"));
  EXPECT_EQ(context.phase(), CheckpointPhase::kIdle);
}

TEST(CheckpointContextTest, RegistrationDuringACycleTakesEffectWhenItEnds) {
  std::vector<std::string> log;
  Recorder a("a", log), late("late", log);
  a.on_before = [&](CheckpointContext& context) { ASSERT_TRUE(context.Register(&late).ok()); };
  CheckpointContext context;
  ASSERT_TRUE(context.Register(&a).ok());
  ASSERT_TRUE(context.Checkpoint().ok());
  EXPECT_EQ(context.resource_count(), 1u);  // still queued
  ASSERT_TRUE(context.Restore().ok());
  EXPECT_EQ(context.resource_count(), 2u);
  // Not notified in the cycle it registered during; notified in the next one.
  EXPECT_THAT(log, ElementsAre("before a", "after a"));
  a.on_before = nullptr;
  log.clear();
  ASSERT_TRUE(context.Checkpoint().ok());
  ASSERT_TRUE(context.Restore().ok());
  EXPECT_THAT(log, ElementsAre("before late", "before a", "after a", "after late"));
}

TEST(CheckpointContextTest, MisuseIsAnErrorNotACrash) {
  std::vector<std::string> log;
  Recorder a("a", log);
  CheckpointContext context;
  EXPECT_TRUE(absl::IsInvalidArgument(context.Register(nullptr)));
  ASSERT_TRUE(context.Register(&a).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(context.Register(&a)));
  EXPECT_TRUE(absl::IsFailedPrecondition(context.Restore()));  // nothing checkpointed
  ASSERT_TRUE(context.Checkpoint().ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(context.Checkpoint()));  // twice in a row
  ASSERT_TRUE(context.Restore().ok());
  context.Unregister(&a);
  EXPECT_EQ(context.resource_count(), 0u);
}

}  // namespace
}  // namespace restoresim
