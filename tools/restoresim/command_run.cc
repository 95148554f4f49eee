#include "tools/restoresim/command_run.h"

#include <cstdio>

#include "tools/restoresim/commands.h"
#include "tools/restoresim/interrupt.h"
#include "tools/restoresim/output_file.h"

namespace restoresim::tools {

int CommandRun::Usage(std::string_view message) const {
  Say(message);
  return kExitUsage;
}

void CommandRun::Say(std::string_view message) const {
  std::fprintf(stderr, "%s: %.*s\n", prefix_.c_str(), static_cast<int>(message.size()),
               message.data());
}

absl::Status CommandRun::OpenOutput(const std::string& path) const {
  if (path.empty()) return absl::OkStatus();
  if (absl::Status s = CheckOutputPath(path); !s.ok()) return s;
  if (path == "-") ReserveStdoutForData();
  return absl::OkStatus();
}

const std::atomic<bool>& CommandRun::Stop() {
  if (stop_ == nullptr) stop_ = &InstallInterruptHandlers();
  return *stop_;
}

int CommandRun::ExitCode(bool interrupted, bool findings) {
  if (interrupted) return kExitInterrupted;
  return findings ? kExitFindings : kExitOk;
}

}  // namespace restoresim::tools
