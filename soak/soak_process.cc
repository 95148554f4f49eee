#include "soak/soak_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/util/check.h"

namespace restoresim::soak {

absl::StatusOr<InstanceProcess> InstanceProcess::Spawn(const std::string& exe,
                                                       const std::vector<std::string>& args,
                                                       const std::string& log_path) {
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    return absl::InternalError(fmt::format("open {}: {}", log_path, std::strerror(errno)));
  }
  std::vector<const char*> argv;
  argv.push_back(exe.c_str());
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    // An instance never outlives its driver (killed by a harness's timeout, say).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    // The driver's handlers and mask are not the child's.
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(exe.c_str(), const_cast<char* const*>(argv.data()));
    _exit(127);
  }
  const int fork_errno = errno;
  close(log);
  if (pid < 0) return absl::InternalError(fmt::format("fork: {}", std::strerror(fork_errno)));
  return InstanceProcess(pid);
}

InstanceProcess::InstanceProcess(InstanceProcess&& other) noexcept
    : pid_(other.pid_), exit_code_(other.exit_code_) {
  other.pid_ = -1;
}

InstanceProcess& InstanceProcess::operator=(InstanceProcess&& other) noexcept {
  if (this != &other) {
    if (running()) {
      Signal(SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    pid_ = other.pid_;
    exit_code_ = other.exit_code_;
    other.pid_ = -1;
  }
  return *this;
}

InstanceProcess::~InstanceProcess() {
  if (!running()) return;
  Signal(SIGKILL);
  waitpid(pid_, nullptr, 0);
}

void InstanceProcess::Signal(int signal) {
  RS_CHECK(pid_ > 0, "signal {} to no process", signal);
  if (running()) kill(pid_, signal);
}

std::optional<int> InstanceProcess::Poll() {
  if (exit_code_.has_value() || pid_ <= 0) return exit_code_;
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done == pid_) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status)
                                   : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  return exit_code_;
}

std::optional<int> InstanceProcess::WaitExit(Clock& clock, TimeNs timeout_ns) {
  const TimeNs deadline = DeadlineAfter(clock.NowNs(), timeout_ns);
  while (!Poll().has_value() && clock.NowNs() < deadline) clock.SleepFor(20 * kMillisecond);
  return Poll();
}

}  // namespace restoresim::soak
