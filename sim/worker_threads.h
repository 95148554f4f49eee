// The one way the CLI's commands start worker threads (explore's sweep, shrink's BatchRunner,
// the zoo's searches, bench). std::thread throws std::system_error when the process is out of
// threads (ulimit -u) or of address space for their stacks (ulimit -v); uncaught, that ended a
// command with "terminate called" (issue 25). Here it becomes a status the command reports as
// "could not start worker thread J of N (...); try fewer --jobs" and exits 2 on: an error, not
// fewer workers with a warning, because --jobs is what the user asked for and a sweep or a zoo
// timed on fewer threads than it says would report misleading figures.
//
// Thread-safety: call from the thread that owns the workers; it joins nothing it did not start.
#ifndef RESTORESIM_SIM_WORKER_THREADS_H_
#define RESTORESIM_SIM_WORKER_THREADS_H_

#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace restoresim::sim {

// Starts threads 2..jobs running `body` (the caller is worker 1) and appends them to `started`.
// No thread calls `body` before every one has started: threads that started while memory was
// running out would otherwise fail in their runs (std::bad_alloc, a fiber stack that cannot be
// mapped) before the failed start was reported. When one cannot start, returns
// ResourceExhausted, starts no more, and the threads in `started` return without calling
// `body`; the caller joins them either way.
[[nodiscard]] absl::Status StartWorkerThreads(uint32_t jobs, const std::function<void()>& body,
                                              std::vector<std::thread>& started);

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_WORKER_THREADS_H_
