// Runtime: checkpoint/restore (runtime.h). The registration order, and why:
//   1. the transport      suspended last, resumed first: every thread's preparation (commit,
//                         flush, checkpoint) may still call the broker; after the restore the
//                         threads find it open again (each client reconnects on first use).
//   2. per stream thread i: its restore thread, then the stream thread: the stream thread
//                         holds (and commits) before its restore thread, so a commit never
//                         waits on a restore thread already held.
//   3. the lifecycle      notified first: refuses a checkpoint of an instance that is not
//                         RUNNING (shutting down, failed to start), which abandons it.
// Stores and checkpoint files are flushed and written by the thread that owns them, at its safe
// point (the oracle's single_owner: a store is touched only by its holder).
#include <fmt/format.h>

#include "core/runtime/hold_point.h"
#include "core/runtime/runtime.h"
#include "core/runtime/runtime_observer.h"
#include "core/runtime/suspendable_transport.h"
#include "core/util/check.h"

namespace restoresim {

class Runtime::Lifecycle final : public CheckpointResource {
 public:
  explicit Lifecycle(Runtime& runtime) : runtime_(runtime) {}
  std::string ResourceName() const override { return "runtime lifecycle"; }
  absl::Status BeforeCheckpoint(CheckpointContext&) override {
    const RuntimeState state = runtime_.state();
    if (IsRunningOrRebalancing(state)) return absl::OkStatus();
    TraceMark("cover", "checkpoint refused: runtime not running");
    return absl::FailedPreconditionError(
        fmt::format("runtime is {}", RuntimeStateName(state)));
  }
  absl::Status AfterRestore(CheckpointContext&) override { return absl::OkStatus(); }

 private:
  Runtime& runtime_;
};

// The instance as the timeline's marks name it.
std::string Runtime::Label() const {
  return checkpoint_.instance.empty() ? config_.application_id : checkpoint_.instance;
}

std::string Runtime::ThreadName(int32_t i) const {
  const std::string& prefix =
      checkpoint_.instance.empty() ? config_.application_id : checkpoint_.instance;
  return fmt::format("{}-StreamThread-{}", prefix, i + 1);
}

std::string Runtime::DrawProcessId() {
  if (checkpoint_.random != nullptr) return fmt::format("{:016x}", checkpoint_.random->Next64());
  OsSeededRandom reseeded;  // a restored image must not replay the original's draws
  return fmt::format("{:016x}", reseeded.Next64());
}

absl::Status Runtime::EnableCheckpointRestore(CheckpointOptions options) {
  MutexLock lock(mu_);
  if (state_ != RuntimeState::kCreated) {
    return absl::FailedPreconditionError("checkpoint/restore enabled after Start");
  }
  if (enabled_) return absl::FailedPreconditionError("checkpoint/restore enabled twice");
  checkpoint_ = std::move(options);
  incarnations_.Store(checkpoint_.first_incarnation);
  if (checkpoint_.process_id.empty()) checkpoint_.process_id = DrawProcessId();
  const std::string prefix =
      (checkpoint_.instance.empty() ? config_.application_id : checkpoint_.instance) + "-";
  suspendable_ = std::make_unique<SuspendableTransport>(
      transport_, SuspendableTransport::Options{.instance = checkpoint_.instance,
                                                .application_id = config_.application_id,
                                                .local_prefix = prefix,
                                                .process_id = checkpoint_.process_id,
                                                .start_suspended = checkpoint_.from_image});
  enabled_ = true;
  return absl::OkStatus();
}

absl::Status Runtime::RegisterResources() {
  RS_CHECK(enabled_ && resources_.empty(), "checkpoint resources registered twice");
  RS_CHECK_EQ(holds_.size(), thread_count() * 2, "one hold per stream and restore thread");
  if (absl::Status s = context_.Register(suspendable_.get()); !s.ok()) return s;
  for (size_t i = 0; i < holds_.size(); ++i) {
    resources_.push_back(
        std::make_unique<HoldResource>(i % 2 == 0 ? "restore thread" : "stream thread",
                                       *holds_[i]));
  }
  resources_.push_back(std::make_unique<Lifecycle>(*this));
  for (auto& r : resources_) {
    if (absl::Status s = context_.Register(r.get()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Runtime::Checkpoint() {
  {
    MutexLock lock(mu_);
    if (!enabled_ || state_ == RuntimeState::kCreated) {
      return absl::FailedPreconditionError(
          enabled_ ? "checkpoint before Start" : "checkpoint/restore is not enabled");
    }
    if (cycle_) return absl::FailedPreconditionError("a checkpoint is already in progress");
    cycle_ = true;
  }
  TraceMark("crac", fmt::format("checkpoint begin {}", Label()));
  RS_OBSERVE(OnCheckpointNotice, checkpoint_.instance, CheckpointNotice::kCheckpointBegin);
  absl::Status s = context_.Checkpoint();
  MutexLock lock(mu_);
  RS_CHECK(cycle_ && !frozen_, "checkpoint cycle state changed under it");
  if (s.ok()) {
    frozen_ = true;
    TraceMark("crac", fmt::format("frozen {}", Label()));
    RS_OBSERVE(OnCheckpointNotice, checkpoint_.instance, CheckpointNotice::kFrozen);
    return s;
  }
  cycle_ = false;
  cycle_cv_.NotifyAll();
  TraceMark("crac", fmt::format("checkpoint abandoned {}", Label()));
  TraceMark("cover", "checkpoint abandoned");
  RS_OBSERVE(OnCheckpointNotice, checkpoint_.instance, CheckpointNotice::kAbandoned);
  return s;
}

absl::Status Runtime::Restore() {
  {
    MutexLock lock(mu_);
    if (!frozen_) return absl::FailedPreconditionError("restore without a checkpoint");
  }
  suspendable_->SetNextProcessId(DrawProcessId());
  TraceMark("crac", fmt::format("restore begin {}", Label()));
  RS_OBSERVE(OnCheckpointNotice, checkpoint_.instance, CheckpointNotice::kRestoreBegin);
  absl::Status s = context_.Restore();
  MutexLock lock(mu_);
  RS_CHECK(cycle_ && frozen_, "restore outside a cycle");
  frozen_ = false;
  cycle_ = false;
  cycle_cv_.NotifyAll();
  TraceMark("crac", fmt::format("restored {}", Label()));
  RS_OBSERVE(OnCheckpointNotice, checkpoint_.instance, CheckpointNotice::kRestored);
  return s;
}

bool Runtime::frozen() const {
  MutexLock lock(mu_);
  return frozen_;
}

std::string Runtime::process_id() const {
  return suspendable_ != nullptr ? suspendable_->process_id() : std::string();
}

}  // namespace restoresim
