// Order violations of depth 2 and 3 (the "bug depth" of PCT: how many ordering constraints
// between threads must hold for the bug to show).
//
// demo.order_violation_d2: a writer publishes a value in two steps (phase 1: half-initialised,
// phase 2: ready); a reader that looks between the two sees a half-initialised value.
// Constraints: writer.phase1 < reader.look < writer.phase2.
//
// demo.order_violation_d3: a "claim" handshake. The owner raises `claimed`, checks whether a
// helper took over, then lowers it; the helper, after a long stretch of work, takes over if it
// sees `claimed` and gives up again shortly after. The bug needs owner.claim < helper.look <
// owner.check < helper.release: three constraints, with the helper's long work between the
// first two. A random walk must let the helper run ~kHelperWorkSteps steps while the owner
// takes none (probability ~2^-30); PCT needs two well-placed change points (~1/k^2).
#include <fmt/format.h>

#include "core/sync/atomic.h"
#include "core/sync/mutex.h"
#include "core/sync/thread.h"
#include "sim/demos/demos.h"

namespace restoresim::sim {
namespace {

constexpr int kWriterWorkSteps = 4;
constexpr int kReaderWorkSteps = 4;
constexpr int kHelperWorkSteps = 30;

void Work(int steps) {
  for (int i = 0; i < steps; ++i) Yield();
}

// Runs `critical` under `mu` in the fixed twin, bare in the buggy one.
template <typename Fn>
void Critical(bool fixed, Mutex& mu, Fn&& critical) {
  if (fixed) {
    MutexLock lock(mu);
    critical();
  } else {
    critical();
  }
}

void RunDepth2(RunEnv& env, bool fixed) {
  Atomic<int> phase(0, "phase");
  Mutex mu("publish_mu");
  Thread writer("writer", [&]() {
    Work(kWriterWorkSteps);
    Critical(fixed, mu, [&]() {
      phase.Store(1);
      Yield();
      phase.Store(2);
    });
  });
  Thread reader("reader", [&]() {
    Work(kReaderWorkSteps);
    int seen = 0;
    Critical(fixed, mu, [&]() { seen = phase.Load(); });
    if (seen == 1) env.Fail("reader saw a half-initialised value (phase 1)");
  });
  writer.Join();
  reader.Join();
}

void RunDepth3(RunEnv& env, bool fixed) {
  Atomic<bool> claimed(false, "claimed");
  Atomic<bool> taken_over(false, "taken_over");
  Mutex mu("claim_mu");
  Thread owner("owner", [&]() {
    Critical(fixed, mu, [&]() {
      claimed.Store(true);
      Yield();
      if (taken_over.Load()) env.Fail("owner and helper both hold the claim");
      claimed.Store(false);
    });
  });
  Thread helper("helper", [&]() {
    Work(kHelperWorkSteps);
    Critical(fixed, mu, [&]() {
      if (claimed.Load()) {
        taken_over.Store(true);
        Yield();
        taken_over.Store(false);
      }
    });
  });
  owner.Join();
  helper.Join();
}

}  // namespace

absl::Status RegisterOrderViolations(ProgramRegistry& registry) {
  const Program programs[] = {
      {.name = "demo.order_violation_d2",
       .description = "a reader looks between a writer's two publishing steps (depth 2)",
       .bug_expected = true,
       .steps_hint = 25,
       .body = [](RunEnv& env) { RunDepth2(env, /*fixed=*/false); }},
      {.name = "demo.order_violation_d2_fixed",
       .description = "the same publish and read under one mutex: never half-initialised",
       .steps_hint = 30,
       .body = [](RunEnv& env) { RunDepth2(env, /*fixed=*/true); }},
      {.name = "demo.order_violation_d3",
       .description = "a claim handshake broken only by three ordered steps (depth 3)",
       .bug_expected = true,
       .steps_hint = 50,
       .body = [](RunEnv& env) { RunDepth3(env, /*fixed=*/false); }},
      {.name = "demo.order_violation_d3_fixed",
       .description = "the same handshake with each side's steps under one mutex",
       .steps_hint = 55,
       .body = [](RunEnv& env) { RunDepth3(env, /*fixed=*/true); }},
  };
  for (const Program& p : programs) {
    if (absl::Status s = registry.Add(p); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace restoresim::sim
