// Helpers for tests that drive a RestoreThread directly against the fake broker: items of one
// task, a round of one item, and draining events for a while of virtual time.
#ifndef RESTORESIM_SCENARIOS_RESTORE_THREAD_TEST_UTIL_H_
#define RESTORESIM_SCENARIOS_RESTORE_THREAD_TEST_UTIL_H_

#include <memory>
#include <utility>
#include <vector>

#include "core/runtime/restore_thread.h"
#include "scenarios/runtime_world.h"

namespace restoresim::testing {

inline TaskItem Create(std::unique_ptr<Task> task) {
  TaskItem item;
  item.kind = TaskItem::Kind::kCreate;
  item.incarnation = task->incarnation();
  item.task = std::move(task);
  return item;
}

// One round holding one item.
inline std::vector<TaskItem> Items(TaskItem a) {
  std::vector<TaskItem> v;
  v.push_back(std::move(a));
  return v;
}

// Drains events until `n` arrived or virtual time passes `timeout_ns`, sleeping `poll_ns`
// between drains.
inline std::vector<RestoreEvent> WaitEvents(RuntimeWorld& w, RestoreThread& rt, size_t n,
                                            TimeNs timeout_ns = 60 * kSecond,
                                            TimeNs poll_ns = 10 * kMillisecond) {
  std::vector<RestoreEvent> events;
  const TimeNs deadline = w.clock.NowNs() + timeout_ns;
  while (events.size() < n && w.clock.NowNs() < deadline) {
    for (RestoreEvent& e : rt.DrainEvents()) events.push_back(std::move(e));
    if (events.size() < n) w.clock.SleepFor(poll_ns);
  }
  return events;
}

}  // namespace restoresim::testing

#endif  // RESTORESIM_SCENARIOS_RESTORE_THREAD_TEST_UTIL_H_
