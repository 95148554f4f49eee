#include "core/util/sim_hooks.h"

namespace restoresim {
SimNoAbortScope::SimNoAbortScope() : sim_(CurrentSim()) {
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
