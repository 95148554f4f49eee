// Runtime, part 4: pause and resume (KIP-834; runtime.h states the rules). Kafka's
// KafkaStreams.pause() pauses every named topology (or the unnamed one), isPaused() is true when
// all are; this runtime has one topology, named by config topology_name.
#include <fmt/format.h>

#include "core/runtime/runtime.h"
#include "core/util/check.h"

namespace restoresim {

// Not under mu_: a state listener (called under it) may pause. The flag's change and its report
// are one step (TopologyPause::Set has no scheduling point); a thread made after the names were
// read reads the flag at its first iteration like any other, the oracle just does not name it.
void Runtime::SetPaused(bool paused) {
  std::vector<std::string> threads;
  const std::vector<StreamThread*> snapshot = ThreadsSnapshot();
  for (StreamThread* t : snapshot) {
    threads.push_back(t->name());
    threads.push_back(t->restore_thread().name());
  }
  pause_.Set(paused, threads);
  RS_CHECK_EQ(pause_.paused(), paused, "runtime '{}': topology '{}' not {}", Label(),
              pause_.topology(), paused ? "paused" : "resumed");
  // Kafka's KafkaStreams.resume(): each state updater is signalled, so one that waits for work
  // with every task paused resumes them now (issue 23, bug 2).
  if (!paused) {
    for (StreamThread* t : snapshot) t->restore_thread().SignalResume();
  }
}

absl::Status Runtime::PauseTopology(std::string_view topology) {
  if (topology != pause_.topology()) {
    return absl::NotFoundError(fmt::format("runtime '{}' has no topology named '{}' (its topology "
                                           "is '{}')",
                                           Label(), topology, pause_.topology()));
  }
  SetPaused(true);
  return absl::OkStatus();
}

absl::Status Runtime::ResumeTopology(std::string_view topology) {
  if (topology != pause_.topology()) {
    return absl::NotFoundError(fmt::format("runtime '{}' has no topology named '{}' (its topology "
                                           "is '{}')",
                                           Label(), topology, pause_.topology()));
  }
  SetPaused(false);
  return absl::OkStatus();
}

absl::StatusOr<bool> Runtime::IsTopologyPaused(std::string_view topology) const {
  if (topology != pause_.topology()) {
    return absl::NotFoundError(
        fmt::format("runtime '{}' has no topology named '{}'", Label(), topology));
  }
  return pause_.paused();
}

void Runtime::Pause() { SetPaused(true); }
void Runtime::Resume() { SetPaused(false); }
bool Runtime::IsPaused() const { return pause_.paused(); }

}  // namespace restoresim
