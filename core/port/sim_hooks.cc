#include "core/port/sim_hooks.h"

namespace restoresim {
namespace {
thread_local SimHooks* current_sim = nullptr;
}  // namespace

SimHooks* CurrentSim() { return current_sim; }

ScopedCurrentSim::ScopedCurrentSim(SimHooks* sim) : previous_(current_sim) { current_sim = sim; }
ScopedCurrentSim::~ScopedCurrentSim() { current_sim = previous_; }

SimNoAbortScope::SimNoAbortScope() : sim_(current_sim) {
  if (sim_ != nullptr) sim_->EnterNoAbort();
}
SimNoAbortScope::~SimNoAbortScope() {
  if (sim_ != nullptr) sim_->ExitNoAbort();
}

std::string_view SimObjectKindName(SimObjectKind kind) {
  switch (kind) {
    case SimObjectKind::kMutex: return "mutex";
    case SimObjectKind::kCondVar: return "condvar";
    case SimObjectKind::kAtomic: return "atomic";
    case SimObjectKind::kThread: return "thread";
    case SimObjectKind::kQueue: return "queue";
    case SimObjectKind::kOther: return "object";
  }
  return "object";
}

std::string_view SimOpName(SimOp op) {
  switch (op) {
    case SimOp::kYield: return "yield";
    case SimOp::kMutexLock: return "mutex.lock";
    case SimOp::kMutexUnlock: return "mutex.unlock";
    case SimOp::kCondWait: return "cond.wait";
    case SimOp::kCondNotify: return "cond.notify";
    case SimOp::kAtomic: return "atomic";
    case SimOp::kSpawn: return "thread.spawn";
    case SimOp::kJoin: return "thread.join";
    case SimOp::kSleep: return "sleep";
    case SimOp::kQueue: return "queue";
    case SimOp::kTransport: return "transport";
    case SimOp::kMark: return "mark";
    case SimOp::kCount: break;
  }
  return "?";
}

}  // namespace restoresim
