#include "core/util/check.h"

#include <cstdio>
#include <cstdlib>

#include "core/util/sim_hooks.h"

namespace restoresim {

void CheckFailed(const char* file, int line, const char* condition, const std::string& message) {
  std::string detail = condition;
  if (!message.empty()) detail += ": " + message;
  std::string_view path = file;
  while (path.starts_with("../")) path.remove_prefix(3);  // relative to the build directory
  Failure failure = CheckFailure(fmt::format("{}:{}", path, line), std::move(detail));
  if (SimHooks* sim = CurrentSim(); sim != nullptr) {
    // Fails this run only (or, while a failed run is torn down, notes it): never the sweep.
    sim->Fail(std::move(failure));
  }
  const std::string text = failure.Render();
  std::fprintf(stderr, "restoresim: %s\n", text.c_str());
  std::fflush(stderr);
  std::abort();
}

void InvariantFailed(const char* invariant, std::string who, const std::string& message) {
  Failure failure = InvariantFailure(invariant, who, message);
  if (SimHooks* sim = CurrentSim(); sim != nullptr) sim->Fail(std::move(failure));
  const std::string text = failure.Render();
  std::fprintf(stderr, "restoresim: %s\n", text.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace restoresim
