#include "tools/restoresim/sweep_summary.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "tools/restoresim/invocation.h"

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

bool ExpectedFindings(const sim::ScenarioReport& s) {
  return s.bug_expected && s.found_runs > 0 && s.AsExpected();
}

// One line per scenario whose failures were all expected: the first finding and its replay.
void PrintExpectedFindings(const sim::SweepReport& r) {
  bool listed_any = false;
  for (const sim::ScenarioReport& s : r.scenarios) {
    if (!ExpectedFindings(s)) continue;
    auto first = std::find_if(r.failures.begin(), r.failures.end(),
                              [&](const sim::FailureReport& f) {
                                return f.scenario == s.name && f.seed == s.first_found_seed;
                              });
    if (first == r.failures.end()) continue;  // not among the failures kept
    if (!listed_any) Print("\nexpected findings (--all-failures shows each in full):\n");
    listed_any = true;
    const auto invariant = first->failure.find("invariant");
    const std::string what = invariant != first->failure.end() && invariant->is_string()
                                 ? "invariant:" + invariant->get<std::string>()
                                 : first->outcome;
    Print(fmt::format("  {} found at seed {} [{}]: {}\n", s.name, first->seed, what,
                      Runnable(first->replay)));
  }
}

// Planted bugs no run failed on: not a failure of the sweep (a short one may miss them), said.
void PrintNotFound(const sim::SweepReport& r) {
  bool listed_any = false;
  for (const sim::ScenarioReport& s : r.scenarios) {
    if (!s.NotFound()) continue;
    if (!listed_any) {
      Print("\nplanted bugs not found (not a failure: some need more seeds; `restoresim zoo` "
            "measures how many):\n");
    }
    listed_any = true;
    Print(fmt::format("  {}: not found within {} seeds\n", s.name, s.runs));
  }
}

// `path` without its folders and its ".json".
std::string Stem(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.ends_with(".json")) name.resize(name.size() - 5);
  return name;
}

// What to do with a failure next: its lines to shrink it and to open its timeline.
void PrintNextSteps(const sim::FailureReport& f) {
  const std::string bin = BinaryWord();
  const std::string repro = ShellWord(f.repro);
  Print(fmt::format("  next:   {} shrink {}\n", bin, repro));
  Print(fmt::format("          {} replay --repro {} --timeline {}.trace.json   "
                    "# open it at https://ui.perfetto.dev\n",
                    bin, repro, ShellWord(Stem(f.repro))));
}

// The failures that were re-run and saved (the first few of each scenario); those of expected
// findings only with all_failures, or when their repro has a problem. Under the first
// unexpected failure, the next steps.
void PrintFailures(const sim::SweepReport& r, bool all_failures) {
  bool next_steps_shown = false;
  for (const sim::FailureReport& f : r.failures) {
    if (!f.has_repro) continue;
    const bool problem = !f.repro_error.empty() || !f.reproduced;
    const bool expected = std::any_of(r.scenarios.begin(), r.scenarios.end(),
                                      [&](const sim::ScenarioReport& s) {
                                        return s.name == f.scenario && ExpectedFindings(s);
                                      });
    if (expected && !all_failures && !problem) continue;
    Print(fmt::format("\n{} seed {}: {}\n  replay: {}\n", f.scenario, f.seed, f.message,
                      Runnable(f.replay)));
    if (!f.repro.empty()) Print(fmt::format("  repro:  {}\n", f.repro));
    if (!expected && !next_steps_shown && !f.repro.empty() && f.repro_error.empty()) {
      PrintNextSteps(f);
      next_steps_shown = true;
    }
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
  PrintNotFound(r);
  if (!options.quiet) {
    if (!options.all_failures) PrintExpectedFindings(r);
    PrintFailures(r, options.all_failures);
  }
  if (!options.interrupted.empty()) {
    Print(fmt::format("\n{}\nverdict: INTERRUPTED (not every run was done)\n",
                      options.interrupted));
    return;
  }
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
