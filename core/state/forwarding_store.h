// ForwardingStore: a KeyValueStore that forwards every call to the store it wraps. The base of
// wrappers that change one or two calls (the simulator's store faults in scenarios/: a store
// that keeps failing, a store that rots), so that each states only what it changes and a call
// added to the port is forwarded once, here, rather than by hand in every wrapper.
//
// Thread-safety: as the wrapped store.
#ifndef RESTORESIM_CORE_STATE_FORWARDING_STORE_H_
#define RESTORESIM_CORE_STATE_FORWARDING_STORE_H_

#include <memory>
#include <utility>

#include "core/state/key_value_store.h"
#include "core/util/check.h"

namespace restoresim {

class ForwardingStore : public KeyValueStore {
 public:
  explicit ForwardingStore(std::unique_ptr<KeyValueStore> inner) : inner_(std::move(inner)) {
    RS_CHECK(inner_ != nullptr, "a forwarding store without a store to forward to");
  }

  const std::string& name() const override { return inner_->name(); }
  absl::Status Put(std::string_view key, std::string_view value) override {
    return inner_->Put(key, value);
  }
  absl::Status Delete(std::string_view key) override { return inner_->Delete(key); }
  absl::StatusOr<std::optional<std::string>> Get(std::string_view key) override {
    return inner_->Get(key);
  }
  absl::Status ApplyBatch(const std::vector<KeyValueWrite>& writes) override {
    return inner_->ApplyBatch(writes);
  }
  void BeginRestore(int64_t records_expected) override { inner_->BeginRestore(records_expected); }
  absl::Status RestoreBatch(std::vector<KeyValueWrite> writes) override {
    return inner_->RestoreBatch(std::move(writes));
  }
  absl::Status EndRestore() override { return inner_->EndRestore(); }
  absl::Status Flush() override { return inner_->Flush(); }
  absl::Status Commit(int64_t changelog_offset) override {
    return inner_->Commit(changelog_offset);
  }
  std::optional<int64_t> CommittedOffset() const override { return inner_->CommittedOffset(); }
  absl::Status Close() override { return inner_->Close(); }
  absl::StatusOr<std::map<std::string, std::string>> ReadAll() override {
    return inner_->ReadAll();
  }
  uint64_t NumEntries() const override { return inner_->NumEntries(); }
  bool IsOpen() const override { return inner_->IsOpen(); }
  bool CreatedOnOpen() const override { return inner_->CreatedOnOpen(); }

 private:
  std::unique_ptr<KeyValueStore> inner_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_FORWARDING_STORE_H_
