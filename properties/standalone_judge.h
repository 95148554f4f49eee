// StandaloneJudge: the invariant oracle outside the simulator — on a real-thread run (install
// an EventRecorder over it: the recorder's lock serialises the threads' events, so the judge
// sees one order consistent with each thread's) or over an event file (`restoresim check`).
// The first violation is kept (failure()) and every later event ignored; nothing is aborted:
// the run goes on and its owner asks afterwards.
//
// Thread-safety: not thread-safe; OnEvent is called by one thread at a time (the recorder
// holds its lock around it). Read failure() after the run's threads are joined.
#ifndef RESTORESIM_PROPERTIES_STANDALONE_JUDGE_H_
#define RESTORESIM_PROPERTIES_STANDALONE_JUDGE_H_

#include <optional>

#include "core/events/event.h"
#include "properties/oracle.h"
#include "properties/oracle_host.h"

namespace restoresim::properties {

class StandaloneJudge final : public events::EventSink {
 public:
  StandaloneJudge() : oracle_(host_) {}

  void OnEvent(const events::Event& event) override;
  // The end-of-run checks (as a RunFinished event does), after the runtime shut down.
  void Finish();
  const std::optional<Failure>& failure() const { return host_.failure(); }
  Oracle& oracle() { return oracle_; }

 private:
  StandaloneHost host_;
  Oracle oracle_;
};

}  // namespace restoresim::properties

#endif  // RESTORESIM_PROPERTIES_STANDALONE_JUDGE_H_
