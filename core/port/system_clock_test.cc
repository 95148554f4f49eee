// Tests for SystemClock (the real monotonic clock and real timed waits), DeadlineAfter and
// ClockWrapper.
//
// Timing: only lower bounds are asserted (a sleep or timeout lasted at least its duration);
// upper bounds depend on the machine's load and would make the tests flaky.
#include "core/port/system_clock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/sync/clock.h"
#include "core/sync/condvar.h"
#include "core/sync/mutex.h"
#include "core/sync/thread.h"

namespace restoresim {
namespace {

using ::testing::ElementsAre;

static_assert(DeadlineAfter(5, 10) == 15);
static_assert(DeadlineAfter(kNoDeadline - 5, 10) == kNoDeadline);

TEST(SystemClockTest, DefaultIsOneInstance) {
  EXPECT_NE(SystemClock::Default(), nullptr);
  EXPECT_EQ(SystemClock::Default(), SystemClock::Default());
}

TEST(SystemClockTest, IsMonotonicOverManyReads) {
  constexpr int kReads = 100000;
  SystemClock& clock = *SystemClock::Default();
  TimeNs previous = clock.NowNs();
  const TimeNs first = previous;
  int backwards = 0;
  for (int i = 0; i < kReads; ++i) {
    const TimeNs now = clock.NowNs();
    if (now < previous) ++backwards;
    previous = now;
  }
  EXPECT_EQ(backwards, 0);
  EXPECT_GT(previous, first) << "100000 reads without the clock advancing at all";
}

TEST(SystemClockTest, SleepForSleepsAtLeastTheDuration) {
  SystemClock& clock = *SystemClock::Default();
  for (TimeNs duration_ns : {TimeNs{1 * kMillisecond}, TimeNs{15 * kMillisecond}}) {
    const TimeNs start = clock.NowNs();
    clock.SleepFor(duration_ns);
    EXPECT_GE(clock.NowNs() - start, duration_ns);
  }
}

TEST(SystemClockTest, SleepUntilAPastDeadlineReturns) {
  SystemClock& clock = *SystemClock::Default();
  clock.SleepUntil(0);
  clock.SleepUntil(clock.NowNs() - kSecond);
  clock.SleepFor(0);
  clock.SleepFor(-kSecond);
}

TEST(SystemClockTest, WaitUntilAPastDeadlineReturnsFalseAndKeepsTheLock) {
  SystemClock& clock = *SystemClock::Default();
  Mutex mu("mu");
  CondVar cv("cv");
  MutexLock lock(mu);
  EXPECT_FALSE(clock.WaitUntil(cv, mu, 0));
  EXPECT_FALSE(clock.WaitUntil(cv, mu, clock.NowNs()));  // a deadline equal to now has passed
  EXPECT_FALSE(clock.WaitFor(cv, mu, 0));
  EXPECT_FALSE(cv.WaitUntil(mu, clock, clock.NowNs() - kMillisecond));
  mu.AssertHeld();
}

TEST(SystemClockTest, WaitForTimesOutAfterAtLeastTheDuration) {
  SystemClock& clock = *SystemClock::Default();
  Mutex mu("mu");
  CondVar cv("never-notified");
  MutexLock lock(mu);
  const TimeNs start = clock.NowNs();
  const TimeNs deadline = DeadlineAfter(start, 10 * kMillisecond);
  int spurious = 0;
  while (clock.WaitUntil(cv, mu, deadline)) ++spurious;  // true only on a spurious wake-up
  EXPECT_GE(clock.NowNs(), deadline);
  EXPECT_LE(spurious, 1000);
  mu.AssertHeld();
}

TEST(SystemClockTest, WaitForReturnsTrueWhenNotifiedBeforeTheDeadline) {
  SystemClock& clock = *SystemClock::Default();
  Mutex mu("mu");
  CondVar cv("ready");
  bool ready = false;
  std::vector<bool> results;
  Thread notifier("notifier", [&]() {
    clock.SleepFor(5 * kMillisecond);
    MutexLock lock(mu);
    ready = true;
    cv.NotifyOne();
  });
  {
    MutexLock lock(mu);
    // Re-checks the predicate; a timeout (false) would end the loop with ready unset.
    while (!ready) {
      results.push_back(clock.WaitFor(cv, mu, 10 * kSecond));
      if (!results.back()) break;
    }
    EXPECT_TRUE(ready);
  }
  notifier.Join();
  ASSERT_FALSE(results.empty());
  for (bool r : results) EXPECT_TRUE(r);
}

TEST(DeadlineAfterTest, AddsAndSaturatesAtNoDeadline) {
  EXPECT_EQ(DeadlineAfter(0, 0), 0);
  EXPECT_EQ(DeadlineAfter(100, 23), 123);
  EXPECT_EQ(DeadlineAfter(2, kNoDeadline - 3), kNoDeadline - 1);  // the largest exact sum
  EXPECT_EQ(DeadlineAfter(1, kNoDeadline - 1), kNoDeadline);
  EXPECT_EQ(DeadlineAfter(0, kNoDeadline), kNoDeadline);
  EXPECT_EQ(DeadlineAfter(kSecond, kNoDeadline), kNoDeadline);
  EXPECT_EQ(DeadlineAfter(kNoDeadline - kSecond, 2 * kSecond), kNoDeadline);
  EXPECT_EQ(DeadlineAfter(kNoDeadline, 1), kNoDeadline);
}

// A clock with scripted time that records what reaches it.
class RecordingClock final : public Clock {
 public:
  TimeNs now_ns = 1000;
  bool wait_result = true;
  std::vector<TimeNs> sleep_deadlines;
  std::vector<TimeNs> wait_deadlines;
  CondVar* last_cv = nullptr;
  Mutex* last_mu = nullptr;

