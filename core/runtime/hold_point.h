// HoldPoint: how a checkpoint holds one of the runtime's threads at a safe point. The thread
// checks requested() (a relaxed flag: free, and no scheduling point) at the places where it
// holds nothing in flight — the top of its loop — and there calls Hold(prepare): it runs
// `prepare` (a stream thread commits: producer flushed, stores flushed, checkpoints written,
// offsets committed; a restore thread flushes and checkpoints what it restores), reports its
// status, and waits until Release. A thread that finished its loop counts as held.
//
//   running --Request--> requested --(owner at a safe point) Hold--> held --Release--> running
//   any --Finished--> finished (Request and AwaitHeld return at once)
//
// Thread-safety: Request, AwaitHeld and Release from the checkpointing thread; requested,
// Hold and Finished from the owner thread only.
#ifndef RESTORESIM_CORE_RUNTIME_HOLD_POINT_H_
#define RESTORESIM_CORE_RUNTIME_HOLD_POINT_H_

#include <atomic>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "core/port/checkpoint_context.h"
#include "core/sync/condvar.h"
#include "core/sync/mutex.h"

namespace restoresim {

class HoldPoint {
 public:
  explicit HoldPoint(std::string name) : name_(std::move(name)) {}

  void Request();
  // Waits until the owner holds (or finished); returns what its preparation returned.
  absl::Status AwaitHeld();
  void Release();

  bool requested() const { return requested_.load(std::memory_order_relaxed); }
  // At a safe point of the owner thread. Returns once released (true when it did hold).
  bool Hold(const std::function<absl::Status()>& prepare);
  void Finished();

  const std::string& name() const { return name_; }

 private:
  enum class State { kRunning, kRequested, kHeld, kFinished };

  const std::string name_;
  std::atomic<bool> requested_{false};
  Mutex mu_{"hold_point_mu"};
  CondVar cv_{"hold_point_cv"};
  State state_ ABSL_GUARDED_BY(mu_) = State::kRunning;
  absl::Status prepared_ ABSL_GUARDED_BY(mu_);
};

// A thread of the runtime as a checkpoint resource: BeforeCheckpoint holds it at its next safe
// point, AfterRestore lets it go.
class HoldResource final : public CheckpointResource {
 public:
  HoldResource(std::string kind, HoldPoint& hold) : kind_(std::move(kind)), hold_(hold) {}
  std::string ResourceName() const override { return kind_ + " " + hold_.name(); }
  absl::Status BeforeCheckpoint(CheckpointContext&) override {
    hold_.Request();
    return hold_.AwaitHeld();
  }
  absl::Status AfterRestore(CheckpointContext&) override {
    hold_.Release();
    return absl::OkStatus();
  }

 private:
  const std::string kind_;
  HoldPoint& hold_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_HOLD_POINT_H_
