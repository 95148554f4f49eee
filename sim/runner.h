// Runs one program for one seed: derives every stream from the master seed, builds the
// strategy and the simulation, runs, and returns the outcome with the run's fingerprint. Also
// renders the one-line command that replays a run.
//
// Thread-safety: RunProgram may be called concurrently from different OS threads.
#ifndef RESTORESIM_SIM_RUNNER_H_
#define RESTORESIM_SIM_RUNNER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/program.h"
#include "sim/simulation.h"
#include "sim/strategy.h"

namespace restoresim::sim {

// Everything that decides a run besides the program. One seed decides the rest.
struct RunConfig {
  uint64_t seed = 0;
  StrategySpec strategy;
  uint64_t steps_max = 0;  // 0: the program's default
  uint32_t spurious_wakeup_per_mille = 10;
  TraceMode trace_mode = TraceMode::kHashOnly;
  bool record_choices = false;
  // When set, the run follows these strategy answers (a recorded schedule) and falls back to
  // `replay_fallback` after them (and for an answer that does not fit).
  std::optional<std::vector<uint64_t>> replay_choices;
  // kSeeded: the seeded strategy (what replaying a repro file does). kQuiet: QuietStrategy,
  // non-preemptive and without data events, and recorded picks of threads that cannot run are
  // skipped (what the shrinker's edited candidates run with). Not stored in repro files: a
  // recorded schedule that covers the whole run never reaches its fallback.
  enum class ReplayFallback : uint8_t { kSeeded, kQuiet };
  ReplayFallback replay_fallback = ReplayFallback::kSeeded;
};

struct RunResult {
  RunOutcome outcome;
  uint64_t trace_hash = 0;
  uint64_t steps = 0;
  uint64_t trace_events = 0;
  TimeNs end_time_ns = 0;
  size_t threads = 0;
  StrategySpec strategy;         // as run (pct step estimate filled in)
  bool replay_diverged = false;  // replay_choices did not fit the run
  std::vector<uint64_t> choices;  // when record_choices
  std::vector<ChoiceInfo> choice_infos;  // when record_choices: what each choice was
  std::map<std::string, uint64_t> coverage;  // coverage marks made ("cover/..."), by name
  // The finished simulation, kept in TraceMode::kFull for timelines and inspection.
  std::unique_ptr<Simulation> simulation;
};

// Seeds of the independent streams of a run, derived from the master seed by name.
struct SeedStreams {
  uint64_t strategy;
  uint64_t program;
  static SeedStreams Derive(uint64_t master_seed);
};

RunResult RunProgram(const Program& program, const RunConfig& config);
// The same run, with config.replay_choices moved into it rather than copied (a long recorded
// schedule is 8 bytes a choice): the caller's replay_choices is left empty, the rest as it was.
RunResult RunProgram(const Program& program, RunConfig&& config);

// "restoresim replay <program> --seed <n> --strategy <s> [...]": every option that is not at
// its default, so the line reproduces the run exactly.
std::string ReplayCommand(const Program& program, const RunConfig& config);

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_RUNNER_H_
