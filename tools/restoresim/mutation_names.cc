#include "tools/restoresim/mutation_names.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/util/mutation.h"
#include "core/util/shown.h"
#include "sim/program.h"

namespace restoresim::tools {

std::string MutationSpellingHint(std::string_view given) {
  std::string canonical(given.starts_with("bug.") ? given.substr(4) : given);
  std::replace(canonical.begin(), canonical.end(), '_', '-');
  if (canonical == given) return "";
  for (const MutationInfo& m : AllMutations()) {
    if (sim::GlobMatches(canonical, m.name)) {
      return fmt::format("; mutation names are spelled with '-': give '{}'", Shown(canonical));
    }
  }
  return "";
}

}  // namespace restoresim::tools
