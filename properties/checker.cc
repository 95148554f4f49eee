// The checkers' registry (checker.h: RESTORESIM_CHECKER). Filled during static initialisation,
// in whatever order the linker and the loader chose; AllCheckers sorts what it builds, so the
// oracle's order is the registrations' ranks and never that one.
#include "properties/checker.h"

#include <algorithm>
#include <utility>

#include "core/util/check.h"

namespace restoresim::properties {
namespace {

struct RegisteredChecker {
  int rank;
  CheckerFactory make;
};

// Never destroyed: registrations run before main and AllCheckers may run until exit.
std::vector<RegisteredChecker>& Registry() {
  static auto* registry = new std::vector<RegisteredChecker>();
  return *registry;
}

}  // namespace

CheckerRegistration::CheckerRegistration(int rank, CheckerFactory make) {
  RS_CHECK(make != nullptr, "checker registered without a factory");
  RS_CHECK(rank >= 0, "checker registered with a negative rank {}", rank);
  Registry().push_back(RegisteredChecker{rank, make});
}

std::vector<std::unique_ptr<Checker>> AllCheckers(OracleContext& context) {
  std::vector<std::pair<int, std::unique_ptr<Checker>>> ranked;
  ranked.reserve(Registry().size());
  for (const RegisteredChecker& r : Registry()) ranked.emplace_back(r.rank, r.make(context));
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return a.second->invariant() < b.second->invariant();
  });
  std::vector<std::unique_ptr<Checker>> all;
  all.reserve(ranked.size());
  for (auto& [rank, checker] : ranked) {
    // One checker per invariant: a second with the same name is a copy (a file registered twice,
    // or linked twice) and would judge every event twice.
    RS_CHECK(all.empty() || all.back()->invariant() != checker->invariant(),
             "invariant '{}' registered twice", checker->invariant());
    all.push_back(std::move(checker));
  }
  return all;
}

const events::StoreSnapshot* Checker::StoreToCheck(const events::StateInfo& state,
                                                   const TopicPartition& changelog) {
  if (!state.stores_read) {
    ++context().counts().store_checks_skipped;
    return nullptr;
  }
  const events::StoreSnapshot* store = state.StoreFor(changelog);
  if (store == nullptr) return nullptr;
  if (!store->readable) {
    ++context().counts().store_checks_skipped;
    return nullptr;
  }
  ++context().counts().store_checks;
  return store;
}

}  // namespace restoresim::properties
