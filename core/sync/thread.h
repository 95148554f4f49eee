// Thread: a named thread of the runtime. An OS thread normally; a fiber scheduled by the
// simulator when created inside a simulation. Must be joined before it is destroyed.
//
// Thread-safety: Join() is called by one thread (usually the creator).
#ifndef RESTORESIM_CORE_SYNC_THREAD_H_
#define RESTORESIM_CORE_SYNC_THREAD_H_

#include <functional>
#include <memory>
#include <string>

#include "core/util/sim_hooks.h"

namespace restoresim {

class Thread {
 public:
  // Starts `body` on a new thread called `name`.
  Thread(std::string name, std::function<void()> body);
  ~Thread();
  Thread(const Thread&) = delete;
  Thread& operator=(const Thread&) = delete;

  void Join();
  bool joined() const { return joined_; }
  const std::string& name() const { return name_; }

 private:
  struct OsThread;
  std::string name_;
  bool joined_ = false;
  SimThreadId sim_thread_ = kNoSimThread;
  std::unique_ptr<OsThread> os_thread_;
};

// The calling thread's name: the simulated thread's under the simulator ("<scheduler>" outside
// its threads), the Thread's on an OS thread it started, "" on any other OS thread. Valid
// until the thread ends (simulated: until the next thread is spawned).
std::string_view CurrentThreadName();

// The name the OS shows for a thread named `name` (top, perf, /proc/PID/task/TID/comm): at most
// 15 bytes, the kernel's limit. A longer name keeps its end, where the runtime's names differ
// ("APP-...-StreamThread-1" and its "...-restore"), with "StreamThread" shortened to "ST";
// its beginning would be the application id, the same for every thread of an instance.
std::string OsThreadName(std::string_view name);

// A scheduling point (simulator) or std::this_thread::yield (OS threads).
void Yield();

// Records a trace event in a simulation (a no-op on OS threads): task lifecycle changes,
// restore progress and other runtime events that a timeline should show.
void TraceMark(std::string_view category, std::string_view name, int64_t arg = 0);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_SYNC_THREAD_H_
