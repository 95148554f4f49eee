// `restoresim zoo`: the harness against the zoo of mutations (core/util/mutation.h). For
// every bug program (scenarios/bug_programs.h) and strategy it runs independent sweeps over
// disjoint seed ranges, each until its first failure that names one of the program's expected
// invariants, and reports seeds to first failure (median and worst), wall seconds, which
// invariant caught it, and how small the first failure shrinks. The unmutated base scenario
// runs over the same seeds and must pass: a zoo whose plain runtime is flagged proves nothing.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/util/shown.h"
#include "scenarios/bug_programs.h"
#include "sim/program.h"
#include "sim/shrink.h"
#include "sim/sweep.h"
#include "tools/restoresim/commands.h"
#include "tools/restoresim/interrupt.h"
#include "tools/restoresim/json_output.h"
#include "tools/restoresim/mutation_names.h"
#include "tools/restoresim/zoo_search.h"

namespace restoresim::tools {
namespace {

struct ZooOptions {
  std::string mutations = "all";  // "all" or a comma-separated list of mutation names
  std::string strategies = "random,pct:3";
  uint32_t sweeps = 5;
  uint64_t seeds_max = 20'000;  // per sweep
  uint64_t seed_start = 0;
  double budget_s = 10;         // per sweep
  uint32_t jobs = 0;
  uint64_t shrink_runs = 300;
  bool json = false;
  bool quiet = false;
  bool list = false;
};

struct StrategyResult {
  std::string strategy;
  std::vector<SearchResult> sweeps;
  uint64_t plain_runs = 0;
  uint64_t plain_failures = 0;
  std::string plain_first_failure;
  sim::ScheduleMetrics shrunk_before;
  sim::ScheduleMetrics shrunk_after;
  bool shrunk = false;
  bool interrupted = false;  // a sweep or the shrink was stopped: the result is not decided

