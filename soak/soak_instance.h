// One soak instance: a process that runs the Runtime for real (librdkafka, the system clock,
// POSIX files behind the disk-full switch, RocksDB stores) until told to stop, with the
// invariant oracle judging its events online (an EventRecorder over a StandaloneJudge) and the
// events written to a file (the documented event format: `restoresim check FILE` judges it
// again elsewhere). `restoresim soak` starts these with `restoresim soak-instance`; they are a
// process each so that a fault can SIGKILL one and restart it on its state directory.
//
// Signals, the driver's commands:
//   SIGTERM, SIGINT   close cleanly (Runtime::Close), judge the end of the run, exit
//   SIGUSR1           a checkpoint notification, then restore (Runtime::Checkpoint/Restore)
//   SIGUSR2           pause the topology, or resume it when paused (KIP-834)
//   SIGRTMIN          the disk full, or free again (DiskFullFileSystem)
//
// Every half second it writes its status (JSON, format "restoresim-soak-status" version 1)
// by rename, so the driver never reads half a file. Exit codes: 0 closed cleanly and every
// invariant held; 3 an invariant was violated (the status names it; the events up to the
// violation are flushed); 4 the runtime failed (ERROR, or a close that did not finish); 2 bad
// options or set-up.
//
// Thread-safety: RunSoakInstance runs on the process's main thread, once.
#ifndef RESTORESIM_SOAK_SOAK_INSTANCE_H_
#define RESTORESIM_SOAK_SOAK_INSTANCE_H_

#include <cstdint>
#include <string>

namespace restoresim::soak {

inline constexpr int kInstanceExitOk = 0;
inline constexpr int kInstanceExitSetup = 2;
inline constexpr int kInstanceExitViolation = 3;
inline constexpr int kInstanceExitRuntimeFailed = 4;

struct InstanceOptions {
  std::string bootstrap;
  std::string app_id;
  std::string input_topic;
  std::string state_dir;
  std::string events_path;  // "": no event file
  std::string status_path;
  std::string guarantee = "at_least_once";
  std::string group_protocol = "classic";  // restoresim.group.protocol
  std::string mutation;  // a zoo mutation planted in the runtime ("" none)
  int32_t threads = 2;
  int32_t index = 0;  // names the instance "i<index>" (its threads, its transactional ids)
  int64_t commit_interval_ms = 1000;
};

int RunSoakInstance(const InstanceOptions& options);

}  // namespace restoresim::soak

#endif  // RESTORESIM_SOAK_SOAK_INSTANCE_H_
