// A stream thread's states, as Kafka Streams names them (StreamThread.State):
//
//   CREATED -> STARTING -> PARTITIONS_ASSIGNED <-> RUNNING
//                   \______________\_________\____> PENDING_SHUTDOWN -> DEAD
//
// A thread is RUNNING only while every active task it is assigned runs: none restores, none
// waits to be initialised or handed to its restore thread (Kafka with the state updater, after
// PR 14214). Every rebalance that reaches it moves it back to PARTITIONS_ASSIGNED. Kafka's
// PARTITIONS_REVOKED is folded into PARTITIONS_ASSIGNED: here revocation and assignment are
// handled in one poll. Allowed transitions are Kafka's (StreamThread.State), with
// PARTITIONS_REVOKED folded: CREATED -> STARTING | PENDING_SHUTDOWN; STARTING, PARTITIONS_ASSIGNED
// and RUNNING -> PARTITIONS_ASSIGNED | PENDING_SHUTDOWN; PARTITIONS_ASSIGNED and RUNNING ->
// RUNNING; PENDING_SHUTDOWN -> DEAD; DEAD is final. A thread driven by hand (tests) is STARTING
// once it subscribes.
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
bool IsValidStreamThreadTransition(StreamThreadState from, StreamThreadState to);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_STREAM_THREAD_STATE_H_