  bool AllFound() const {
    return std::all_of(sweeps.begin(), sweeps.end(), [](const SearchResult& s) { return s.found; });
  }
};

struct Row {
  const scenarios::BugProgram* bug = nullptr;
  std::vector<StrategyResult> results;
};

template <typename T, typename F>
std::pair<double, double> MedianAndWorst(const std::vector<T>& items, F value) {
  std::vector<double> v;
  for (const T& item : items) v.push_back(value(item));
  if (v.empty()) return {0, 0};
  std::sort(v.begin(), v.end());
  return {v[(v.size() - 1) / 2], v.back()};
}

absl::StatusOr<std::vector<sim::StrategySpec>> ParseStrategies(const std::string& text) {
  std::vector<sim::StrategySpec> specs;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string one = text.substr(start, comma == std::string::npos ? comma : comma - start);
    absl::StatusOr<sim::StrategySpec> spec = sim::StrategySpec::Parse(one);
    if (!spec.ok()) return spec.status();
    specs.push_back(*spec);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return specs;
}

// `--mutations`: "all", names or globs ('*', '?'), comma-separated, as `--scenario`; the
// mutations any element selects, each once, in the zoo's order. An element that selects
// nothing is an error naming it.
absl::StatusOr<std::vector<const scenarios::BugProgram*>> SelectBugs(const std::string& names) {
  std::set<const scenarios::BugProgram*> selected;
  for (std::string_view element : sim::SplitCommas(names)) {
    size_t matched = 0;
    for (const scenarios::BugProgram& bug : scenarios::BugPrograms()) {
      if (element == "all" || sim::GlobMatches(element, InfoOf(bug.mutation).name)) {
        selected.insert(&bug);
        ++matched;
      }
    }
    if (matched > 0) continue;
    return absl::InvalidArgumentError(fmt::format(
        "--mutations: '{}'{} selects nothing{}; give all, names or globs ('*', '?'), "
        "comma-separated (`restoresim zoo --list` lists the {})",
        Shown(element), element.size() == names.size() ? "" : " (in '" + Shown(names) + "')",
        MutationSpellingHint(element), scenarios::BugPrograms().size()));
  }
  std::vector<const scenarios::BugProgram*> bugs;
  for (const scenarios::BugProgram& bug : scenarios::BugPrograms()) {
    if (selected.contains(&bug)) bugs.push_back(&bug);
  }
  return bugs;
}

// Shrinks the first failure of a sweep (recorded again with its schedule). An error is a worker
// thread that could not start; a repro that does not shrink leaves the result unshrunk.
absl::Status ShrinkFirst(const sim::Program& program, const sim::StrategySpec& strategy,
                         const SearchResult& first, const ZooOptions& o, uint32_t jobs,
                         const std::atomic<bool>* stop, StrategyResult& result) {
  sim::RunConfig config;
  config.seed = first.seed;
  config.strategy = strategy;
  config.record_choices = true;
  const sim::RunResult run = sim::RunProgram(program, config);
  sim::Repro repro;
  repro.scenario = program.name;
  repro.config = config;
  repro.config.record_choices = false;
  repro.config.replay_choices = run.choices;
  repro.outcome = std::string(sim::OutcomeKindName(run.outcome.kind));
  repro.message = run.outcome.message;
  repro.failure = run.outcome.failure;
  repro.trace_hash = run.trace_hash;
  repro.steps = run.steps;
  absl::StatusOr<sim::ShrinkResult> shrunk = sim::ShrinkRepro(
      program, repro,
      {.runs_max = o.shrink_runs, .jobs = jobs, .on_progress = nullptr, .stop = stop});
  if (shrunk.status().code() == absl::StatusCode::kResourceExhausted) return shrunk.status();
  if (!shrunk.ok()) return absl::OkStatus();
  result.interrupted = shrunk->interrupted;
  result.shrunk = true;
  result.shrunk_before = shrunk->before;
  result.shrunk_after = shrunk->after;
  return absl::OkStatus();
}

// The sweeps of one mutation under one strategy, each with the plain runtime over the seeds it
// ran, then the shrink of the first failure. Stops early (result.interrupted) once `stop` is set.
absl::Status RunStrategy(const sim::Program& program, const sim::Program& base,
                         const sim::StrategySpec& strategy, const ZooOptions& o, uint32_t jobs,
                         const std::atomic<bool>* stop, ZooProgress& progress,
                         StrategyResult& result) {
  for (uint32_t k = 0; k < o.sweeps && !result.interrupted; ++k) {
    const uint64_t start = o.seed_start + k * o.seeds_max;
    absl::StatusOr<SearchResult> s =
        FindFirst(program, strategy, start, o.seeds_max, o.budget_s, jobs, stop);
    if (!s.ok()) return s.status();
    // The plain runtime over the seeds the search ran must pass.
    absl::StatusOr<PlainResult> plain = RunPlain(base, strategy, start, s->seeds_run, jobs, stop);
    if (!plain.ok()) return plain.status();
    result.interrupted = s->interrupted || plain->interrupted;
    result.plain_runs += plain->runs;
    result.plain_failures += plain->failures;
    if (result.plain_first_failure.empty()) result.plain_first_failure = plain->first_failure;
    result.sweeps.push_back(*std::move(s));
    progress.Step();
  }
  if (!result.interrupted && !result.sweeps.empty() && result.sweeps.front().found) {
    return ShrinkFirst(program, strategy, result.sweeps.front(), o, jobs, stop, result);
  }
  return absl::OkStatus();
}

void PrintTable(const std::vector<Row>& rows, const ZooOptions&) {
  std::printf("%s", fmt::format("\n{:<34} {:<16} {:<19} {:<7} {:>15} {:>13} {:>14} {}\n",
                                "mutation", "source", "caught by", "strategy",
                                "seeds (med/max)", "wall s (med/max)", "shrunk (pre/steps)",
                                "plain")
                        .c_str());
  for (const Row& row : rows) {
    const MutationInfo& info = InfoOf(row.bug->mutation);
    for (const StrategyResult& r : row.results) {
      std::string caught = "NOT FOUND";
      for (const SearchResult& s : r.sweeps) {
        if (s.found) {
          caught = s.invariant;
          break;
        }
      }
      const auto [seeds_med, seeds_max] =
          MedianAndWorst(r.sweeps, [](const SearchResult& s) { return double(s.seeds_run); });
      const auto [wall_med, wall_max] =
          MedianAndWorst(r.sweeps, [](const SearchResult& s) { return s.wall_seconds; });
      const std::string found = fmt::format("{}/{}", std::count_if(r.sweeps.begin(), r.sweeps.end(),
                                                                   [](const SearchResult& s) {
                                                                     return s.found;
                                                                   }),
                                            r.sweeps.size());
      const std::string shrunk =
          r.shrunk ? fmt::format("{}/{}", r.shrunk_after.preemptions, r.shrunk_after.steps) : "-";
      std::printf("%s", fmt::format("{:<34} {:<16} {:<19} {:<7} {:>7.0f}/{:<7.0f} "
                                    "{:>6.2f}/{:<6.2f} {:>14} {}{}\n",
                                    info.name, info.source, caught, r.strategy, seeds_med,
                                    seeds_max, wall_med, wall_max, shrunk,
                                    r.plain_failures == 0 ? "ok" : "FLAGGED",
                                    r.AllFound() ? "" : fmt::format(" (found in {} sweeps)", found))
                            .c_str());
    }
  }
}

nlohmann::json RowsJson(const std::vector<Row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& row : rows) {
    const MutationInfo& info = InfoOf(row.bug->mutation);
    for (const StrategyResult& r : row.results) {
      nlohmann::json sweeps = nlohmann::json::array();
      for (const SearchResult& s : r.sweeps) {
        sweeps.push_back({{"found", s.found},
                          {"seed_start", s.seed_start},
                          {"first_seed", s.found ? nlohmann::json(s.seed) : nlohmann::json()},
                          {"seeds_run", s.seeds_run},
                          {"wall_seconds", s.wall_seconds},
                          {"invariant", s.invariant},
                          {"budget_exhausted", s.budget_exhausted}});
      }
      nlohmann::json entry = {{"mutation", std::string(info.name)},
                              {"source", std::string(info.source)},
                              {"program", scenarios::BugProgramName(row.bug->mutation)},
                              {"base", std::string(row.bug->base)},
                              {"strategy", r.strategy},
                              {"sweeps", sweeps},
                              {"all_found", r.AllFound()},
                              {"plain_runs", r.plain_runs},
                              {"plain_failures", r.plain_failures}};
      if (!r.plain_first_failure.empty()) entry["plain_first_failure"] = r.plain_first_failure;
      if (r.shrunk) {
        entry["shrunk"] = {{"preemptions_before", r.shrunk_before.preemptions},
                           {"preemptions_after", r.shrunk_after.preemptions},
                           {"steps_before", r.shrunk_before.steps},
                           {"steps_after", r.shrunk_after.steps}};
      }
      out.push_back(std::move(entry));
    }
  }
  return out;
}

// Prints the table (or JSON) of the mutations decided; `planned` > 0: interrupted with that
// many mutations selected.
int Report(const ZooOptions& o, const std::vector<Row>& rows, bool ok, size_t planned) {
  const std::string interrupted =
      planned == 0 ? std::string()
                   : fmt::format("interrupted by {} after {} of {} mutations: the results are of "
                                 "those",
                                 InterruptSignalName(), rows.size(), planned);
  if (!interrupted.empty()) std::fprintf(stderr, "restoresim zoo: %s\n", interrupted.c_str());
  if (o.json) {
    nlohmann::json j = JsonDocument("restoresim-zoo", 1);
    j["rows"] = RowsJson(rows);
    j["ok"] = ok;
    if (!interrupted.empty()) j["interrupted"] = interrupted;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    PrintTable(rows, o);
    std::printf("\n%s\n", !interrupted.empty() ? "verdict: INTERRUPTED"
                           : ok ? "verdict: every mutation found by its invariants; the plain "
                                  "runtime passed the same seeds"
                                : "verdict: UNEXPECTED results (see the table above)");
  }
  if (!interrupted.empty()) return kExitInterrupted;
  return ok ? kExitOk : kExitFindings;
}

// `zoo --list`: the name of every mutation the zoo runs, one a line, in the zoo's order.
int ListMutations() {
  for (const scenarios::BugProgram& bug : scenarios::BugPrograms()) {
    std::printf("%s\n", std::string(InfoOf(bug.mutation).name).c_str());
  }
  return kExitOk;
}

int RunZoo(const ZooOptions& o) {
  absl::StatusOr<std::vector<sim::StrategySpec>> strategies = ParseStrategies(o.strategies);
  if (!strategies.ok()) {
    std::fprintf(stderr, "restoresim zoo: --strategy: %s\n",
                 std::string(strategies.status().message()).c_str());
    return kExitUsage;
  }
  absl::StatusOr<std::vector<const scenarios::BugProgram*>> bugs = SelectBugs(o.mutations);
  if (!bugs.ok()) {
    std::fprintf(stderr, "restoresim zoo: %s\n", std::string(bugs.status().message()).c_str());
    return kExitUsage;
  }
  if (o.sweeps == 0 || o.sweeps > 1000 || o.seeds_max == 0 || o.seeds_max > (uint64_t{1} << 32) ||
      o.budget_s <= 0 || o.budget_s > 86'400 || o.jobs > 256) {
    std::fprintf(stderr, "restoresim zoo: --sweeps in [1, 1000], --seeds-max in [1, 2^32], "
                         "--budget-s in (0, 86400], --jobs in [0, 256]\n");
    return kExitUsage;
  }
  const uint32_t jobs = o.jobs != 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  if (!o.json) {
    std::printf("%s", fmt::format("restoresim zoo: {} mutations, strategies={} sweeps={} "
                                  "seeds-max={} budget={}s per sweep jobs={}\n",
                                  bugs->size(), o.strategies, o.sweeps, o.seeds_max, o.budget_s,
                                  jobs)
                          .c_str());
    std::fflush(stdout);  // seen at once when piped, before a long zoo
  }
  const std::atomic<bool>* stop = &InstallInterruptHandlers();
  ZooProgress progress(!o.json && !o.quiet && isatty(STDERR_FILENO),
                       bugs->size() * strategies->size() * o.sweeps);
  std::vector<Row> rows;
  bool ok = true;
  bool interrupted = false;
  for (const scenarios::BugProgram* bug : *bugs) {
    const sim::Program* program = Programs().Find(scenarios::BugProgramName(bug->mutation));
    const sim::Program* base = Programs().Find(bug->base);
    if (program == nullptr || base == nullptr) {
      std::fprintf(stderr, "restoresim zoo: program %s or %s missing\n",
                   scenarios::BugProgramName(bug->mutation).c_str(),
                   std::string(bug->base).c_str());
      return kExitUsage;
    }
    Row row{.bug = bug, .results = {}};
    for (size_t i = 0; i < strategies->size() && !interrupted; ++i) {
      StrategyResult result{.strategy = (*strategies)[i].ToString()};
      const absl::Status s =
          RunStrategy(*program, *base, (*strategies)[i], o, jobs, stop, progress, result);
      if (!s.ok()) {
        progress.Done();
        std::fprintf(stderr, "restoresim zoo: %s\n", std::string(s.message()).c_str());
        return kExitUsage;
      }
      interrupted = result.interrupted;
      ok = ok && result.AllFound() && result.plain_failures == 0;
      row.results.push_back(std::move(result));
    }
    if (interrupted) break;  // a mutation only partly swept is not reported as decided
    rows.push_back(std::move(row));
  }
  progress.Done();
  return Report(o, rows, ok, interrupted ? bugs->size() : 0);
}
}  // namespace

