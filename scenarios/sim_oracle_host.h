// SimOracleHost: the simulator's side of the invariant oracle (properties/oracle_host.h). A
// violation fails the simulation (which stamps its step number and unwinds the simulated
// thread); a failed run being torn down is Aborting(); the threads that exist are the
// simulation's.
//
// Thread-safety: the simulation's OS thread only, like the simulation itself.
#ifndef RESTORESIM_SCENARIOS_SIM_ORACLE_HOST_H_
#define RESTORESIM_SCENARIOS_SIM_ORACLE_HOST_H_

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "properties/oracle_host.h"
#include "sim/simulation.h"

namespace restoresim::testing {

class SimOracleHost final : public properties::OracleHost {
 public:
  explicit SimOracleHost(sim::Simulation& sim) : sim_(sim) {}

  [[noreturn]] void Fail(Failure failure) override { sim_.Fail(std::move(failure)); }
  bool Aborting() const override { return sim_.Aborting(); }
  bool ThreadExists(std::string_view name) override {
    if (thread_names_.size() != sim_.thread_count()) {
      thread_names_.clear();
      for (SimThreadId t = 0; t < sim_.thread_count(); ++t) {
        thread_names_.push_back(sim_.thread_name(t));
      }
    }
    return std::find(thread_names_.begin(), thread_names_.end(), name) != thread_names_.end();
  }

 private:
  sim::Simulation& sim_;
  std::vector<std::string> thread_names_;  // refreshed when the thread count changes
};

}  // namespace restoresim::testing

#endif  // RESTORESIM_SCENARIOS_SIM_ORACLE_HOST_H_
