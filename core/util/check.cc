#include "core/util/check.h"

#include <cstdio>
#include <cstdlib>

#include "core/port/sim_hooks.h"

namespace restoresim {

void CheckFailed(const char* file, int line, const char* condition, const std::string& message) {
  std::string text = fmt::format("check failed at {}:{}: {}", file, line, condition);
  if (!message.empty()) text += ": " + message;
  if (SimHooks* sim = CurrentSim(); sim != nullptr && !sim->Aborting()) {
    sim->Fail(std::move(text));  // unwinds this simulated thread; the run reports it
  }
  std::fprintf(stderr, "restoresim: %s\n", text.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace restoresim
