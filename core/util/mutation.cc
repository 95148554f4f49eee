#include "core/util/mutation.h"

#include <array>

namespace restoresim {
namespace {

// The zoo: one row per RESTORESIM_MUTATION of mutation_list.h, so in enum order by construction.
constexpr std::array<MutationInfo, static_cast<size_t>(Mutation::kCount)> kMutations = {{
#define RESTORESIM_MUTATION(id, name, source, description) \
  {Mutation::id, name, source, description},
#include "core/util/mutation_list.h"
#undef RESTORESIM_MUTATION
}};

}  // namespace

std::span<const MutationInfo> AllMutations() { return kMutations; }

const MutationInfo& InfoOf(Mutation mutation) {
  return kMutations[static_cast<size_t>(mutation)];
}

std::optional<Mutation> MutationByName(std::string_view name) {
  for (const MutationInfo& m : kMutations) {
    if (m.name == name) return m.id;
  }
  return std::nullopt;
}

std::string MutationSet::ToString() const {
  std::string text;
  for (const MutationInfo& m : kMutations) {
    if (!contains(m.id)) continue;
    if (!text.empty()) text += ',';
    text += m.name;
  }
  return text;
}

}  // namespace restoresim
