// A soak instance as a child process: `restoresim soak-instance ...` started with fork and
// exec of the running binary, its output to a log file, signalled, killed, reaped. The driver
// (soak_driver.h) holds one per instance incarnation.
//
// Thread-safety: one thread (the driver's) uses an InstanceProcess.
#ifndef RESTORESIM_SOAK_SOAK_PROCESS_H_
#define RESTORESIM_SOAK_SOAK_PROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/sync/clock.h"

namespace restoresim::soak {

class InstanceProcess {
 public:
  // Starts `exe` with `args` (argv[1..]), stdout and stderr appended to `log_path`.
  static absl::StatusOr<InstanceProcess> Spawn(const std::string& exe,
                                               const std::vector<std::string>& args,
                                               const std::string& log_path);
  InstanceProcess(InstanceProcess&& other) noexcept;
  InstanceProcess& operator=(InstanceProcess&& other) noexcept;
  ~InstanceProcess();  // kills and reaps a child still running

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !exit_code_.has_value(); }
  void Signal(int signal);
  // The exit code once it ended (128 + signal when killed by one); nullopt while it runs.
  std::optional<int> Poll();
  // Polls until it ended or timeout_ns passed.
  std::optional<int> WaitExit(Clock& clock, TimeNs timeout_ns);

 private:
  explicit InstanceProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

}  // namespace restoresim::soak

#endif  // RESTORESIM_SOAK_SOAK_PROCESS_H_
