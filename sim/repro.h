// Repro files: a failing (or any) run saved as versioned JSON, enough to re-run it exactly and
// to tell whether the re-run reproduced it. Written by `restoresim explore` (and, minimised, by
// `restoresim shrink`), read by `restoresim replay --repro FILE` and `restoresim shrink`.
//
//   {
//     "format": "restoresim-repro",
//     "version": 2,
//     "scenario": "demo.abba_deadlock",
//     "seed": "18446744073709551615",     // a decimal string: JSON numbers lose bits past 2^53
//     "strategy": "pct:3:50",             // StrategySpec text
//     "steps_max": 0,                     // 0: the program's default budget
//     "spurious_wakeup_per_mille": 10,
//     "choices": [0, 1, 1, 0],            // optional: the recorded schedule (strategy answers)
//     "expected": {"outcome": "deadlock", "message": "...", "trace_hash": "0x0e2ec79aaf563e15",
//                  "steps": 12,
//                  "failure": {"kind": "deadlock", "step": 12, "detail": "...",
//                              "waits": ["mutex 'lock_a'", "mutex 'lock_b'"]}},
//     "replay": "restoresim replay demo.abba_deadlock --seed 7 --strategy pct:3:50"
//   }
//
// Keys are written in this order, 2-space indented; the choices are wrapped, many to a line.
// "expected.failure" (version 2, absent for a passing run) is the structured failure
// (core/util/failure.h): kind ("invariant", "check", "deadlock", "step-budget", "exception",
// "other"), step, detail, and where they apply invariant, who, location, waits, notes; its
// kind must fit the outcome. Version 1 files (no "failure") still load: their failure is
// rebuilt from the message (FailureFromLegacyMessage).
// Reading is strict about what decides the run and lenient about the rest: every field above
// is required except "choices" and "replay"; unknown keys are ignored, so a newer writer may
// add fields without a version bump. Every malformed input is an InvalidArgument status whose
// message names the field and what was expected; no input crashes the reader. Text is UTF-8:
// invalid bytes in strings are written as U+FFFD.
//
// Thread-safety: free functions on values; thread-safe.
#ifndef RESTORESIM_SIM_REPRO_H_
#define RESTORESIM_SIM_REPRO_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/port/file_system.h"
#include "sim/runner.h"

namespace restoresim::sim {

inline constexpr std::string_view kReproFormat = "restoresim-repro";
inline constexpr int kReproVersion = 2;        // the version written
inline constexpr int kReproVersionOldest = 1;  // the oldest read (its failure is text only)
// Limits of what a reader accepts. Step counts must be exact JSON numbers (2^53) to survive
// tools that read numbers as doubles.
inline constexpr uint64_t kReproStepsMax = uint64_t{1} << 53;
inline constexpr uint32_t kReproSpuriousPerMilleMax = 1000;
// A file of at most kReproBytesMax bytes is read in memory bounded by its size: its text, plus
// 8 bytes per choice (reserved once, from the file's count of commas, never grown by doubling),
// plus a small document for the other fields. A larger file is refused before it is read
// (the CLI says "X is N bytes (at most 268435456)"); written files are checked to fit.
inline constexpr size_t kReproChoicesMax = size_t{1} << 26;  // 67,108,864
inline constexpr size_t kReproBytesMax = size_t{256} << 20;
// Every scheduling step records one choice (the thread picked), so a run of more steps than a
// repro holds choices could not be saved: `--steps-max` is refused above this before any run.
// (Data choices come on top of the steps; a run that makes very many may still be too big.)
inline constexpr uint64_t kReproRunStepsMax = kReproChoicesMax;
inline constexpr size_t kReproFailureListMax = 10'000;  // waits, notes

struct Repro {
  std::string scenario;  // the program's name
  // What decides the run. replay_choices is the "choices" field; trace_mode and
  // record_choices are not stored (they do not change the run) and read back as defaults.
  RunConfig config;
  std::string outcome;  // OutcomeKindName of the expected outcome: "ok", "failed", ...
  std::string message;  // the expected outcome's message (its failure rendered)
  Failure failure;      // the expected failure (version 1: rebuilt from the message)
  uint64_t trace_hash = 0;
  uint64_t steps = 0;
  std::string replay_command;  // informational: the one-line replay command
};

// The repro as JSON text (ends with a newline).
std::string ReproToJson(const Repro& repro);

// Parses and validates a repro file's text.
absl::StatusOr<Repro> ReproFromJson(std::string_view text);

// The repro as JSON text, checked to read back (InvalidArgument otherwise); `path` only names
// it in the message.
absl::StatusOr<std::string> ReproToCheckedJson(const Repro& repro, const std::string& path);

// Writes the repro with WriteFileAtomically. Refuses (InvalidArgument) a repro that would not
// read back, e.g. steps past kReproStepsMax or an unknown outcome.
[[nodiscard]] absl::Status WriteRepro(FileSystem& fs, const std::string& path,
                                      const Repro& repro);

// Reads and validates `path`. A file-system error comes back as the file system gave it (its
// message names the path); a validation error is InvalidArgument "repro file <path>: ...".
absl::StatusOr<Repro> ReadRepro(FileSystem& fs, const std::string& path);

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_REPRO_H_
