// task.timeout.ms from a task's first error on (Kafka's Task.maybeInitTaskTimeoutOrThrow and
// clearTaskTimeout), for the stream thread's waits that have it: stores that fail to open
// (task_initializer.h) and the committed-offset read before a task runs (task_starter.h).
//
// Thread-safety: plain values; each map belongs to one stream thread.
#ifndef RESTORESIM_CORE_RUNTIME_TASK_TIMEOUT_H_
#define RESTORESIM_CORE_RUNTIME_TASK_TIMEOUT_H_

#include <map>

#include "core/sync/clock.h"
#include "core/util/check.h"

namespace restoresim {

// The first error starts the deadline in `deadlines` (`started` says so), a later one past it
// has timed out; with a timeout of 0 the first error does. Without a clock nothing times out.
template <typename Key>
bool TaskTimeoutPassed(std::map<Key, TimeNs>& deadlines, const Key& key, TimeNs timeout_ns,
                       Clock* clock, bool& started) {
  started = false;
  if (timeout_ns == 0) return true;
  const TimeNs now = clock == nullptr ? 0 : clock->NowNs();
  auto [it, first] = deadlines.try_emplace(key, DeadlineAfter(now, timeout_ns));
  RS_CHECK(!first || it->second >= now, "a task's deadline in the past");
  started = first;
  return !first && clock != nullptr && now >= it->second;
}

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TASK_TIMEOUT_H_
