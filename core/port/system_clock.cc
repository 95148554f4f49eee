#include "core/port/system_clock.h"

#include <chrono>
#include <thread>

#include "core/sync/condvar.h"
#include "core/sync/mutex.h"
#include "core/util/check.h"

namespace restoresim {
namespace {

void CheckNotSimulated(const char* what) {
  RS_CHECK(CurrentSim() == nullptr,
           "SystemClock::{} called inside a simulation; pass the simulation's clock", what);
}

}  // namespace

SystemClock* SystemClock::Default() {
  static SystemClock* clock = new SystemClock();
  return clock;
}

TimeNs SystemClock::NowNs() {
  CheckNotSimulated("NowNs");
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void SystemClock::SleepUntil(TimeNs deadline_ns) {
  for (TimeNs now = NowNs(); now < deadline_ns; now = NowNs()) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(deadline_ns - now));
  }
}

bool SystemClock::WaitUntil(CondVar& cv, Mutex& mu, TimeNs deadline_ns) {
  const TimeNs now = NowNs();
  if (now >= deadline_ns) return false;
  cv.WaitWithRealTimeout(mu, deadline_ns - now);
  return NowNs() < deadline_ns;
}

}  // namespace restoresim
