#include "core/runtime/state_directory.h"

namespace restoresim {

uint64_t StateDirectory::NewToken() {
  MutexLock lock(mu_);
  return next_token_++;
}

bool StateDirectory::TryLock(const std::string& task_dir, uint64_t token) {
  MutexLock lock(mu_);
  auto [it, inserted] = locks_.emplace(task_dir, token);
  return inserted || it->second == token;
}

void StateDirectory::Unlock(const std::string& task_dir, uint64_t token) {
  MutexLock lock(mu_);
  auto it = locks_.find(task_dir);
  if (it != locks_.end() && it->second == token) locks_.erase(it);
}

uint64_t StateDirectory::Holder(const std::string& task_dir) const {
  MutexLock lock(mu_);
  auto it = locks_.find(task_dir);
  return it == locks_.end() ? 0 : it->second;
}

}  // namespace restoresim
