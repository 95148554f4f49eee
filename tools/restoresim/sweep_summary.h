// The text summary of a sweep report, the same for `explore` (one process) and `merge` (the
// shards of one sweep): a table per scenario (runs, failures, verdict, first failing seed,
// steps per run), optionally the coverage marks, one totals line the caller words, one line per
// expected finding, the other failures that have repro files with their replay lines, and the
// verdict.
//
// Thread-safety: prints to stdout; call from one thread.
#ifndef RESTORESIM_TOOLS_RESTORESIM_SWEEP_SUMMARY_H_
#define RESTORESIM_TOOLS_RESTORESIM_SWEEP_SUMMARY_H_

#include <string>

#include "sim/sweep_report.h"

namespace restoresim::tools {

struct SummaryOptions {
  bool coverage = false;  // list each scenario's coverage marks
  bool quiet = false;     // no failure details
  // Without it, a scenario whose failures were all expected (a planted bug or demo, found)
  // takes one line: its first finding, the invariant and the replay line.
  bool all_failures = false;
  std::string interrupted;  // not empty: the sweep was cut short (why), and the verdict says so
};

// Prints the summary; `totals` is the line after the table (without its newline).
void PrintSweepSummary(const sim::SweepReport& report, const std::string& totals,
                       const SummaryOptions& options);

}  // namespace restoresim::tools

#endif  // RESTORESIM_TOOLS_RESTORESIM_SWEEP_SUMMARY_H_
