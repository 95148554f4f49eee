#include "core/runtime/stream_thread_state.h"

namespace restoresim {

bool IsValidStreamThreadTransition(StreamThreadState from, StreamThreadState to) {
  using S = StreamThreadState;
  switch (from) {
    case S::kCreated:
      return to == S::kStarting || to == S::kPendingShutdown;
    case S::kStarting:
      return to == S::kPartitionsAssigned || to == S::kPendingShutdown;
    case S::kPartitionsAssigned:
    case S::kRunning:
      return to == S::kPartitionsAssigned || to == S::kRunning || to == S::kPendingShutdown;
    case S::kPendingShutdown:
      return to == S::kDead;
    case S::kDead:
      return false;
  }
  return false;
}

}  // namespace restoresim
