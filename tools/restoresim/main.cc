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
//   restoresim bench sim --scenario 'scenario.*' --seeds 200
//   restoresim bench restore --backend fake --records 200000
//   restoresim zoo --strategy random,pct:3 --budget-s 10
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/check.h"
#include "core/util/shown.h"
#include "tools/restoresim/build_id.h"
#include "tools/restoresim/commands.h"
#include "tools/restoresim/invocation.h"

namespace {
constexpr size_t kArgumentBytesMax = 4096;  // PATH_MAX

// Whether `value` is a decimal number (digits, perhaps a leading '+') above 2^64-1.
bool IsDecimalAbove64Bits(std::string_view value) {
  if (value.starts_with('+')) value.remove_prefix(1);
  while (value.size() > 1 && value.front() == '0') value.remove_prefix(1);
  if (value.empty() || value.find_first_not_of("0123456789") != std::string_view::npos) {
    return false;
  }
  constexpr std::string_view kMax = "18446744073709551615";
  return value.size() > kMax.size() || (value.size() == kMax.size() && value > kMax);
}

// Before CLI11 sees them: no option takes a negative number (CLI11 would wrap "-1" to
// 2^64-1 for a 64-bit option) or one above 2^64-1, and no argument is longer than a path may
// be. False after saying why on standard error.
bool ArgumentsInRange(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.size() > kArgumentBytesMax) {
      std::fprintf(stderr, "restoresim: argument %d is %zu bytes long (at most %zu): %s\n", i,
                   arg.size(), kArgumentBytesMax, restoresim::Shown(arg).c_str());
      return false;
    }
    const size_t eq = arg.starts_with("--") ? arg.find('=') : std::string_view::npos;
    const std::string_view value = eq == std::string_view::npos ? arg : arg.substr(eq + 1);
    // A number above 2^64-1 is not saturated to it (CLI11 would: `--seed 99999999999999999999`
    // replayed another seed, `bench --seeds` of 2^64 ran for ever).
    if (IsDecimalAbove64Bits(value)) {
      std::fprintf(stderr, "restoresim: '%s'%s: out of range (at most 18446744073709551615)\n",
                   restoresim::Shown(value).c_str(),
                   i > 1 && eq == std::string_view::npos
                       ? (" (for " + restoresim::Shown(argv[i - 1]) + ")").c_str()
                       : "");
      return false;
    }
    if (value.size() >= 2 && value[0] == '-' && value[1] >= '0' && value[1] <= '9') {
      std::fprintf(stderr, "restoresim: '%s'%s: no option takes a negative number\n",
                   restoresim::Shown(value).c_str(),
                   i > 1 && eq == std::string_view::npos
                       ? (" (for " + restoresim::Shown(argv[i - 1]) + ")").c_str()
                       : "");
      return false;
    }
  }
  return true;
}

// Runs the subcommand the command line named.
int Dispatch(CLI::App& app, const std::vector<restoresim::tools::Command>& commands) {
  using restoresim::tools::kExitUsage;
  static constexpr const char* kNames[] = {"explore", "merge",  "replay", "scenarios", "shrink",
                                           "bench",   "zoo",    "config", "check",
                                           "soak",    "soak-instance"};
  RS_CHECK(commands.size() == std::size(kNames));
  try {
    for (size_t i = 0; i < commands.size(); ++i) {
      if (app.got_subcommand(kNames[i])) return commands[i]();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "restoresim: error: %s\n", e.what());
    return kExitUsage;
  }
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace restoresim::tools;
  CLI::App app{
      "restoresim: deterministic simulation of the Kafka Streams restore-thread runtime.\n"
      "Every run is a pure function of (scenario, seed, strategy); failures print one line "
      "that replays them."};
  app.require_subcommand(1);
  // The version and the build id shard reports carry: "restoresim 0.1.0 gnu-build-id:HEX"
  // (computed only when asked for: without a GNU build-id note it hashes the executable).
  app.set_version_flag("--version", std::function<std::string()>([] { return BuildId(); }));
  const Command explore = AddExploreCommand(app);
  const Command merge = AddMergeCommand(app);
  const Command replay = AddReplayCommand(app);
  const Command scenarios = AddScenariosCommand(app);
  const Command shrink = AddShrinkCommand(app);
  const Command bench = AddBenchCommand(app);
  const Command zoo = AddZooCommand(app);
  const Command config = AddConfigCommand(app);
  const Command check = AddCheckCommand(app);
  const Command soak = AddSoakCommand(app);
  const Command soak_instance = AddSoakInstanceCommand(app);
  const auto named = [&](CLI::App* sub) { return sub->get_name() == argv[1]; };
  if (argc > 1 && argv[1][0] != '-' && app.get_subcommands(named).empty()) {
    std::fprintf(stderr,
                 "restoresim: unknown command '%s'; commands: explore, merge, replay, scenarios, "
                 "shrink, bench, zoo, config, check, soak (see --help)\n",
                 restoresim::Shown(argv[1]).c_str());
    return kExitUsage;
  }
  if (!ArgumentsInRange(argc, argv)) return kExitUsage;
  SetInvocation(argc > 0 ? argv[0] : "restoresim");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  // Every write of output is checked: a report lost to a full disk or a closed pipe is an
  // error, not a success (`--json > /dev/full` exited 0).
  const int code = Dispatch(app, {explore, merge, replay, scenarios, shrink, bench, zoo, config,
                                  check, soak, soak_instance});
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fprintf(stderr, "restoresim: error: cannot write standard output: %s\n",
                 std::strerror(errno));
    return kExitUsage;
  }
  return code;
}
