// The OS-thread adapter: the one place in core/ that touches std::thread.
#include <pthread.h>

#include <thread>

#include "core/runtime/mutation.h"
#include "core/runtime/runtime_observer.h"
#include "core/sync/thread.h"
#include "core/util/check.h"

namespace restoresim {

namespace {
thread_local std::string os_thread_name;
}  // namespace

struct Thread::OsThread {
  std::thread thread;
};

Thread::Thread(std::string name, std::function<void()> body) : name_(std::move(name)) {
  if (SimHooks* sim = CurrentSim()) {
    sim_thread_ = sim->Spawn(name_, std::move(body));
    return;
  }
  os_thread_ = std::make_unique<OsThread>();
  // The run's mutations (core/runtime/mutation.h) reach the threads the runtime starts.
  // So does its observer (an event recorder, which is thread-safe).
  const MutationSet mutations = ActiveMutations();
  RuntimeObserver* observer = CurrentObserver();
  os_thread_->thread = std::thread([name = name_, body = std::move(body), mutations, observer]() {
    const std::string short_name = name.substr(0, 15);  // the kernel's limit
    pthread_setname_np(pthread_self(), short_name.c_str());
    os_thread_name = name;
    ScopedMutations scoped(mutations);
    ScopedObserver observing(observer);
    body();
  });
}

Thread::~Thread() {
  if (joined_) return;
  // A simulated thread whose run was aborted is torn down by the simulation itself.
  if (SimHooks* sim = CurrentSim(); sim != nullptr && sim->Aborting()) return;
  RS_CHECK(joined_, "thread '{}' destroyed without Join()", name_);
}

void Thread::Join() {
  RS_CHECK(!joined_, "thread '{}' joined twice", name_);
  joined_ = true;
  if (sim_thread_ != kNoSimThread) {
    SimHooks* sim = CurrentSim();
    RS_CHECK(sim != nullptr, "simulated thread '{}' joined outside its simulation", name_);
    sim->Join(sim_thread_);
    return;
  }
  os_thread_->thread.join();
}

std::string_view CurrentThreadName() {
  if (SimHooks* sim = CurrentSim()) return sim->ThreadName(sim->CurrentThread());
  return os_thread_name;
}

void Yield() {
  if (SimHooks* sim = CurrentSim()) {
    sim->Point(SimOp::kYield, 0);
    return;
  }
  std::this_thread::yield();
}

void TraceMark(std::string_view category, std::string_view name, int64_t arg) {
  if (SimHooks* sim = CurrentSim()) sim->Mark(category, name, arg);
}

}  // namespace restoresim
