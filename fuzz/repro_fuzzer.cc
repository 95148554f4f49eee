// Fuzzes ReproFromJson (sim/repro.h), the reader of repro files: the one file format the CLI
// reads from users. The contract checked:
//   * a failure is kInvalidArgument, its message naming the source ("repro: ...");
//   * a success is accepted by the writer too: ReproToCheckedJson refuses nothing the reader
//     accepted;
//   * a success round-trips: ReproToJson, then ReproFromJson, gives a repro with the same
//     run-deciding fields (seed, strategy, steps_max, spurious wake-ups, choices) and the same
//     expected outcome (outcome, trace hash, steps, failure kind and step), and writing that
//     one again gives the same text (strings with invalid UTF-8 are written as U+FFFD, so the
//     first text, not the input, is the fixed point).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "sim/repro.h"

namespace restoresim::fuzz {
namespace {

void CheckSameRun(const sim::Repro& a, const sim::Repro& b, const std::string& text) {
  const sim::RunConfig& x = a.config;
  const sim::RunConfig& y = b.config;
  FUZZ_CHECK(x.seed == y.seed && x.strategy.ToString() == y.strategy.ToString() &&
                 x.steps_max == y.steps_max &&
                 x.spurious_wakeup_per_mille == y.spurious_wakeup_per_mille &&
                 x.replay_choices == y.replay_choices,
             "the run read back differently from:\n{}", text);
  FUZZ_CHECK(a.outcome == b.outcome && a.trace_hash == b.trace_hash && a.steps == b.steps &&
                 a.failure.kind == b.failure.kind && a.failure.step == b.failure.step,
             "the expected outcome read back differently from:\n{}", text);
}

void CheckRepro(std::string_view text) {
  absl::StatusOr<sim::Repro> repro = sim::ReproFromJson(text);
  if (!repro.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(repro.status()), "{}", repro.status().ToString());
    FUZZ_CHECK(MessageOf(repro.status()).starts_with("repro: "), "{}",
               repro.status().ToString());
    return;
  }
  absl::StatusOr<std::string> checked = sim::ReproToCheckedJson(*repro, "fuzz");
  FUZZ_CHECK(checked.ok(), "read, but the writer refuses it: {}", checked.status().ToString());
  const std::string written = sim::ReproToJson(*repro);
  FUZZ_CHECK(*checked == written, "the checked text differs from ReproToJson's");
  absl::StatusOr<sim::Repro> again = sim::ReproFromJson(written);
  FUZZ_CHECK(again.ok(), "the written repro does not read back: {}\n{}",
             again.status().ToString(), written);
  CheckSameRun(*repro, *again, written);
  FUZZ_CHECK(sim::ReproToJson(*again) == written, "writing is not a fixed point:\n{}", written);
}

}  // namespace
}  // namespace restoresim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  restoresim::fuzz::CheckRepro(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
