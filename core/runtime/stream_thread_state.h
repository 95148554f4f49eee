// A stream thread's states, as Kafka Streams names them (StreamThread.State):
//
//   CREATED -> STARTING -> PARTITIONS_ASSIGNED <-> RUNNING
//                   \______________\_________\____> PENDING_SHUTDOWN -> DEAD
//
// A thread is RUNNING only while every active task it is assigned runs: none restores, none
// waits to be initialised or handed to its restore thread (Kafka with the state updater, after
// PR 14214). Every rebalance that reaches it moves it back to PARTITIONS_ASSIGNED. Kafka's
// PARTITIONS_REVOKED is folded into PARTITIONS_ASSIGNED: here revocation and assignment are
// handled in one poll.
#ifndef RESTORESIM_CORE_RUNTIME_STREAM_THREAD_STATE_H_
#define RESTORESIM_CORE_RUNTIME_STREAM_THREAD_STATE_H_

#include <cstdint>
#include <string_view>

namespace restoresim {

enum class StreamThreadState : uint8_t {
  kCreated,
  kStarting,
  kPartitionsAssigned,
  kRunning,
  kPendingShutdown,
  kDead,
};
std::string_view StreamThreadStateName(StreamThreadState state);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_STREAM_THREAD_STATE_H_
