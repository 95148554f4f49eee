#include "scenarios/scenario_dsl.h"

#include "absl/strings/str_join.h"
#include "core/sync/thread.h"

namespace restoresim::scenarios {
namespace {

std::vector<sim::Program>& MutableCatalogue() {
  static auto* catalogue = new std::vector<sim::Program>();
  return *catalogue;
}

}  // namespace

TimeNs Draws::Ms(std::string_view name, int64_t lo_ms, int64_t hi_ms, int64_t step_ms) {
  RS_CHECK(step_ms > 0 && lo_ms <= hi_ms && (hi_ms - lo_ms) % step_ms == 0,
           "draw {}: [{}, {}] ms in steps of {}", name, lo_ms, hi_ms, step_ms);
  const int64_t steps = Int<int64_t>(0, (hi_ms - lo_ms) / step_ms);
  const int64_t value_ms = lo_ms + steps * step_ms;
  Noted(name, value_ms);
  return value_ms * kMillisecond;
}

size_t Draws::Pick(std::string_view name, std::initializer_list<std::string_view> labels) {
  RS_CHECK(labels.size() > 0, "draw {}: no labels", name);
  const size_t index = Int<size_t>(0, labels.size() - 1);
  Noted(name, labels.begin()[index]);
  return index;
}

std::string Draws::Params() const { return absl::StrJoin(items_, " "); }

void Draws::NoteParams() {
  if (noted_) return;
  noted_ = true;
  TraceMark("params", Params());
}

std::span<const sim::Program> Catalogue() { return MutableCatalogue(); }

ScenarioRegistration::ScenarioRegistration(ScenarioSpec spec) {
  MutableCatalogue().push_back(sim::Program{.name = std::move(spec.name),
                                            .description = std::move(spec.description),
                                            .steps_hint = spec.steps_hint,
                                            .steps_max = spec.steps_max,
                                            .body = std::move(spec.body)});
}

absl::Status AddAll(sim::ProgramRegistry& registry, std::vector<sim::Program> programs) {
  for (sim::Program& program : programs) {
    if (absl::Status s = registry.Add(std::move(program)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace restoresim::scenarios
