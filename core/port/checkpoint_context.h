// The lifecycle port: checkpoint/restore notifications in the manner of OpenJDK CRaC
// (jdk.crac / org.crac). A process about to be checkpointed (frozen into an image that may be
// restored later, elsewhere, several times) tells its CheckpointContext; every registered
// CheckpointResource prepares (BeforeCheckpoint: close connections, reach a safe point, flush)
// and, once the image is restored, resumes (AfterRestore: reconnect, re-read what may have
// changed, take fresh identities).
//
// Semantics followed (the jdk.crac Context/Resource contract, paraphrased):
//  * Checkpoint notifications go in reverse registration order, restore notifications in
//    registration order: what registered first (the transport, below everything else) is
//    suspended last and resumed first.
//  * Every resource is notified even when another one fails; the failures come back together
//    in one status that names each resource (CRaC's CheckpointException/RestoreException with
//    one suppressed exception per failure).
//  * A checkpoint with a failed notification is abandoned: every resource notified of it gets
//    its restore notification at once (registration order), and Checkpoint returns ABORTED
//    naming the failures (and any failure of that rollback). The context is then idle again.
//  * A resource registered while a notification cycle is in progress (from a callback or from
//    another thread) is handled as jdk.crac's BlockingOrderedContext handles it: the
//    registration takes effect only once the cycle ends (after the restore notifications, or
//    after the rollback of an abandoned checkpoint), so it is notified neither of that
//    checkpoint nor of that restore. We do not block the registering thread (it may be the
//    notifying one); the registration is queued instead, with the same effect.
//
// Thread-safety: every method may be called from any thread; one notification cycle at a time
// (a second Checkpoint while one is in progress, or a Restore without a checkpoint, is
// FAILED_PRECONDITION). Callbacks run on the thread that called Checkpoint/Restore, without
// the context's lock held, so they may block.
#ifndef RESTORESIM_CORE_PORT_CHECKPOINT_CONTEXT_H_
#define RESTORESIM_CORE_PORT_CHECKPOINT_CONTEXT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "core/sync/mutex.h"

namespace restoresim {

class CheckpointContext;

class CheckpointResource {
 public:
  virtual ~CheckpointResource() = default;
  // Named in aggregated failures ("transport", "stream-thread app-StreamThread-1").
  virtual std::string ResourceName() const = 0;
  virtual absl::Status BeforeCheckpoint(CheckpointContext& context) = 0;
  virtual absl::Status AfterRestore(CheckpointContext& context) = 0;
};

enum class CheckpointPhase { kIdle, kCheckpointing, kCheckpointed, kRestoring };
std::string_view CheckpointPhaseName(CheckpointPhase phase);

class CheckpointContext {
 public:
  // Named resources of this many or more are refused (a runaway registration loop).
  static constexpr size_t kResourcesMax = 4096;

  CheckpointContext() = default;
  CheckpointContext(const CheckpointContext&) = delete;
  CheckpointContext& operator=(const CheckpointContext&) = delete;

  // REQUIRES: `resource` outlives its registration (until Unregister or the context's end).
  // During a notification cycle the registration is queued (see above).
  absl::Status Register(CheckpointResource* resource);
  // Removes a resource (queued while a cycle is in progress, like Register).
  void Unregister(CheckpointResource* resource);

  // BeforeCheckpoint of every resource, last registered first. OK: the process may now be
  // imaged; call Restore to resume it. ABORTED: the checkpoint was abandoned and every
  // resource notified has already been restored.
  absl::Status Checkpoint();
  // AfterRestore of every resource, first registered first. REQUIRES: a checkpoint succeeded.
  // The context is idle afterwards even when some resource failed (INTERNAL, naming each).
  absl::Status Restore();

  CheckpointPhase phase() const;
  size_t resource_count() const;
  // Completed cycles (a successful checkpoint followed by its restore).
  int64_t restores() const;

 private:
  struct Failure {
    std::string resource;
    absl::Status status;
  };
  // Runs AfterRestore over `resources` in order, appending failures.
  void NotifyRestore(const std::vector<CheckpointResource*>& resources,
                     std::vector<Failure>& failures);
  // Ends a cycle: applies queued registrations and returns to idle.
  void EndCycle();
  static absl::Status Aggregate(absl::StatusCode code, std::string_view what,
                                const std::vector<Failure>& failures);

  mutable Mutex mu_{"checkpoint_context_mu"};
  CheckpointPhase phase_ ABSL_GUARDED_BY(mu_) = CheckpointPhase::kIdle;
  std::vector<CheckpointResource*> resources_ ABSL_GUARDED_BY(mu_);
  // Registrations (true) and unregistrations (false) made during the current cycle.
  std::vector<std::pair<CheckpointResource*, bool>> queued_ ABSL_GUARDED_BY(mu_);
  int64_t restores_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_PORT_CHECKPOINT_CONTEXT_H_
