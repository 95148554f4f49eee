// `restoresim scenarios`: the programs a sweep can run, with one line each.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/restoresim/commands.h"
#include "tools/restoresim/json_output.h"

namespace restoresim::tools {

Command AddScenariosCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("scenarios", "list the scenarios and demo programs");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print {format, version, programs} as JSON");
  return [json]() {
    if (*json) {
      nlohmann::json programs = nlohmann::json::array();
      for (const sim::Program* p : Programs().All()) {
        programs.push_back({{"name", p->name},
                       {"description", p->description},
                       {"bug_expected", p->bug_expected},
                       {"steps_hint", p->steps_hint},
                       {"steps_max", p->steps_max}});
      }
      nlohmann::json out = JsonDocument("restoresim-scenarios", 1);
      out["programs"] = std::move(programs);
      std::printf("%s\n", out.dump(2).c_str());
      return kExitOk;
    }
    size_t width = 0;
    for (const sim::Program* p : Programs().All()) width = std::max(width, p->name.size());
    for (const sim::Program* p : Programs().All()) {
      std::printf("%s", fmt::format("{:<{}} {:<5} {}\n", p->name, width,
                                    p->bug_expected ? "[bug]" : "", p->description)
                            .c_str());
    }
    std::printf("\n[bug]: a program with a planted bug; a sweep succeeds when it finds it.\n");
    return kExitOk;
  };
}

}  // namespace restoresim::tools
