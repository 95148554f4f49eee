#include "core/port/checkpoint_context.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/util/check.h"

namespace restoresim {

std::string_view CheckpointPhaseName(CheckpointPhase phase) {
  switch (phase) {
    case CheckpointPhase::kIdle: return "idle";
    case CheckpointPhase::kCheckpointing: return "checkpointing";
    case CheckpointPhase::kCheckpointed: return "checkpointed";
    case CheckpointPhase::kRestoring: return "restoring";
  }
  return "?";
}

absl::Status CheckpointContext::Register(CheckpointResource* resource) {
  if (resource == nullptr) return absl::InvalidArgumentError("null checkpoint resource");
  MutexLock lock(mu_);
  if (resources_.size() + queued_.size() >= kResourcesMax) {
    return absl::ResourceExhaustedError(
        fmt::format("more than {} checkpoint resources", kResourcesMax));
  }
  if (std::find(resources_.begin(), resources_.end(), resource) != resources_.end()) {
    return absl::AlreadyExistsError(
        fmt::format("checkpoint resource '{}' registered twice", resource->ResourceName()));
  }
  if (phase_ != CheckpointPhase::kIdle) {
    queued_.emplace_back(resource, true);  // takes effect when the cycle ends
    return absl::OkStatus();
  }
  resources_.push_back(resource);
  return absl::OkStatus();
}

void CheckpointContext::Unregister(CheckpointResource* resource) {
  MutexLock lock(mu_);
  if (phase_ != CheckpointPhase::kIdle) {
    queued_.emplace_back(resource, false);
    return;
  }
  resources_.erase(std::remove(resources_.begin(), resources_.end(), resource), resources_.end());
}

absl::Status CheckpointContext::Checkpoint() {
  std::vector<CheckpointResource*> resources;
  {
    MutexLock lock(mu_);
    if (phase_ != CheckpointPhase::kIdle) {
      return absl::FailedPreconditionError(fmt::format(
          "checkpoint requested while the context is {}", CheckpointPhaseName(phase_)));
    }
    phase_ = CheckpointPhase::kCheckpointing;
    resources = resources_;  // the cycle's resources: later registrations wait for its end
  }
  std::vector<Failure> failures;
  std::vector<CheckpointResource*> notified;  // in notification order (reverse registration)
  for (auto it = resources.rbegin(); it != resources.rend(); ++it) {
    notified.push_back(*it);
    if (absl::Status s = (*it)->BeforeCheckpoint(*this); !s.ok()) {
      failures.push_back({(*it)->ResourceName(), std::move(s)});
    }
  }
  RS_CHECK_EQ(notified.size(), resources.size(), "a checkpoint skipped a resource");
  if (failures.empty()) {
    MutexLock lock(mu_);
    RS_CHECK(phase_ == CheckpointPhase::kCheckpointing, "checkpoint phase changed under it");
    phase_ = CheckpointPhase::kCheckpointed;
    return absl::OkStatus();
  }
  // Abandoned: every resource notified is restored at once, in registration order.
  std::reverse(notified.begin(), notified.end());
  const size_t checkpoint_failures = failures.size();
  NotifyRestore(notified, failures);
  EndCycle();
  std::string what = fmt::format("checkpoint abandoned: {} of {} resources failed",
                                 checkpoint_failures, resources.size());
  if (failures.size() > checkpoint_failures) what += " (and restoring them failed too)";
  return Aggregate(absl::StatusCode::kAborted, what, failures);
}

absl::Status CheckpointContext::Restore() {
  std::vector<CheckpointResource*> resources;
  {
    MutexLock lock(mu_);
    if (phase_ != CheckpointPhase::kCheckpointed) {
      return absl::FailedPreconditionError(fmt::format(
          "restore requested while the context is {}", CheckpointPhaseName(phase_)));
    }
    phase_ = CheckpointPhase::kRestoring;
    resources = resources_;
  }
  std::vector<Failure> failures;
  NotifyRestore(resources, failures);
  EndCycle();
  {
    MutexLock lock(mu_);
    ++restores_;
  }
  if (failures.empty()) return absl::OkStatus();
  return Aggregate(absl::StatusCode::kInternal,
                   fmt::format("restore: {} of {} resources failed", failures.size(),
                               resources.size()),
                   failures);
}

void CheckpointContext::NotifyRestore(const std::vector<CheckpointResource*>& resources,
                                      std::vector<Failure>& failures) {
  {
    MutexLock lock(mu_);
    RS_CHECK(phase_ != CheckpointPhase::kIdle, "restore notifications outside a cycle");
    phase_ = CheckpointPhase::kRestoring;
  }
  for (CheckpointResource* r : resources) {
    if (absl::Status s = r->AfterRestore(*this); !s.ok()) {
      failures.push_back({r->ResourceName(), std::move(s)});
    }
  }
}

void CheckpointContext::EndCycle() {
  MutexLock lock(mu_);
  RS_CHECK(phase_ == CheckpointPhase::kRestoring, "a cycle ends while {}",
           CheckpointPhaseName(phase_));
  for (auto& [resource, add] : queued_) {
    auto it = std::find(resources_.begin(), resources_.end(), resource);
    if (add && it == resources_.end()) resources_.push_back(resource);
    if (!add && it != resources_.end()) resources_.erase(it);
  }
  queued_.clear();
  phase_ = CheckpointPhase::kIdle;
}

absl::Status CheckpointContext::Aggregate(absl::StatusCode code, std::string_view what,
                                          const std::vector<Failure>& failures) {
  std::string message(what);
  for (const Failure& f : failures) {
    message += fmt::format("; [{}: {}]", f.resource, f.status.ToString());
  }
  return absl::Status(code, message);
}

CheckpointPhase CheckpointContext::phase() const {
  MutexLock lock(mu_);
  return phase_;
}

size_t CheckpointContext::resource_count() const {
  MutexLock lock(mu_);
  return resources_.size();
}

int64_t CheckpointContext::restores() const {
  MutexLock lock(mu_);
  return restores_;
}

}  // namespace restoresim
