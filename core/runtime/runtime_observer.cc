#include "core/runtime/runtime_observer.h"

namespace restoresim {
namespace {
thread_local RuntimeObserver* current_observer = nullptr;
}  // namespace

std::string_view TaskHolderName(TaskHolder holder) {
  switch (holder) {
    case TaskHolder::kStreamThread: return "stream thread";
    case TaskHolder::kToRestore: return "queue to the restore thread";
    case TaskHolder::kRestoreThread: return "restore thread";
    case TaskHolder::kFromRestore: return "queue from the restore thread";
  }
  return "?";
}

RuntimeObserver* CurrentObserver() { return current_observer; }

ScopedObserver::ScopedObserver(RuntimeObserver* observer) : previous_(current_observer) {
  current_observer = observer;
}

ScopedObserver::~ScopedObserver() { current_observer = previous_; }

}  // namespace restoresim
