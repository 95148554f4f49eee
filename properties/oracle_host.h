// OracleHost: what the invariant oracle needs of the world it judges, beyond the events — how
// to end the run at a violation, whether the run is being torn down, and which threads exist.
// The simulator implements it (scenarios/sim_oracle_host.h: Fail fails the simulation with
// its step number and unwinds the simulated thread); a stream judged outside the simulator
// uses StandaloneHost (a violation is kept and stops the judging).
//
// Thread-safety: called by the oracle's caller only (one thread at a time).
#ifndef RESTORESIM_PROPERTIES_ORACLE_HOST_H_
#define RESTORESIM_PROPERTIES_ORACLE_HOST_H_

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "core/util/failure.h"

namespace restoresim::properties {

class OracleHost {
 public:
  virtual ~OracleHost() = default;
  // Ends the judging at a violation; never returns (the simulator unwinds the simulated
  // thread, StandaloneHost throws OracleStopped).
  [[noreturn]] virtual void Fail(Failure failure) = 0;
  // True while a failed run unwinds: the oracle ignores events then.
  virtual bool Aborting() const = 0;
  // Whether a thread of this name has been started in the run.
  virtual bool ThreadExists(std::string_view name) = 0;
  // Each event's thread, before the event is judged (a host that knows no threads of its
  // own learns them here).
  virtual void NoteThread(std::string_view /*thread*/) {}
};

// Thrown by StandaloneHost::Fail to end the judging of one event; StandaloneJudge catches it.
struct OracleStopped {};

// A host outside the simulator: the threads that exist are those whose events were seen; the
// first violation is kept and every later event ignored.
class StandaloneHost final : public OracleHost {
 public:
  [[noreturn]] void Fail(Failure failure) override;
  bool Aborting() const override { return failure_.has_value(); }
  bool ThreadExists(std::string_view name) override { return threads_.contains(name); }
  void NoteThread(std::string_view thread) override;
  const std::optional<Failure>& failure() const { return failure_; }

 private:
  std::optional<Failure> failure_;
  std::set<std::string, std::less<>> threads_;
};

}  // namespace restoresim::properties

#endif  // RESTORESIM_PROPERTIES_ORACLE_HOST_H_
