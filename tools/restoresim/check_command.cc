// `restoresim check FILE`: judges an event file (written by `replay --events FILE`, or by any
// run that records its events) with the invariant oracle, away from the run that made it.
// Exit 0: every invariant held; 1: a violation (the invariant named, as the simulator would);
// 2: the file is unreadable or not an event file (the line and what is wrong with it).
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <variant>

#include <fmt/format.h>

#include "core/events/event_codec.h"
#include "properties/standalone_judge.h"
#include "tools/restoresim/commands.h"

namespace restoresim::tools {
namespace {

int BadFile(const std::string& path, std::string_view message) {
  std::fprintf(stderr, "%s",
               fmt::format("restoresim check: {}: {}\n", path, message).c_str());
  return kExitUsage;
}

int RunCheck(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return BadFile(path, "cannot open");
  events::EventFileReader reader(in);
  if (absl::Status s = reader.Open(); !s.ok()) return BadFile(path, std::string(s.message()));
  properties::StandaloneJudge judge;
  uint64_t count = 0;
  bool finished = false;
  for (;;) {
    absl::StatusOr<std::optional<events::Event>> event = reader.Next();
    if (!event.ok()) return BadFile(path, std::string(event.status().message()));
    if (!event->has_value()) break;
    ++count;
    finished = finished || std::holds_alternative<events::RunFinished>((*event)->body);
    judge.OnEvent(**event);
  }
  if (judge.failure().has_value()) {
    std::printf("%s", fmt::format("{}: {} events read; violation:\n  {}\n", path, count,
                                  judge.failure()->Render())
                          .c_str());
    return kExitFindings;
  }
  std::printf("%s", fmt::format("{}: {} events ({} judged, {} store checks): every invariant "
                                "held{}\n",
                                path, count, judge.oracle().counts().events,
                                judge.oracle().counts().store_checks,
                                finished ? "" : " (no run_finished: end-of-run checks not run)")
                        .c_str());
  return kExitOk;
}

}  // namespace

Command AddCheckCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "check", "judge an event file (replay --events FILE) with the invariant oracle");
  cmd->add_option("file", *path, "the event file")->required();
  return [path]() { return RunCheck(*path); };
}

}  // namespace restoresim::tools
