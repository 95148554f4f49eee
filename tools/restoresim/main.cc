// restoresim: sweep seeds over simulated programs, replay the failing one, look at its timeline.
//
//   restoresim scenarios
//   restoresim explore --scenario all --seeds 1000 --strategy pct:3 --jobs 2
//   restoresim explore --scenario 'scenario.*' --seeds 1000 --strategy pos --jobs 2
//   restoresim replay demo.abba_deadlock --seed 2 --strategy pct:3 --timeline abba.json
//   restoresim replay --repro restoresim-repros/demo.abba_deadlock-2.json
//   restoresim shrink restoresim-repros/demo.abba_deadlock-2.json
//   restoresim bench --scenario 'scenario.*' --seeds 200
//   restoresim zoo --strategy random,pct:3 --budget-s 10
#include <cstdio>
#include <exception>

#include "tools/restoresim/commands.h"

int main(int argc, char** argv) {
  using namespace restoresim::tools;
  CLI::App app{
      "restoresim: deterministic simulation of the Kafka Streams restore-thread runtime.\n"
      "Every run is a pure function of (scenario, seed, strategy); failures print one line "
      "that replays them."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "restoresim 0.1.0");
  const Command explore = AddExploreCommand(app);
  const Command replay = AddReplayCommand(app);
  const Command scenarios = AddScenariosCommand(app);
  const Command shrink = AddShrinkCommand(app);
  const Command bench = AddBenchCommand(app);
  const Command zoo = AddZooCommand(app);
  if (argc > 1 && argv[1][0] != '-' && app.get_subcommands([&](CLI::App* sub) { return sub->get_name() == argv[1]; }).empty()) {
    std::fprintf(stderr,
                 "restoresim: unknown command '%s'; commands: explore, replay, scenarios, "
                 "shrink, bench, zoo (see --help)\n",
                 argv[1]);
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  try {
    if (app.got_subcommand("explore")) return explore();
    if (app.got_subcommand("replay")) return replay();
    if (app.got_subcommand("scenarios")) return scenarios();
    if (app.got_subcommand("shrink")) return shrink();
    if (app.got_subcommand("bench")) return bench();
    if (app.got_subcommand("zoo")) return zoo();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "restoresim: error: %s\n", e.what());
    return kExitUsage;
  }
  return kExitUsage;
}
