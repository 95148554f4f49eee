#include "tools/restoresim/interrupt.h"

#include <signal.h>

#include <cstring>

namespace restoresim::tools {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "a signal handler may only touch lock-free atomics");

void OnSignal(int signal_number) {
  int none = 0;
  g_signal.compare_exchange_strong(none, signal_number);
  g_interrupted.store(true);
}

}  // namespace

const std::atomic<bool>& InstallInterruptHandlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // writes of the report in progress are not cut short
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  return g_interrupted;
}

std::string InterruptSignalName() {
  switch (g_signal.load()) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "";
  }
}

}  // namespace restoresim::tools