  TimeNs NowNs() override { return now_ns; }
  void SleepUntil(TimeNs deadline_ns) override { sleep_deadlines.push_back(deadline_ns); }
  bool WaitUntil(CondVar& cv, Mutex& mu, TimeNs deadline_ns) override {
    wait_deadlines.push_back(deadline_ns);
    last_cv = &cv;
    last_mu = &mu;
    return wait_result;
  }
};

// LevelDB's EnvWrapper pattern: override one method, inherit the forwarding of the rest.
class OffsetClock final : public ClockWrapper {
 public:
  OffsetClock(Clock* target, TimeNs offset_ns) : ClockWrapper(target), offset_ns_(offset_ns) {}
  TimeNs NowNs() override { return target()->NowNs() + offset_ns_; }

 private:
  TimeNs offset_ns_;
};

TEST(ClockWrapperTest, ForwardsEveryCallToItsTarget) {
  RecordingClock target;
  ClockWrapper wrapper(&target);
  EXPECT_EQ(wrapper.target(), &target);
  EXPECT_EQ(wrapper.NowNs(), 1000);
  target.now_ns = 2000;
  EXPECT_EQ(wrapper.NowNs(), 2000);

  wrapper.SleepUntil(5000);
  EXPECT_THAT(target.sleep_deadlines, ElementsAre(5000));

  Mutex mu("mu");
  CondVar cv("cv");
  MutexLock lock(mu);
  target.wait_result = false;
  EXPECT_FALSE(wrapper.WaitUntil(cv, mu, 7000));
  target.wait_result = true;
  EXPECT_TRUE(wrapper.WaitUntil(cv, mu, 8000));
  EXPECT_THAT(target.wait_deadlines, ElementsAre(7000, 8000));
  EXPECT_EQ(target.last_cv, &cv);
  EXPECT_EQ(target.last_mu, &mu);
}

TEST(ClockWrapperTest, OverridingNowNsShiftsOnlyTheReadings) {
  constexpr TimeNs kOffset = 3600 * kSecond;
  RecordingClock target;
  OffsetClock clock(&target, kOffset);
  EXPECT_EQ(clock.NowNs(), 1000 + kOffset);
  EXPECT_EQ(target.NowNs(), 1000);

  // SleepFor and WaitFor compute their deadline from the wrapper's (overridden) NowNs and
  // hand it to the target unchanged: a wrapper that shifts time must also translate the
  // deadlines of SleepUntil/WaitUntil if its target is to wait the right amount.
  clock.SleepFor(50);
  EXPECT_THAT(target.sleep_deadlines, ElementsAre(1000 + kOffset + 50));
  Mutex mu("mu");
  CondVar cv("cv");
  MutexLock lock(mu);
  EXPECT_TRUE(clock.WaitFor(cv, mu, 70));
  EXPECT_THAT(target.wait_deadlines, ElementsAre(1000 + kOffset + 70));
}

TEST(ClockWrapperTest, OffsetOverSystemClockReadsTheSystemClockPlusTheOffset) {
  constexpr TimeNs kOffset = 3600 * kSecond;
  SystemClock& system = *SystemClock::Default();
  OffsetClock clock(&system, kOffset);
  const TimeNs before = system.NowNs();
  const TimeNs shifted = clock.NowNs();
  const TimeNs after = system.NowNs();
  EXPECT_GE(shifted - kOffset, before);
  EXPECT_LE(shifted - kOffset, after);
  EXPECT_EQ(clock.target(), &system);
}

}  // namespace
}  // namespace restoresim
