#include "tools/restoresim/sweep_summary.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace restoresim::tools {
namespace {

void Print(const std::string& text) { std::fputs(text.c_str(), stdout); }

void PrintTable(const sim::SweepReport& r) {
  size_t width = std::string_view("scenario").size();
  for (const sim::ScenarioReport& s : r.scenarios) width = std::max(width, s.name.size());
  Print(fmt::format("\n{:<{}} {:>8} {:>8} {:>11} {:>11} {:>10}\n", "scenario", width, "runs",
                    "failed", "verdict", "first-fail", "steps/run"));
  for (const sim::ScenarioReport& s : r.scenarios) {
    const std::string first =
        s.failed_runs > 0 ? std::to_string(s.FirstSeedShown()) : std::string("-");
    Print(fmt::format("{:<{}} {:>8} {:>8} {:>11} {:>11} {:>10.1f}\n", s.name, width, s.runs,
                      s.failed_runs, s.Verdict(), first,
                      s.runs ? static_cast<double>(s.steps) / static_cast<double>(s.runs) : 0.0));
  }
}

// Each scenario's coverage marks: the windows its runs reached, in how many of them.
void PrintCoverage(const sim::SweepReport& r) {
  Print("\ncoverage (runs that reached each window):\n");
  for (const sim::ScenarioReport& s : r.scenarios) {
    if (s.coverage.empty()) continue;
    Print(s.name + "\n");
    for (const auto& [mark, runs] : s.coverage) Print(fmt::format("  {:>8}  {}\n", runs, mark));
  }
}

// The failures that were re-run and saved (the first few of each scenario).
void PrintFailures(const sim::SweepReport& r) {
  for (const sim::FailureReport& f : r.failures) {
    if (!f.has_repro) continue;
    Print(fmt::format("\n{} seed {}: {}\n  replay: {}\n", f.scenario, f.seed, f.message,
                      f.replay));
    if (!f.repro.empty()) Print(fmt::format("  repro:  {}\n", f.repro));
    if (!f.repro_error.empty()) Print(fmt::format("  repro NOT SAVED: {}\n", f.repro_error));
    if (!f.reproduced) {
      Print("  NOT REPRODUCED: a re-run gave another trace (non-determinism)\n");
    }
  }
}

}  // namespace

void PrintSweepSummary(const sim::SweepReport& r, const std::string& totals,
                       const SummaryOptions& options) {
  PrintTable(r);
  if (options.coverage) PrintCoverage(r);
  Print("\n" + totals + "\n");
  if (!options.quiet) PrintFailures(r);
  const bool reproduced = std::all_of(r.failures.begin(), r.failures.end(),
                                      [](const sim::FailureReport& f) {
                                        return !f.has_repro || f.reproduced;
                                      });
  Print(fmt::format("\n{}\n", r.Ok() ? "verdict: every scenario behaved as expected"
                              : !r.AllAsExpected() || !reproduced
                                  ? "verdict: UNEXPECTED results (see the table above)"
                                  : "verdict: repro files could not be saved (see above)"));
}

}  // namespace restoresim::tools
