// The scenario DSL (issue 20): what a catalogue scenario is written in.
//
//  * Draws that name themselves. A Draws wraps env.Choose: `draw.Int<int32_t>("partitions", 1, 3)`
//    is `1 + env.Choose(3)` and notes "partitions=2" for the run's params line, in draw order;
//    draw.NoteParams() (or the first phase) writes the line (TraceMark "params"). Bounds are
//    inclusive and every draw makes exactly one Choose(hi - lo + 1) call (lo + step * k for
//    durations), so a scenario written this way consumes its seed as the hand-written
//    Choose calls did and keeps its trace hashes. Draws without a name are events: drawn,
//    not noted.
//  * Registration where the scenario is defined: RESTORESIM_SCENARIO({.name = ..., .body = ...})
//    at namespace scope adds it to Catalogue() before main; RegisterRuntimePrograms adds the
//    catalogue to a registry. The library is linked whole (scenarios/meson.build), so a file
//    nothing references still registers.
//  * Phases: Phases::Run("setup", fn) names the steps of a long story; the first one notes the
//    params line if the draws have not yet.
//
// Thread-safety: a Draws and Phases belong to the program's "main" thread. Catalogue() is filled
// during static initialisation and then only read.
#ifndef RESTORESIM_SCENARIOS_SCENARIO_DSL_H_
#define RESTORESIM_SCENARIOS_SCENARIO_DSL_H_

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/sync/clock.h"
#include "core/util/check.h"
#include "sim/program.h"

namespace restoresim::scenarios {

class Draws {
 public:
  explicit Draws(sim::RunEnv& env) : env_(env) {}
  Draws(const Draws&) = delete;
  Draws& operator=(const Draws&) = delete;

  // A value in [lo, hi]: lo + Choose(hi - lo + 1), noted "name=value" (an empty name: not noted).
  template <typename T = int>
  T Int(std::string_view name, std::type_identity_t<T> lo, std::type_identity_t<T> hi) {
    static_assert(std::is_integral_v<T>);
    RS_CHECK(lo <= hi, "draw {}: [{}, {}]", name, lo, hi);
    const T value = lo + static_cast<T>(env_.Choose(static_cast<uint64_t>(hi - lo) + 1));
    Noted(name, value);
    return value;
  }
  // An event: a value in [lo, hi], not noted.
  template <typename T = int>
  T Int(std::type_identity_t<T> lo, std::type_identity_t<T> hi) {
    return Int<T>("", lo, hi);
  }
  // Choose(2) == 1, noted "name=true|false".
  bool Bool(std::string_view name = "") {
    const bool value = env_.Choose(2) == 1;
    Noted(name, value);
    return value;
  }
  // One in `n`: Choose(n) == 0 (not noted).
  bool OneIn(uint64_t n) { return Int<uint64_t>(0, n - 1) == 0; }
  // A duration of lo_ms + step_ms * Choose((hi_ms - lo_ms) / step_ms + 1) milliseconds, noted
  // in milliseconds as "name=value" (so name it "..._ms").
  TimeNs Ms(std::string_view name, int64_t lo_ms, int64_t hi_ms, int64_t step_ms = 1);
  TimeNs Ms(int64_t lo_ms, int64_t hi_ms, int64_t step_ms = 1) {
    return Ms("", lo_ms, hi_ms, step_ms);
  }
  // One of `count` enumerators (E{0} .. E{count-1}), noted by number; without a name an event.
  template <typename E>
  E Enum(std::string_view name, uint64_t count) {
    static_assert(std::is_enum_v<E>);
    return static_cast<E>(Int<uint64_t>(name, 0, count - 1));
  }
  template <typename E>
  E Enum(uint64_t count) {
    return Enum<E>("", count);
  }
  // One of `labels` by index, noted by its label.
  size_t Pick(std::string_view name, std::initializer_list<std::string_view> labels);

  // A value that was not drawn here (derived, or fixed where a variant does not draw it),
  // noted in its place.
  template <typename T>
  T Fixed(std::string_view name, T value) {
    Noted(name, value);
    return value;
  }
  // Free text in the params line (a separator, a compound value), after the draws so far.
  void Note(std::string_view text) {
    RS_CHECK(!noted_, "note {} after the params line was written", text);
    items_.emplace_back(text);
  }

  // The params line so far: the noted items joined by single spaces.
  std::string Params() const;
  // Writes the params line once (TraceMark "params"); later calls do nothing.
  void NoteParams();
  bool noted() const { return noted_; }

  sim::RunEnv& env() { return env_; }

 private:
  template <typename T>
  void Noted(std::string_view name, const T& value) {
    if (name.empty()) return;  // an event
    RS_CHECK(!noted_, "draw {} after the params line was written", name);
    if constexpr (std::is_enum_v<T>) {
      items_.push_back(fmt::format("{}={}", name, static_cast<uint64_t>(value)));
    } else {
      items_.push_back(fmt::format("{}={}", name, value));
    }
  }

  sim::RunEnv& env_;
  std::vector<std::string> items_;
  bool noted_ = false;
};

// The named steps of a long story, run in order. The first notes the params line.
class Phases {
 public:
  explicit Phases(Draws& draw) : draw_(draw) {}
  template <typename F>
  void Run(std::string_view name, F&& step) {
    draw_.NoteParams();
    current_ = name;
    std::forward<F>(step)();
  }
  std::string_view current() const { return current_; }

 private:
  Draws& draw_;
  std::string_view current_;
};

// A catalogue scenario's registration: a sim::Program with the catalogue's step budget.
struct ScenarioSpec {
  std::string name;  // "scenario.<name>", a row of docs/SCENARIOS.md
  std::string description;
  uint64_t steps_hint = 1000;
  uint64_t steps_max = 2'000'000;
  std::function<void(sim::RunEnv&)> body;
};

// Every scenario registered with RESTORESIM_SCENARIO, in static-initialisation order.
std::span<const sim::Program> Catalogue();

struct ScenarioRegistration {
  explicit ScenarioRegistration(ScenarioSpec spec);
};

#define RESTORESIM_SCENARIO_CONCAT_(a, b) a##b
#define RESTORESIM_SCENARIO_NAME_(line) RESTORESIM_SCENARIO_CONCAT_(scenario_registration_, line)
// At namespace scope: RESTORESIM_SCENARIO({.name = "scenario.x", .description = "...", ...});
#define RESTORESIM_SCENARIO(...)                                                         \
  [[maybe_unused]] const ::restoresim::scenarios::ScenarioRegistration                   \
      RESTORESIM_SCENARIO_NAME_(__COUNTER__)(::restoresim::scenarios::ScenarioSpec __VA_ARGS__)

// Registers each program in turn, stopping at the first error.
absl::Status AddAll(sim::ProgramRegistry& registry, std::vector<sim::Program> programs);

}  // namespace restoresim::scenarios

#endif  // RESTORESIM_SCENARIOS_SCENARIO_DSL_H_
