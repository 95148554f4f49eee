#include "core/runtime/runtime_state.h"

namespace restoresim {

std::string_view RuntimeStateName(RuntimeState state) {
  switch (state) {
    case RuntimeState::kCreated: return "CREATED";
    case RuntimeState::kRebalancing: return "REBALANCING";
    case RuntimeState::kRunning: return "RUNNING";
    case RuntimeState::kPendingShutdown: return "PENDING_SHUTDOWN";
    case RuntimeState::kNotRunning: return "NOT_RUNNING";
    case RuntimeState::kPendingError: return "PENDING_ERROR";
    case RuntimeState::kError: return "ERROR";
  }
  return "?";
}

bool IsValidRuntimeTransition(RuntimeState from, RuntimeState to) {
  using S = RuntimeState;
  switch (from) {
    case S::kCreated:
      return to == S::kRebalancing || to == S::kPendingShutdown;
    case S::kRebalancing:
      return to == S::kRunning || to == S::kPendingShutdown || to == S::kPendingError;
    case S::kRunning:
      return to == S::kRebalancing || to == S::kRunning || to == S::kPendingShutdown ||
             to == S::kPendingError;
    case S::kPendingShutdown:
      return to == S::kNotRunning;
    case S::kPendingError:
      return to == S::kError;
    case S::kNotRunning:
    case S::kError:
      return false;
  }
  return false;
}

RuntimeState DerivedRuntimeState(RuntimeState now, const std::vector<StreamThreadState>& threads) {
  if (!IsRunningOrRebalancing(now)) return now;
  bool any_running = false;
  for (StreamThreadState t : threads) any_running |= t == StreamThreadState::kRunning;
  bool all_running = true;
  for (StreamThreadState t : threads) {
    if (t == StreamThreadState::kPartitionsAssigned) return RuntimeState::kRebalancing;
    if (t == StreamThreadState::kPendingShutdown && any_running) continue;
    if (t != StreamThreadState::kRunning && t != StreamThreadState::kDead) all_running = false;
  }
  return all_running && any_running ? RuntimeState::kRunning : now;
}

std::string_view StreamThreadExceptionResponseName(StreamThreadExceptionResponse response) {
  switch (response) {
    case StreamThreadExceptionResponse::kReplaceThread: return "REPLACE_THREAD";
    case StreamThreadExceptionResponse::kShutdownClient: return "SHUTDOWN_CLIENT";
    case StreamThreadExceptionResponse::kShutdownApplication: return "SHUTDOWN_APPLICATION";
  }
  return "?";
}

}  // namespace restoresim
