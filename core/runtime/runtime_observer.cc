#include "core/runtime/runtime_observer.h"

namespace restoresim {

std::string_view TaskHolderName(TaskHolder holder) {
  switch (holder) {
    case TaskHolder::kStreamThread: return "stream thread";
    case TaskHolder::kToRestore: return "queue to the restore thread";
    case TaskHolder::kRestoreThread: return "restore thread";
    case TaskHolder::kFromRestore: return "queue from the restore thread";
  }
  return "?";
}

std::string_view TaskDecisionName(TaskDecision decision) {
  switch (decision) {
    case TaskDecision::kCreate: return "create";
    case TaskDecision::kRecycle: return "recycle";
    case TaskDecision::kResume: return "resume";
    case TaskDecision::kStartRunning: return "start running";
    case TaskDecision::kSendClose: return "send CLOSE";
    case TaskDecision::kClose: return "close";
    case TaskDecision::kCloseLost: return "close lost";
    case TaskDecision::kCloseStale: return "close stale";
    case TaskDecision::kRevive: return "revive";
    case TaskDecision::kCloseShutdown: return "close at shutdown";
    case TaskDecision::kCloseFailed: return "close failed";
  }
  return "?";
}

std::string_view TaskViewWhereName(TaskView::Where where) {
  switch (where) {
    case TaskView::Where::kRunning: return "running";
    case TaskView::Where::kRevoked: return "running, revoked";
    case TaskView::Where::kRestored: return "restored, not yet running";
    case TaskView::Where::kPendingInit: return "pending initialisation";
    case TaskView::Where::kReady: return "ready";
    case TaskView::Where::kInRestore: return "in the restore thread";
    case TaskView::Where::kAwaiting: return "awaiting its CLOSE";
  }
  return "?";
}

std::string_view StreamThreadStateName(StreamThreadState state) {
  switch (state) {
    case StreamThreadState::kCreated: return "CREATED";
    case StreamThreadState::kStarting: return "STARTING";
    case StreamThreadState::kPartitionsAssigned: return "PARTITIONS_ASSIGNED";
    case StreamThreadState::kRunning: return "RUNNING";
    case StreamThreadState::kPendingShutdown: return "PENDING_SHUTDOWN";
    case StreamThreadState::kDead: return "DEAD";
  }
  return "?";
}

std::string_view CheckpointNoticeName(CheckpointNotice notice) {
  switch (notice) {
    case CheckpointNotice::kCheckpointBegin: return "checkpoint begin";
    case CheckpointNotice::kFrozen: return "frozen";
    case CheckpointNotice::kAbandoned: return "checkpoint abandoned";
    case CheckpointNotice::kRestoreBegin: return "restore begin";
    case CheckpointNotice::kRestored: return "restored";
  }
  return "?";
}

}  // namespace restoresim
