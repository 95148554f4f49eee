// The fake checkpoint notifier: CRaC-style checkpoint and restore notifications for Runtimes
// under the simulator, at moments the seed chooses. Nothing here can image a process (the
// machine refuses CRIU), so the notifications are the test: the runtime must survive being
// frozen, the world moving on, and being restored — maybe twice, maybe as two clones.
//
// Fault model (every draw through env.Choose, 0 the quiet answer, so the shrinker can reduce
// a failing run to the one change that matters):
//   when       the checkpoint comes after `delay_ms` 1 ms scheduling points of the notifier's
//              own thread; a delay drawn as 0 means no notification at all in that cycle
//   how long   virtual time jumps by the freeze: 1 s, 1 min, 1 h or 1 day, plus up to 1 s
//   the broker while frozen: input appended to every partition; the last record of each
//              changelog re-appended (its end moves on, its fold does not); retention
//              truncating every changelog as far as is harmless (below the frozen instance's
//              checkpoints: its positions fall out of range)
// A notification whose checkpoint is abandoned (a resource failed) has no freeze.
//
// Thread-safety: the program's simulated threads; Run on the notifier's own thread.
#ifndef RESTORESIM_SCENARIOS_CRAC_NOTIFIER_H_
#define RESTORESIM_SCENARIOS_CRAC_NOTIFIER_H_

#include <functional>
#include <string>
#include <vector>

#include "core/runtime/runtime.h"
#include "scenarios/runtime_world.h"
#include "sim/program.h"

namespace restoresim::scenarios {

struct FreezePlan {
  TimeNs delay_ns = 0;     // before the checkpoint; 0: no notification
  TimeNs frozen_ns = 0;    // the jump of virtual time while frozen
  int input_records = 0;   // appended to every input partition while frozen
  int changelog_reappends = 0;  // last record of every changelog appended again
  bool truncate = false;   // retention below the checkpoints, as far as harmless

  // `broker_changes` false draws no change (a freeze of the same world: the differential).
  static FreezePlan Draw(sim::RunEnv& env, TimeNs delay_ms_max, bool broker_changes);
  std::string ToString() const;
};

// Checkpoints `runtime`, and if it froze: jumps time, changes the broker, restores. `between`
// (may be empty) runs while frozen, after the broker changes (a clone is made there).
// Returns the checkpoint's status (OK: a full cycle; ABORTED: abandoned, nothing frozen).
absl::Status FreezeAndRestore(testing::RuntimeWorld& w, Runtime& runtime, int32_t partitions,
                              const FreezePlan& plan,
                              const std::function<void()>& between = nullptr);

// Counts of the cycles a notifier ran.
struct NotifierReport {
  int notified = 0;   // checkpoints issued
  int frozen = 0;     // ... that froze the instance and were restored
  int abandoned = 0;  // ... that a resource refused
};

// Runs `plans` one after the other on a simulated thread of its own ("crac-notifier").
class Notifier {
 public:
  Notifier(testing::RuntimeWorld& w, Runtime& runtime, int32_t partitions,
           std::vector<FreezePlan> plans);
  ~Notifier();
  // Waits for the notifier's last cycle.
  NotifierReport Join();

 private:
  void Run();

  testing::RuntimeWorld& w_;
  Runtime& runtime_;
  const int32_t partitions_;
  const std::vector<FreezePlan> plans_;
  NotifierReport report_;
  std::unique_ptr<Thread> thread_;
};

// Copies every file under `from` to `to` (a state directory into a clone's).
void CopyTree(FileSystem& fs, const std::string& from, const std::string& to);

}  // namespace restoresim::scenarios

#endif  // RESTORESIM_SCENARIOS_CRAC_NOTIFIER_H_
