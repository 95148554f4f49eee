// CheckpointSignalHandler: the production trigger of a runtime's checkpoint/restore cycle. An
// opt-in handler for one signal (SIGUSR2 by default): a helper thread waits for it with
// sigwait — never in an async signal handler, where almost nothing may be called — and runs
// Runtime::Checkpoint(), then `image` (whatever takes the process image: a CRIU dump, a VM
// snapshot; empty: nothing, a fake notification), then Runtime::Restore(). A checkpoint that is
// abandoned skips the image and the restore.
//
// REQUIRES: installed before any other thread of the process starts (the runtime's included):
// the signal is blocked in the installing thread, and threads inherit the mask, so that only
// the helper receives it. A process that started threads earlier must block the signal in
// them itself.
//
// Thread-safety: Install and the destructor from the owner; cycles/last_status from any thread.
#ifndef RESTORESIM_CORE_RUNTIME_CHECKPOINT_SIGNAL_H_
#define RESTORESIM_CORE_RUNTIME_CHECKPOINT_SIGNAL_H_

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "core/runtime/runtime.h"
#include "core/sync/mutex.h"
#include "core/sync/thread.h"

namespace restoresim {

class CheckpointSignalHandler {
 public:
  static absl::StatusOr<std::unique_ptr<CheckpointSignalHandler>> Install(
      Runtime& runtime, int signo = SIGUSR2, std::function<absl::Status()> image = nullptr);
  ~CheckpointSignalHandler();  // stops the helper; the signal stays blocked

  // Completed cycles (abandoned checkpoints included) and the status of the last one.
  int64_t cycles() const { return cycles_.load(); }
  absl::Status last_status() const;

 private:
  CheckpointSignalHandler(Runtime& runtime, int signo, std::function<absl::Status()> image);
  void Run();
  absl::Status Cycle();

  Runtime& runtime_;
  const int signo_;
  std::function<absl::Status()> image_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> started_{false};
  pthread_t helper_{};
  std::atomic<int64_t> cycles_{0};
  mutable Mutex mu_{"checkpoint_signal_mu"};
  absl::Status last_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Thread> thread_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_CHECKPOINT_SIGNAL_H_