Command AddZooCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "zoo", "sweep each mutation of the runtime until the default invariants catch it");
  auto o = std::make_shared<ZooOptions>();
  cmd->add_option("--mutations", o->mutations,
                  "'all', mutation names or globs ('*', '?'), comma-separated")
      ->capture_default_str();
  cmd->add_option("--strategy", o->strategies, "strategies, comma-separated (random, pct:D, pos)")
      ->capture_default_str();
  cmd->add_option("--sweeps", o->sweeps, "independent sweeps per mutation and strategy")
      ->capture_default_str();
  cmd->add_option("--seeds-max", o->seeds_max, "seeds per sweep at most (disjoint ranges)")
      ->capture_default_str();
  cmd->add_option("--seed-start", o->seed_start, "first seed of the first sweep")
      ->capture_default_str();
  cmd->add_option("--budget-s", o->budget_s, "wall seconds per sweep before it gives up")
      ->capture_default_str();
  cmd->add_option("--jobs", o->jobs, "worker threads (0: one per core)")->capture_default_str();
  cmd->add_option("--shrink-runs", o->shrink_runs, "candidate runs to shrink each first failure")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "print one JSON object instead of the table");
  cmd->add_flag("--quiet", o->quiet, "no progress bar");
  cmd->add_flag("--list", o->list, "print the mutations' names, one a line, and run nothing");
  return [o]() { return o->list ? ListMutations() : RunZoo(*o); };
}

}  // namespace restoresim::tools
