#include <cstdio>
#include <cstdlib>

#include "fakes/restore_loop_programs.h"
#include "scenarios/runtime_programs.h"
#include "sim/demos/demos.h"
#include "tools/restoresim/commands.h"

namespace restoresim::tools {

const sim::ProgramRegistry& Programs() {
  static const sim::ProgramRegistry* registry = []() {
    auto* r = new sim::ProgramRegistry();
    absl::Status s = sim::RegisterDemoPrograms(*r);
    if (s.ok()) s = fakes::RegisterRestoreLoopPrograms(*r);
    if (s.ok()) s = scenarios::RegisterRuntimePrograms(*r);
    if (!s.ok()) {
      std::fprintf(stderr, "restoresim: internal error registering programs: %s\n",
                   std::string(s.message()).c_str());
      std::exit(kExitUsage);
    }
    return r;
  }();
  return *registry;
}

}  // namespace restoresim::tools
