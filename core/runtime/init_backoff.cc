#include "core/runtime/init_backoff.h"

#include <algorithm>

#include "core/sync/thread.h"
#include "core/util/check.h"

namespace restoresim {

InitBackoff::InitBackoff(Clock* clock, TimeNs init_backoff_ns, TimeNs init_backoff_ns_max)
    : clock_(clock), init_backoff_ns_(init_backoff_ns), init_backoff_ns_max_(init_backoff_ns_max) {
  RS_CHECK(init_backoff_ns_ > 0 && init_backoff_ns_ <= init_backoff_ns_max_,
           "initialisation backoff {} ns, at most {} ns", init_backoff_ns_, init_backoff_ns_max_);
}

bool InitBackoff::BackingOff(TaskId id) const {
  auto it = backoffs_.find(id);
  if (it == backoffs_.end() || clock_ == nullptr) return false;
  return clock_->NowNs() < it->second.next_attempt_ns;
}

void InitBackoff::NoteLocked(TaskId id) {
  if (clock_ == nullptr) return;
  Backoff& b = backoffs_[id];
  b.backoff_ns =
      b.backoff_ns == 0 ? init_backoff_ns_ : std::min(2 * b.backoff_ns, init_backoff_ns_max_);
  RS_CHECK(b.backoff_ns > 0 && b.backoff_ns <= init_backoff_ns_max_,
           "task {}: initialisation backoff {} ns out of range", id.ToString(), b.backoff_ns);
  b.next_attempt_ns = DeadlineAfter(clock_->NowNs(), b.backoff_ns);
  if (b.backoff_ns == init_backoff_ns_max_) {
    TraceMark("cover", "initialisation backoff at its cap");
  }
}

}  // namespace restoresim
