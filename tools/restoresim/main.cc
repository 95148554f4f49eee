// restoresim: sweep seeds over simulated programs, replay the failing one, look at its timeline.
//
//   restoresim scenarios
//   restoresim explore --scenario all --seeds 1000 --strategy pct:3 --jobs 2
//   restoresim explore --scenario 'scenario.*' --seeds 1000 --strategy pos --jobs 2
//   restoresim explore --scenario all --seeds 1000 --shard 1/4 --json-out shard1.json
//   restoresim merge shard0.json shard1.json shard2.json shard3.json --repros-to repros
//   restoresim replay demo.abba_deadlock --seed 2 --strategy pct:3 --timeline abba.json
//   restoresim replay --repro restoresim-repros/demo.abba_deadlock-2.json
//   restoresim shrink restoresim-repros/demo.abba_deadlock-2.json
//   restoresim bench --scenario 'scenario.*' --seeds 200
//   restoresim zoo --strategy random,pct:3 --budget-s 10
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "core/util/shown.h"
#include "tools/restoresim/commands.h"
#include "tools/restoresim/invocation.h"

namespace {
constexpr size_t kArgumentBytesMax = 4096;  // PATH_MAX
}  // namespace

int main(int argc, char** argv) {
  using namespace restoresim::tools;
  CLI::App app{
      "restoresim: deterministic simulation of the Kafka Streams restore-thread runtime.\n"
      "Every run is a pure function of (scenario, seed, strategy); failures print one line "
      "that replays them."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "restoresim 0.1.0");
  const Command explore = AddExploreCommand(app);
  const Command merge = AddMergeCommand(app);
  const Command replay = AddReplayCommand(app);
  const Command scenarios = AddScenariosCommand(app);
  const Command shrink = AddShrinkCommand(app);
  const Command bench = AddBenchCommand(app);
  const Command zoo = AddZooCommand(app);
  const Command config = AddConfigCommand(app);
  const Command check = AddCheckCommand(app);
  if (argc > 1 && argv[1][0] != '-' && app.get_subcommands([&](CLI::App* sub) { return sub->get_name() == argv[1]; }).empty()) {
    std::fprintf(stderr,
                 "restoresim: unknown command '%s'; commands: explore, merge, replay, scenarios, "
                 "shrink, bench, zoo, config, check (see --help)\n",
                 restoresim::Shown(argv[1]).c_str());
    return kExitUsage;
  }
  // Before CLI11 sees them: no option takes a negative number (CLI11 would wrap "-1" to
  // 2^64-1 for a 64-bit option), and no argument is longer than a path may be.
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.size() > kArgumentBytesMax) {
      std::fprintf(stderr, "restoresim: argument %d is %zu bytes long (at most %zu): %s\n", i,
                   arg.size(), kArgumentBytesMax, restoresim::Shown(arg).c_str());
      return kExitUsage;
    }
    const size_t eq = arg.starts_with("--") ? arg.find('=') : std::string_view::npos;
    const std::string_view value = eq == std::string_view::npos ? arg : arg.substr(eq + 1);
    if (value.size() >= 2 && value[0] == '-' && value[1] >= '0' && value[1] <= '9') {
      std::fprintf(stderr, "restoresim: '%s'%s: no option takes a negative number\n",
                   restoresim::Shown(value).c_str(),
                   i > 1 && eq == std::string_view::npos
                       ? (" (for " + restoresim::Shown(argv[i - 1]) + ")").c_str()
                       : "");
      return kExitUsage;
    }
  }
  SetInvocation(argc > 0 ? argv[0] : "restoresim");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  try {
    if (app.got_subcommand("explore")) return explore();
    if (app.got_subcommand("merge")) return merge();
    if (app.got_subcommand("replay")) return replay();
    if (app.got_subcommand("scenarios")) return scenarios();
    if (app.got_subcommand("shrink")) return shrink();
    if (app.got_subcommand("bench")) return bench();
    if (app.got_subcommand("zoo")) return zoo();
    if (app.got_subcommand("config")) return config();
    if (app.got_subcommand("check")) return check();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "restoresim: error: %s\n", e.what());
    return kExitUsage;
  }
  return kExitUsage;
}
