#include "sim/runner.h"

#include "core/util/run_context.h"

#include <fmt/format.h>

#include "core/port/random.h"
#include "core/util/prng.h"
#include "sim/virtual_clock.h"

namespace restoresim::sim {

SeedStreams SeedStreams::Derive(uint64_t master_seed) {
  const Prng master(master_seed);
  return SeedStreams{master.Fork("strategy").Next64(), master.Fork("program").Next64()};
}

namespace {

// `choices`: config.replay_choices, copied or moved by the caller.
RunResult Run(const Program& program, const RunConfig& config,
              std::optional<std::vector<uint64_t>> choices) {
  const SeedStreams streams = SeedStreams::Derive(config.seed);
  StrategySpec spec = config.strategy;
  if (spec.kind == StrategySpec::Kind::kPct && spec.pct_steps == 0) {
    spec.pct_steps = program.steps_hint;
  }
  std::unique_ptr<Strategy> strategy = MakeStrategy(spec, Prng(streams.strategy),
                                                    program.steps_hint);
  ReplayStrategy* replay = nullptr;
  if (choices.has_value()) {
    const bool quiet = config.replay_fallback == RunConfig::ReplayFallback::kQuiet;
    std::unique_ptr<Strategy> fallback = std::move(strategy);
    if (quiet) fallback = std::make_unique<QuietStrategy>();  // the seeded one goes unused
    auto r = std::make_unique<ReplayStrategy>(*std::move(choices), std::move(fallback),
                                              /*skip_unrunnable=*/quiet);
    replay = r.get();
    strategy = std::move(r);
  }

  SimOptions options;
  options.steps_max = config.steps_max != 0 ? config.steps_max : program.steps_max;
  options.spurious_wakeup_per_mille = config.spurious_wakeup_per_mille;
  options.trace_mode = config.trace_mode;
  options.record_choices = config.record_choices;
  auto simulation = std::make_unique<Simulation>(options, std::move(strategy));

  VirtualClock clock;
  SeededRandom random(streams.program);
  RunEnv env{clock, random, *simulation, config.seed};
  RunResult result;
  {
    // Each run installs its own run context (core/util/run_context.h): it starts without an
    // observer or mutations (a world installs its recorder, a bug program its mutations; the
    // simulation installs itself) and leaves none behind, even when a fiber that installed
    // some was abandoned rather than unwound.
    ScopedRunContext run_context(RunContext{});
    result.outcome = simulation->Run([&env, &program]() { program.body(env); });
  }
  result.trace_hash = simulation->trace().Hash();
  result.steps = simulation->steps();
  result.trace_events = simulation->trace().event_count();
  result.end_time_ns = simulation->now_ns();
  result.threads = simulation->thread_count();
  result.strategy = spec;
  result.replay_diverged = replay != nullptr && replay->diverged();
  result.choices = simulation->choices();
  result.choice_infos = simulation->choice_infos();
  result.coverage = simulation->coverage();
  if (config.trace_mode == TraceMode::kFull) result.simulation = std::move(simulation);
  return result;
}

}  // namespace

RunResult RunProgram(const Program& program, const RunConfig& config) {
  return Run(program, config, config.replay_choices);
}

RunResult RunProgram(const Program& program, RunConfig&& config) {
  std::optional<std::vector<uint64_t>> choices = std::move(config.replay_choices);
  config.replay_choices.reset();
  return Run(program, config, std::move(choices));
}

std::string ReplayCommand(const Program& program, const RunConfig& config) {
  std::string line = fmt::format("restoresim replay {} --seed {} --strategy {}", program.name,
                                 config.seed, config.strategy.ToString());
  if (config.steps_max != 0) line += fmt::format(" --steps-max {}", config.steps_max);
  if (config.spurious_wakeup_per_mille != RunConfig{}.spurious_wakeup_per_mille) {
    line += fmt::format(" --spurious-per-mille {}", config.spurious_wakeup_per_mille);
  }
  return line;
}

}  // namespace restoresim::sim
