// Checker: one invariant of the oracle (oracle.h), in a file of its own under checks/. A checker
// is a RuntimeObserver that judges events: it reads the Ledger (the state before the event;
// the Oracle updates it after every checker saw the event) and fails the run with Violation,
// naming its invariant. A new invariant is a new file and one line in checks/checkers.cc.
//
// Thread-safety: not thread-safe; the oracle's OS thread only.
#ifndef RESTORESIM_PROPERTIES_CHECKER_H_
#define RESTORESIM_PROPERTIES_CHECKER_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/runtime_observer.h"
#include "properties/ledger.h"
#include "sim/simulation.h"

namespace restoresim::properties {

// Budgets of work a scenario accepts as wasted (no_wasted_work); 0 by default.
struct WasteBudget {
  int64_t wanted_closes_max = 0;       // tasks closed while assigned as they were
  int64_t rerestored_records_max = 0;  // records restored below a checkpoint already written
};

struct OracleCounts {
  int64_t events = 0;                // hook calls observed
  int64_t store_checks = 0;          // store comparisons against the changelog's history
  int64_t store_checks_skipped = 0;  // stores that could not be read
  int64_t wanted_closes = 0;
  int64_t rerestored_records = 0;
};

// What every checker may use.
class OracleContext {
 public:
  OracleContext(sim::Simulation& sim, Ledger& ledger);

  sim::Simulation& sim() { return sim_; }
  const sim::Simulation& sim() const { return sim_; }
  const Ledger& ledger() const { return ledger_; }
  OracleCounts& counts() { return counts_; }
  WasteBudget& budget() { return budget_; }
  std::string CurrentThreadName() const;
  // The same without a copy (valid until the next thread is spawned).
  std::string_view CurrentThreadView() const;
  // Whether a simulated thread of this name exists (has been started) in the run.
  bool ThreadExists(std::string_view name);
  [[noreturn]] void Violation(std::string_view invariant, std::string_view who,
                              std::string detail);

 private:
  sim::Simulation& sim_;
  Ledger& ledger_;
  OracleCounts counts_;
  WasteBudget budget_;
  std::vector<std::string> thread_names_;  // refreshed when the thread count changes
};

class Checker : public RuntimeObserver {
 public:
  Checker(OracleContext& context, std::string_view invariant)
      : context_(context), invariant_(invariant) {}
  std::string_view invariant() const { return invariant_; }
  // End-of-run checks, after the runtime shut down.
  virtual void Final() {}

 protected:
  const Ledger& ledger() const { return context_.ledger(); }
  OracleContext& context() { return context_; }
  [[noreturn]] void Violation(std::string_view who, std::string detail) {
    context_.Violation(invariant_, who, std::move(detail));
  }

 private:
  OracleContext& context_;
  const std::string_view invariant_;
};

// Every checker of the oracle, in the order they see each event (checks/checkers.cc).
std::vector<std::unique_ptr<Checker>> AllCheckers(OracleContext& context);

}  // namespace restoresim::properties

#endif  // RESTORESIM_PROPERTIES_CHECKER_H_
