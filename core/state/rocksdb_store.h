// RocksDbStore: the production key-value store, as Kafka Streams configures RocksDB for state
// stores: the write-ahead log off (the changelog is the log), writes in batches while
// restoring, durability at Flush() (a memtable flush). RocksDB reaches the disk through its own
// Env, not our file-system port, so it serves real runs only; under the simulator LogStore
// stands in with the same durability contract.
//
// Thread-safety: as KeyValueStore: one owner at a time.
#ifndef RESTORESIM_CORE_STATE_ROCKSDB_STORE_H_
#define RESTORESIM_CORE_STATE_ROCKSDB_STORE_H_

#include <memory>
#include <string>

#include "core/state/key_value_store.h"

namespace rocksdb {
class DB;
}

namespace restoresim {

class RocksDbStore final : public KeyValueStore {
 public:
  // Opens (creating if needed) the database in directory `dir`.
  static absl::StatusOr<std::unique_ptr<RocksDbStore>> Open(const std::string& dir,
                                                            std::string name);
  ~RocksDbStore() override;

  const std::string& name() const override { return name_; }
  absl::Status Put(std::string_view key, std::string_view value) override;
  absl::Status Delete(std::string_view key) override;
  absl::StatusOr<std::optional<std::string>> Get(std::string_view key) override;
  absl::Status ApplyBatch(const std::vector<KeyValueWrite>& writes) override;
  absl::Status Flush() override;
  absl::Status Close() override;
  absl::StatusOr<std::map<std::string, std::string>> ReadAll() override;
  uint64_t NumEntries() const override;
  bool IsOpen() const override { return db_ != nullptr; }

 private:
  RocksDbStore(std::unique_ptr<rocksdb::DB> db, std::string name);
  absl::Status CheckOpen() const;

  std::unique_ptr<rocksdb::DB> db_;
  std::string name_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_ROCKSDB_STORE_H_
