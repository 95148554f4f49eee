// A store that keeps failing: forwards every call to the store it wraps, except that while
// `failing(dir)` holds for its task directory, each batch restoration writes to it (and each
// end of a restoration) fails with `error` — the restore thread's task-scoped, persistent store
// error (Kafka's ProcessorStateException during restoration). Processing writes (Put, Delete)
// are not failed: the stories using it are about restoration.
//
// Thread-safety: as the wrapped store; `failing` is called on the thread calling the store.
#ifndef RESTORESIM_SCENARIOS_FAILING_STORE_H_
#define RESTORESIM_SCENARIOS_FAILING_STORE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "core/runtime/state_manager.h"
#include "core/state/forwarding_store.h"

namespace restoresim::testing {

class FailingStore final : public ForwardingStore {
 public:
  FailingStore(std::unique_ptr<KeyValueStore> inner, std::string dir,
               std::function<bool(const std::string&)> failing, absl::Status error)
      : ForwardingStore(std::move(inner)),
        dir_(std::move(dir)),
        failing_(std::move(failing)),
        error_(std::move(error)) {}

  absl::Status RestoreBatch(std::vector<KeyValueWrite> writes) override {
    if (failing_(dir_)) return error_;
    return ForwardingStore::RestoreBatch(std::move(writes));
  }
  absl::Status EndRestore() override {
    if (failing_(dir_)) return error_;
    return ForwardingStore::EndRestore();
  }

 private:
  const std::string dir_;
  std::function<bool(const std::string&)> failing_;
  const absl::Status error_;
};

// The predicate "a store of task 0_<partition>" (store directories are
// "<state dir>/0_<partition>/<store>").
inline std::function<bool(const std::string&)> StoresOfTask(int32_t partition) {
  return [needle = "/0_" + std::to_string(partition) + "/"](const std::string& dir) {
    return dir.find(needle) != std::string::npos;
  };
}

// Wraps `inner`'s stores in FailingStores.
inline StoreOpener FailingStoreOpener(StoreOpener inner,
                                      std::function<bool(const std::string& dir)> failing,
                                      absl::Status error = absl::InternalError(
                                          "injected: the store cannot be written")) {
  return [inner = std::move(inner), failing = std::move(failing), error = std::move(error)](
             const std::string& dir,
             const std::string& name) -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
    absl::StatusOr<std::unique_ptr<KeyValueStore>> store = inner(dir, name);
    if (!store.ok()) return store.status();
    return std::unique_ptr<KeyValueStore>(
        std::make_unique<FailingStore>(std::move(*store), dir, failing, error));
  };
}

}  // namespace restoresim::testing

#endif  // RESTORESIM_SCENARIOS_FAILING_STORE_H_
