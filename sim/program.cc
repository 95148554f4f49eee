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
  std::set<std::string_view> selected;
  const std::vector<const Program*> all = All();
  for (std::string_view element : SplitCommas(pattern)) {
    size_t matched = 0;
    for (const Program* p : all) {
      if (element == "all" || GlobMatches(element, p->name)) {
        selected.insert(p->name);
        ++matched;
      }
    }
    if (matched > 0) continue;
    // The families, not every name: the list of programs grows, an error line should not.
    std::set<std::string> families;
    for (const Program* p : all) families.insert(p->name.substr(0, p->name.find('.')) + ".*");
    return absl::NotFoundError(fmt::format(
        "no scenario matches '{}'{}; give all, names or globs ('*', '?'), comma-separated ({}; "
        "`restoresim scenarios` lists the {} programs)",
        Shown(element), element.size() == pattern.size() ? "" : " (in '" + Shown(pattern) + "')",
        absl::StrJoin(families, ", "), all.size()));
  }
  std::vector<const Program*> out;
  for (const Program* p : all) {
    if (selected.contains(p->name)) out.push_back(p);
  }
  return out;
}

std::vector<std::string_view> SplitCommas(std::string_view list) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    const size_t comma = list.find(',', start);
    out.push_back(list.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

bool GlobMatches(std::string_view pattern, std::string_view name) {
  // Greedy with one step of backtracking: on a mismatch, the last '*' takes one more
  // character. Linear in the common case, at most |pattern| * |name| steps.
  size_t p = 0, n = 0;
  size_t star = std::string_view::npos, star_n = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_n = n;
    } else if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++star_n;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace restoresim::sim
