// Latent corruption that only a read finds: the store-level fault of the processing path.
// RocksDB opens a database whose table file holds a flipped byte or a zeroed block without
// complaint (open reads only the footer and index of each file) and answers the first Get that
// reaches the damaged block with Corruption (DataLoss here). LogStore reads everything at open,
// so the simulator needs this model to reach the processing path's handling of it.
//
// The fault model: the stores of one task rot at a drawn read, the `at_read`-th Get made through
// any of them (1-based; 0: never). From then on the rot is on disk: every read (Get, ReadAll) of
// a store in a rotten directory answers DataLoss, through the store that found it and through
// every later open of the same directory — until the directory is wiped (a store that opens
// empty, CreatedOnOpen, is healthy). Writes succeed, as RocksDB's do (they touch no old block).
// So a runtime that handles the DataLoss without wiping meets it again at its next read.
//
// Thread-safety: simulated code only (one simulated thread runs at a time).
#ifndef RESTORESIM_SCENARIOS_ROTTING_STORE_H_
#define RESTORESIM_SCENARIOS_ROTTING_STORE_H_

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "core/runtime/state_manager.h"
#include "core/state/forwarding_store.h"
#include "core/util/check.h"
#include "core/util/sim_hooks.h"

namespace restoresim::testing {

class StoreRot {
 public:
  // Store directories containing `needle` ("/0_<p>/": the stores of task 0_p) rot at the
  // `at_read`-th read through any of them; 0: never.
  StoreRot(std::string needle, int64_t at_read) { Arm(std::move(needle), at_read); }

  // From now on, directories containing `needle` rot at the `at_read`-th read (0: never).
  void Arm(std::string needle, int64_t at_read) {
    RS_CHECK(at_read >= 0 && (at_read == 0 || !needle.empty()), "store rot at read {}", at_read);
    needle_ = std::move(needle);
    at_ = at_read;
    reads_ = 0;
  }

  bool rotten(const std::string& dir) const { return rotten_.contains(dir); }
  int64_t rotted() const { return rotted_; }  // how many times a directory rotted
  size_t rotten_count() const { return rotten_.size(); }  // directories rotten now

  // A Get of a store in `dir`: whether it finds rot (and from this read on, `dir` is rotten).
  bool OnRead(const std::string& dir) {
    if (rotten(dir)) return true;
    if (at_ == 0 || reads_ >= at_ || dir.find(needle_) == std::string::npos) return false;
    if (++reads_ != at_) return false;
    rotten_.insert(dir);
    ++rotted_;
    TraceMark("fault", fmt::format("store rot: {} found corrupt at read {}", dir, reads_));
    return true;
  }

  // A store opened in `dir`: one created empty (its directory was wiped) ends the rot there.
  void OnOpen(const std::string& dir, bool created_empty) {
    if (created_empty && rotten_.erase(dir) > 0) {
      TraceMark("cover", "rotten store wiped and opened empty");
    }
  }

  absl::Status Error(const std::string& dir) const {
    return absl::DataLossError(
        fmt::format("store in '{}': block checksum mismatch (injected rot)", dir));
  }

 private:
  std::string needle_;
  int64_t at_ = 0;
  int64_t reads_ = 0;
  int64_t rotted_ = 0;
  std::set<std::string> rotten_;
};

// A store that forwards every call, except reads of a rotten directory (see StoreRot).
class RottingStore final : public ForwardingStore {
 public:
  RottingStore(std::unique_ptr<KeyValueStore> inner, std::string dir, StoreRot& rot)
      : ForwardingStore(std::move(inner)), dir_(std::move(dir)), rot_(rot) {
    rot_.OnOpen(dir_, CreatedOnOpen());
  }

  absl::StatusOr<std::optional<std::string>> Get(std::string_view key) override {
    if (rot_.OnRead(dir_)) return rot_.Error(dir_);
    return ForwardingStore::Get(key);
  }
  absl::StatusOr<std::map<std::string, std::string>> ReadAll() override {
    if (rot_.rotten(dir_)) return rot_.Error(dir_);
    return ForwardingStore::ReadAll();
  }

 private:
  const std::string dir_;
  StoreRot& rot_;
};

// Wraps `inner`'s stores in RottingStores sharing `rot` (which must outlive them).
inline StoreOpener RottingStoreOpener(StoreOpener inner, StoreRot& rot) {
  return [inner = std::move(inner), &rot](
             const std::string& dir,
             const std::string& name) -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
    absl::StatusOr<std::unique_ptr<KeyValueStore>> store = inner(dir, name);
    if (!store.ok()) return store.status();
    return std::unique_ptr<KeyValueStore>(
        std::make_unique<RottingStore>(std::move(*store), dir, rot));
  };
}

}  // namespace restoresim::testing

#endif  // RESTORESIM_SCENARIOS_ROTTING_STORE_H_
