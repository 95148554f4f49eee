// Runtime, part 4: pause and resume (KIP-834; runtime.h states the rules). Kafka's
// KafkaStreams.pause() pauses every named topology (or the unnamed one), isPaused() is true when
// all are; this runtime has one topology, named by config topology_name.
#include <fmt/format.h>

#include "core/runtime/runtime.h"
#include "core/util/check.h"

namespace restoresim {

void Runtime::SetPaused(bool paused) {
  MutexLock lock(mu_);  // orders Set calls, and no thread is made while the names are read
  std::vector<std::string> threads;
  for (const auto& t : threads_) {
    threads.push_back(t->name());
    threads.push_back(t->restore_thread().name());
  }
  pause_.Set(paused, threads);
  RS_CHECK_EQ(pause_.paused(), paused, "runtime '{}': topology '{}' not {}", Label(),
              pause_.topology(), paused ? "paused" : "resumed");
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
