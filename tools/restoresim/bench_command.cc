// `restoresim bench`: the two benchmarks, each a subcommand with only its own options:
//   bench sim                        seeds/s of the scenarios, the oracle on and off
//                                    (bench_sim_command.cc)
//   bench restore --backend fake|kafka
//                                    the restore benchmark (bench_restore_command.cc)
// "bench" stays the one place a user looks for throughput; the name after it says which world.
//
// Both were once one command behind `--backend sim|fake|kafka` (sim by default), the string
// compared in four places and each option checked against it by hand. The old spellings are
// refused with the new one named (exit 2), not mapped: `bench --seeds 5` and
// `bench --backend sim` would have to stay two ways of saying `bench sim`, and a mapped
// `bench --backend fake --seeds 5` would still need the cross-checks the split removed.
//
// An option of the other benchmark is named as such ("--records is an option of `bench
// restore`"), exit 2: each subcommand collects what it does not know instead of letting CLI11
// refuse it, so the error can say where the option belongs.
#include <cstdio>
#include <string>
#include <vector>

#include "core/util/shown.h"
#include "tools/restoresim/bench_command.h"
#include "tools/restoresim/commands.h"

namespace restoresim::tools {
namespace {

constexpr char kBenchmarks[] =
    "`restoresim bench sim` (seeds/s of the scenarios; formerly `bench` and `bench --backend "
    "sim`) or `restoresim bench restore --backend fake|kafka` (the restore benchmark; formerly "
    "`bench --backend fake|kafka`)";

// The value of an old `--backend V` (or `--backend=V`) among the arguments before the
// benchmark's name; "" when there is none. `bench --backend sim` leaves just "--backend" there:
// CLI11 takes "sim" for the subcommand.
std::string OldBackend(const std::vector<std::string>& before, bool sim_named) {
  for (size_t i = 0; i < before.size(); ++i) {
    if (before[i].starts_with("--backend=")) return before[i].substr(10);
    if (before[i] != "--backend") continue;
    if (i + 1 < before.size()) return before[i + 1];
    return sim_named ? "sim" : "";
  }
  return "";
}

// `bench` with no benchmark named, or with arguments before the name: the old spellings.
int RefuseOldSpelling(const std::vector<std::string>& before, bool sim_named) {
  const std::string backend = OldBackend(before, sim_named);
  std::string what = "name the benchmark: ";
  if (backend == "sim") {
    what = "`bench --backend sim` is `bench sim` now (without --backend); ";
  } else if (backend == "fake" || backend == "kafka") {
    what = "`bench --backend " + backend + "` is `bench restore --backend " + backend +
           "` now; ";
  } else if (!before.empty()) {
    what = "'" + Shown(before.front()) + "' before the benchmark's name; name it first: ";
  }
  std::fprintf(stderr, "restoresim bench: %s%s\n", what.c_str(), kBenchmarks);
  return kExitUsage;
}

// What `ran` (one benchmark) did not know: an option of `other` (the other benchmark), another
// option, or a stray word. kExitOk when there was nothing.
int RefuseLeftovers(const CLI::App& ran, const CLI::App& other) {
  const std::vector<std::string> left = ran.remaining();
  if (left.empty()) return kExitOk;
  const std::string& arg = left.front();
  const std::string me = "restoresim bench " + ran.get_name();
  if (!arg.starts_with("-")) {
    std::fprintf(stderr, "%s: unexpected argument '%s'\n", me.c_str(), Shown(arg).c_str());
  } else if (const std::string name = arg.substr(0, arg.find('='));
             other.get_option_no_throw(name) != nullptr) {
    std::fprintf(stderr, "%s: %s is an option of `restoresim bench %s`, not of `bench %s`\n",
                 me.c_str(), Shown(name).c_str(), other.get_name().c_str(),
                 ran.get_name().c_str());
  } else {
    std::fprintf(stderr, "%s: unknown option %s (see %s --help)\n", me.c_str(),
                 Shown(name).c_str(), me.c_str());
  }
  return kExitUsage;
}

}  // namespace

Command AddBenchCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "bench", "Benchmarks: `bench sim` (seeds/s of scenarios with the oracle on and off) and "
               "`bench restore --backend fake|kafka` (the restore benchmark against the raw "
               "limits and Kafka Streams)");
  cmd->allow_extras();  // the old spellings, refused by RefuseOldSpelling
  const BenchSubcommand sim = AddBenchSimCommand(*cmd);
  const BenchSubcommand restore = AddBenchRestoreCommand(*cmd);
  sim.app->allow_extras();
  restore.app->allow_extras();
  return [cmd, sim, restore]() {
    const bool sim_named = sim.app->parsed();
    if (!cmd->remaining().empty() || (!sim_named && !restore.app->parsed())) {
      return RefuseOldSpelling(cmd->remaining(), sim_named);
    }
    const BenchSubcommand& ran = sim_named ? sim : restore;
    const BenchSubcommand& other = sim_named ? restore : sim;
    if (int rc = RefuseLeftovers(*ran.app, *other.app); rc != kExitOk) return rc;
    return ran.run();
  };
}

}  // namespace restoresim::tools
