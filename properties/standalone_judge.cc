#include "properties/standalone_judge.h"

namespace restoresim::properties {

// StandaloneHost::Fail throws OracleStopped out of the checker that found the violation; the
// host keeps the failure and is Aborting() from then on.
void StandaloneJudge::OnEvent(const events::Event& event) {
  try {
    oracle_.OnEvent(event);
  } catch (const OracleStopped&) {
  }
}

void StandaloneJudge::Finish() {
  try {
    oracle_.CheckFinal();
  } catch (const OracleStopped&) {
  }
}

}  // namespace restoresim::properties
