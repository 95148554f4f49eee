// The key-value store interface behind every state store of a task. Implementations: LogStore
// (an in-memory map made durable through the file-system port: the fast default under the
// simulator, where its files live in the crash-model file system) and RocksDbStore (real runs).
//
// Durability contract, the one Kafka Streams relies on: writes become durable only at Flush().
// A crash loses everything written after the last successful Flush (RocksDB with its WAL off
// behaves the same), so a checkpoint may only name changelog offsets whose records were written
// before the last successful Flush.
//
// Restoration (the changelog reader, on the restore thread): BeginRestore, then RestoreBatch for
// each batch of records in changelog order, then EndRestore once the changelog completed. A
// store may buffer restored writes (RocksDbStore's bulk path does), but buffered writes behave
// like any other write: every read, Put, Delete, Flush and Close applies them first. So a
// restoration that stops early (suspended, corrupted) needs no EndRestore, and a checkpoint
// taken after a Flush never names a record that is not in the store.
//
// Thread-safety: a store is used by one thread at a time (its task's owner: the stream thread
// while processing, the restore thread while restoring); handing it over is the caller's job.
#ifndef RESTORESIM_CORE_STATE_KEY_VALUE_STORE_H_
#define RESTORESIM_CORE_STATE_KEY_VALUE_STORE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace restoresim {

// One write: a put, or a delete when value is nullopt (a changelog tombstone).
struct KeyValueWrite {
  std::string key;
  std::optional<std::string> value;
};

class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;

  virtual const std::string& name() const = 0;
  [[nodiscard]] virtual absl::Status Put(std::string_view key, std::string_view value) = 0;
  [[nodiscard]] virtual absl::Status Delete(std::string_view key) = 0;
  virtual absl::StatusOr<std::optional<std::string>> Get(std::string_view key) = 0;
  // Applies writes in order as one batch (restoration).
  [[nodiscard]] virtual absl::Status ApplyBatch(const std::vector<KeyValueWrite>& writes) = 0;
  // A restoration of about `records_expected` records (its end offset less its start) begins.
  virtual void BeginRestore(int64_t records_expected) { (void)records_expected; }
  // One batch of restored records, in changelog order. All or nothing: when it fails, none of
  // `writes` was taken (earlier batches stay), so the caller may give the batch again.
  [[nodiscard]] virtual absl::Status RestoreBatch(std::vector<KeyValueWrite> writes) {
    return ApplyBatch(writes);
  }
  // The restoration completed: every restored record is in the store when this returns OK.
  [[nodiscard]] virtual absl::Status EndRestore() { return absl::OkStatus(); }
  // Makes every earlier write durable.
  [[nodiscard]] virtual absl::Status Flush() = 0;
  // Kafka 4.3's StateStore.commit (KIP-1035): a Flush that also records, atomically with the
  // data it makes durable, the changelog offset the store's contents reach (the next offset to
  // restore). The default, for a store that cannot record one, is a plain Flush.
  [[nodiscard]] virtual absl::Status Commit(int64_t changelog_offset) {
    (void)changelog_offset;
    return Flush();
  }
  // The offset the last durable Commit recorded (StateStore.committedOffset): read back at
  // open, so that a store older than the checkpoint that names it (a stale copy of its
  // directory, a lost directory update, an earlier database version) tells. A new store
  // reaches 0; nullopt: unknown (a store written before stores recorded offsets, not committed
  // since, or a store that cannot record one).
  virtual std::optional<int64_t> CommittedOffset() const { return std::nullopt; }
  // Releases the store. Writes since the last Flush survive a restart of the process but not
  // a crash (nor a dirty close followed by a crash).
  [[nodiscard]] virtual absl::Status Close() = 0;
  // Every entry, sorted by key: for oracles and tests.
  virtual absl::StatusOr<std::map<std::string, std::string>> ReadAll() = 0;
  virtual uint64_t NumEntries() const = 0;
  virtual bool IsOpen() const = 0;
  // True when opening found no store in its directory and made a new, empty one. A checkpoint
  // that names offsets for such a store claims data it does not hold (its directory was lost):
  // the state manager restores it from scratch. LogStore and RocksDbStore tell; stores that
  // cannot say false.
  virtual bool CreatedOnOpen() const { return false; }
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_KEY_VALUE_STORE_H_
