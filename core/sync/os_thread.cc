// The OS-thread adapter: the one place in core/ that touches std::thread.
#include <pthread.h>

#include <thread>

#include "core/sync/thread.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

namespace {
thread_local std::string os_thread_name;
}  // namespace

struct Thread::OsThread {
  std::thread thread;
};

std::string OsThreadName(std::string_view name) {
  constexpr size_t kOsNameMax = 15;  // the kernel's limit, without the terminating zero
  if (name.size() <= kOsNameMax) return std::string(name);
  std::string shorter(name);
  constexpr std::string_view kLong = "StreamThread";
  for (size_t at = shorter.find(kLong); at != std::string::npos; at = shorter.find(kLong, at)) {
    shorter.replace(at, kLong.size(), "ST");
  }
  if (shorter.size() > kOsNameMax) shorter.erase(0, shorter.size() - kOsNameMax);
  RS_CHECK_LE(shorter.size(), kOsNameMax);
  return shorter;
}

Thread::Thread(std::string name, std::function<void()> body) : name_(std::move(name)) {
  if (SimHooks* sim = CurrentSim()) {
    sim_thread_ = sim->Spawn(name_, std::move(body));
    return;
  }
  os_thread_ = std::make_unique<OsThread>();
  // The one place where a thread of core/ inherits the run context (core/util/run_context.h):
  // the run's observer and mutations reach every OS thread the runtime starts.
  const RunContext inherited = InheritedByNewOsThread(CurrentRunContext());
  os_thread_->thread = std::thread([name = name_, body = std::move(body), inherited]() {
    pthread_setname_np(pthread_self(), OsThreadName(name).c_str());
    os_thread_name = name;
    const RunContext& fresh = CurrentRunContext();
    RS_CHECK(fresh.sim == nullptr && fresh.observer == nullptr && fresh.mutations.empty(),
             "OS thread '{}' started with a run context of its own", name);
    ScopedRunContext context(inherited);
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
