#include "sim/program.h"

#include <set>
#include <string>

#include "core/util/shown.h"

#include <fmt/format.h>

#include "absl/strings/str_join.h"
#include "sim/simulation.h"

namespace restoresim::sim {

uint64_t RunEnv::Choose(uint64_t n) { return sim.Choose(n, ChoiceKind::kData); }

void RunEnv::Fail(std::string message) { sim.Fail(std::move(message)); }

void RunEnv::FailInvariant(std::string_view invariant, std::string_view who,
                           std::string detail) {
  sim.Fail(InvariantFailure(invariant, who, std::move(detail)));
}

absl::Status ProgramRegistry::Add(Program program) {
  if (program.name.empty()) return absl::InvalidArgumentError("program without a name");
  if (!program.body) {
    return absl::InvalidArgumentError(fmt::format("program '{}' has no body", program.name));
  }
  if (programs_.count(program.name) > 0) {
    return absl::AlreadyExistsError(fmt::format("program '{}' registered twice", program.name));
  }
  std::string name = program.name;
  programs_.emplace(std::move(name), std::move(program));
  return absl::OkStatus();
}

const Program* ProgramRegistry::Find(std::string_view name) const {
  auto it = programs_.find(name);
  return it == programs_.end() ? nullptr : &it->second;
}

std::vector<const Program*> ProgramRegistry::All() const {
  std::vector<const Program*> all;
  for (const auto& [name, program] : programs_) all.push_back(&program);
  return all;
}

absl::StatusOr<std::vector<const Program*>> ProgramRegistry::Select(
    std::string_view pattern) const {
  if (pattern == "all") return All();
  std::vector<const Program*> selected;
  if (pattern.ends_with('*')) {
    const std::string_view prefix = pattern.substr(0, pattern.size() - 1);
    for (const Program* p : All()) {
      if (std::string_view(p->name).starts_with(prefix)) selected.push_back(p);
    }
  } else if (const Program* p = Find(pattern)) {
    selected.push_back(p);
  }
  if (selected.empty()) {
    // The families, not every name: the list of programs grows, an error line should not.
    std::set<std::string> families;
    for (const Program* p : All()) families.insert(p->name.substr(0, p->name.find('.')) + ".*");
    return absl::NotFoundError(fmt::format("no scenario matches '{}'; give all, a name or a "
                                           "prefix ending in '*' ({}; `restoresim scenarios` "
                                           "lists the {} programs)",
                                           Shown(pattern), absl::StrJoin(families, ", "),
                                           All().size()));
  }
  return selected;
}

}  // namespace restoresim::sim
