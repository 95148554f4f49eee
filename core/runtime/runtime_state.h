// The runtime's (client's) states, as Kafka Streams' KafkaStreams.State has them:
//
//   CREATED -> REBALANCING <-> RUNNING          (Start; any thread assigned / all running)
//   CREATED, REBALANCING, RUNNING -> PENDING_SHUTDOWN -> NOT_RUNNING            (Close)
//   REBALANCING, RUNNING -> PENDING_ERROR -> ERROR    (a thread failed: SHUTDOWN_CLIENT or
//                                                      SHUTDOWN_APPLICATION, the default)
//
// RUNNING -> RUNNING is allowed (Kafka's table has it); every other transition is a bug. The
// client is RUNNING when every live stream thread is RUNNING (one shutting down is passed over
// while another runs), and a thread is RUNNING only once no active task it is assigned still
// restores (stream_thread_state.h): so RUNNING means nothing assigned is restoring, which is
// Kafka 4.x's meaning with the state updater. Any thread PARTITIONS_ASSIGNED makes it
// REBALANCING.
#ifndef RESTORESIM_CORE_RUNTIME_RUNTIME_STATE_H_
#define RESTORESIM_CORE_RUNTIME_RUNTIME_STATE_H_

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "core/runtime/stream_thread_state.h"

namespace restoresim {

enum class RuntimeState : uint8_t {
  kCreated,
  kRebalancing,
  kRunning,
  kPendingShutdown,
  kNotRunning,
  kPendingError,
  kError,
};
std::string_view RuntimeStateName(RuntimeState state);
bool IsValidRuntimeTransition(RuntimeState from, RuntimeState to);
// Kafka's isRunningOrRebalancing: started, not shutting down.
inline bool IsRunningOrRebalancing(RuntimeState s) {
  return s == RuntimeState::kRunning || s == RuntimeState::kRebalancing;
}
// What the threads' states make a running client: REBALANCING if any is PARTITIONS_ASSIGNED,
// RUNNING if every one is RUNNING or DEAD and one is RUNNING (one PENDING_SHUTDOWN passed over
// while another is RUNNING: Kafka's maybeSetRunning), else unchanged (`now`: a STARTING thread
// holds RUNNING back without making it REBALANCING).
RuntimeState DerivedRuntimeState(RuntimeState now, const std::vector<StreamThreadState>& threads);

// A state listener (KafkaStreams.StateListener): called with (new, old) on every change, on the
// thread that changed it, under the runtime's state lock — it must not call back into the
// runtime nor block.
using RuntimeStateListener = std::function<void(RuntimeState new_state, RuntimeState old_state)>;

// The uncaught-exception handler's answers (StreamsUncaughtExceptionHandler.
// StreamThreadExceptionResponse).
enum class StreamThreadExceptionResponse : uint8_t {
  kReplaceThread,
  kShutdownClient,
  kShutdownApplication,
};
std::string_view StreamThreadExceptionResponseName(StreamThreadExceptionResponse response);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_RUNTIME_STATE_H_
