#include "sim/demos/demos.h"

namespace restoresim::sim {

absl::Status RegisterDemoPrograms(ProgramRegistry& registry) {
  for (auto* add : {&RegisterLostUpdate, &RegisterAbbaDeadlock, &RegisterMissedNotification,
                    &RegisterOrderViolations}) {
    if (absl::Status s = add(registry); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace restoresim::sim
